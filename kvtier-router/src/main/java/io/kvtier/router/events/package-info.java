/**
 * vLLM's KV-cache events: the payload codec for every layout vLLM's releases used (the ZMQ transport is in
 * {@code io.kvtier.events}).
 */
package io.kvtier.router.events;
