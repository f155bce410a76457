/**
 * A cluster-aware client: routes each command to its key's primary, as Redis Cluster clients do. Keys map to slots by
 * {@link io.kvtier.client.cluster.SlotHash} (the same CRC16 as Redis and the kvtier server); a
 * {@link io.kvtier.client.cluster.SlotMap} learned from CLUSTER SLOTS is patched by {@code -MOVED}
 * ({@link io.kvtier.client.cluster.ClusterError}); connections are spread over the primaries and reconnected, and the
 * map refreshed, when a node dies or joins. Entry point: {@link io.kvtier.client.cluster.ClusterClient}. Used by the
 * benchmark's {@code --cluster} and its failover scenario.
 */
package io.kvtier.client.cluster;
