/**
 * This machine's physical limits, measured in the same run as a benchmark so that each kvtier figure can be shown as
 * a share of what the hardware allows: loopback TCP with one and two streams, sequential disk write with fsync, and
 * random 1 MiB disk reads with O_DIRECT. Entry point: {@link io.kvtier.bench.limits.MachineLimits#measure}.
 */
package io.kvtier.bench.limits;
