package io.kvtier.cluster.membership;

/**
 * Which peers a node exchanges messages with: a seam for in-JVM fault tests (a partition between nodes of one JVM), on
 * both planes, the control plane's JGroups messages ({@link FilteredLinks}) and the peer RESP calls of a node. Absent
 * ({@code null} in {@link ClusterOptions#links()}) in production; the command line cannot set it. A message to or
 * from a peer the filter refuses is dropped silently, as a cut network drops it: nothing is refused, calls time out.
 */
@FunctionalInterface
public interface LinkFilter {
    /** Whether messages between this node and {@code peerId} get through now (asked for every message). */
    boolean reaches(String peerId);
}
