/**
 * A node's part in a cluster: slot tables installed (ClusterNode), per-slot ownership state (SlotState), state transfer
 * into the node (Importer) and replication to backups (Replicator), with the figures operators watch (replication lag,
 * rebalancing progress). The server's commands route through it; it reads values from disk through DiskValueReader,
 * which the server implements.
 */
package io.kvtier.cluster.node;
