/**
 * vLLM's KV-cache events: the payload codec for every layout vLLM's releases used, and the ZMQ transport (a
 * subscriber that detects sequence gaps and replays them, and a publisher that speaks the same protocol).
 */
package io.kvtier.router.events;
