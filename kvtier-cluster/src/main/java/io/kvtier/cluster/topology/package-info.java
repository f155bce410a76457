/**
 * Who owns which slot, cluster-wide: {@link io.kvtier.cluster.topology.SlotTableService} has the coordinator publish
 * an epoch-numbered slot table on every view change and every node install only tables newer than its own. Builds on
 * {@code membership} (who is in) and {@code Placement} (who owns what, given who is in).
 */
package io.kvtier.cluster.topology;
