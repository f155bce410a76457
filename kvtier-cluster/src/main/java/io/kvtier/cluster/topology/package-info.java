/**
 * Who owns which slot, cluster-wide: the configuration (active members, epoch, and so the slot table) is a Raft state
 * machine ({@link io.kvtier.cluster.topology.ConfigStateMachine}) that {@link io.kvtier.cluster.topology.ConfigService}
 * follows, with this node's lease. Builds on {@code membership} (the JGroups channel) and {@code Placement} (who owns
 * what, given who is in).
 */
package io.kvtier.cluster.topology;
