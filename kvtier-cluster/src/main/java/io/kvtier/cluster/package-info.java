/**
 * Where keys live in a kvtier cluster: {@link io.kvtier.client.cluster.SlotHash} (in kvtier-client, shared with the
 * cluster-aware client) maps a key to one of Redis Cluster's 16384 slots, and {@link io.kvtier.cluster.Placement} computes from a membership the immutable
 * {@link io.kvtier.cluster.SlotTable} that gives each slot its ordered owners (primary, then backups). Pure
 * functions of their inputs: no networking, no clocks, no threads.
 */
package io.kvtier.cluster;
