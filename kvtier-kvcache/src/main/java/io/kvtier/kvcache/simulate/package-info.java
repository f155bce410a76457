/**
 * The hit-rate simulator behind {@code kvtier simulate}: replays a multi-round chat trace (or a trace that names its
 * blocks, Mooncake's) through LMCache's chunking and the store's real S3-FIFO policy with a model of its disk log,
 * for a sweep of memory and disk budgets, without sockets or real bytes. Entry point:
 * {@link io.kvtier.kvcache.simulate.Sweep}.
 */
package io.kvtier.kvcache.simulate;
