/**
 * {@code kvtier bench}: the command line. {@link io.kvtier.bench.BenchCommand} and its subcommands parse flags into
 * the options of a single run ({@code io.kvtier.bench.run}), a side-by-side comparison ({@code bench.compare}) or a
 * cluster scenario ({@code bench.cluster}) and start it. Packages depend one way: commands on runs, {@code cluster} on
 * {@code compare} (its server processes), both on {@code run}; nothing depends back on the commands.
 */
package io.kvtier.bench;
