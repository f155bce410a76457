/**
 * {@code --cluster}: routes each benchmark command to its key's primary, as Redis Cluster clients do. A
 * {@link io.kvtier.bench.routing.SlotMap} learned from CLUSTER SLOTS and patched by {@code -MOVED}, the {@code -c}
 * connections spread over the primaries, reconnects and map refreshes when a node dies or joins. Entry point:
 * {@link io.kvtier.bench.routing.ClusterEndpoint}.
 */
package io.kvtier.bench.routing;
