/**
 * The KV-cache-aware router: an OpenAI-compatible proxy that orders the healthy engines for each request by policy
 * (round-robin, least-load, prefix from the KV-cache map, approx-prefix from its own bookkeeping, llm-d's and Dynamo's
 * scoring as llmd and dynamo, kvtier's cost), with failover
 * before the first byte and a deadline on every request.
 */
package io.kvtier.router.proxy;
