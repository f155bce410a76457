/**
 * The workloads: {@code setget} (SET pass then GET pass per value size), {@code lmcache} (LMCache's Redis
 * connector serving multi-round chats) and {@code overflow} (a working set larger than the server's memory), plus
 * the generic warm-up. Each turns its parameters into phases of tasks for the load generator.
 */
package io.kvtier.bench.workload;
