/**
 * Who is in the cluster: {@link io.kvtier.cluster.membership.Membership} joins a JGroups channel (control plane
 * only: membership, failure detection, coordinator) and reports every view as a sorted list of
 * {@link io.kvtier.cluster.Member}s, each carrying the node id and weight it advertised. It also carries small
 * control messages between members, such as slot table announcements.
 */
package io.kvtier.cluster.membership;
