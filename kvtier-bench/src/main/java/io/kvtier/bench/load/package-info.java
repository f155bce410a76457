/**
 * The load generator: connections, lanes (one request in flight each), the closed-loop and open-loop schedules,
 * payloads and their verification, and per-operation statistics. Knows RESP commands, not workloads.
 */
package io.kvtier.bench.load;
