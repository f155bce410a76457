/**
 * JMH microbenchmarks of kvtier's hot paths, one class per path: RESP decoding ({@link
 * io.kvtier.jmh.RespDecoderBenchmark}), memory-tier allocation ({@link io.kvtier.jmh.MemoryTierBenchmark}) and index
 * lookups ({@link io.kvtier.jmh.IndexBenchmark}). Each class's Javadoc gives the command that runs it; end-to-end
 * throughput against Redis is {@code kvtier bench}'s job, not this package's.
 */
package io.kvtier.jmh;
