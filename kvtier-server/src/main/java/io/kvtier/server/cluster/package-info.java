/**
 * A node's part in a cluster: per-slot ownership state, state transfer into the node (Importer) and replication to
 * backups (Replicator), with the figures operators watch (replication lag, rebalancing progress).
 */
package io.kvtier.server.cluster;
