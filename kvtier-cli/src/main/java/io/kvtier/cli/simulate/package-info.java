/**
 * {@code kvtier simulate}: flags and trace files (kvtier's chat format, Mooncake's block-hash format) mapped onto the
 * hit-rate simulator of {@code kvtier-kvcache}, and its sweep printed as a table, as JSON and as a chart.
 */
package io.kvtier.cli.simulate;
