/**
 * The storage engine: {@link io.kvtier.store.TieredStore} keeps values in an off-heap memory tier with a hard budget
 * and swaps cold ones to a log-structured disk tier instead of dropping them. Knows nothing of sockets or RESP.
 */
package io.kvtier.store;
