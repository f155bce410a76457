/**
 * What kvtier's command-line tools share, so that {@code kvtier size}, {@code simulate} and {@code cluster status}
 * need nothing from the benchmark: {@link io.kvtier.common.Json} (a small reader and writer for plain trees),
 * {@link io.kvtier.common.Sizes} (parsing {@code 64m}, {@code 512MiB}) and {@link io.kvtier.common.Units}
 * (formatting {@code 1.5 GiB}). Pure functions; no kvtier dependencies.
 */
package io.kvtier.common;
