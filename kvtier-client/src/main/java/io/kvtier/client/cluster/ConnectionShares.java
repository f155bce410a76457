package io.kvtier.client.cluster;

/**
 * How {@code -c} connections are spread over a cluster, and which connection a lane uses. {@code total} connections
 * over {@code nodes} primaries give each {@code total / nodes}, the first {@code total % nodes} (in host:port order)
 * one more, and every node at least one, so 16 over 3 nodes is 6 + 5 + 5. A node seen later (a join, a MOVED to a
 * new node) gets {@code ceil(total / nodes)} of the then known count. Lane {@code i} sends to connection
 * {@code i mod share} of whichever node owns its key. Pure functions.
 */
public final class ConnectionShares {
    private ConnectionShares() {
    }

    /** The share of the node at position {@code index} (0-based, host:port order) among {@code nodes}. */
    public static int share(int total, int nodes, int index) {
        check(total, nodes);
        if (index < 0 || index >= nodes) {
            throw new IllegalArgumentException("node index " + index + " is outside 0.." + (nodes - 1));
        }
        return Math.max(1, total / nodes + (index < total % nodes ? 1 : 0));
    }

    /** The share of a node that appears while {@code nodes} primaries (itself included) are known. */
    public static int shareOfNewcomer(int total, int nodes) {
        check(total, nodes);
        return Math.max(1, Math.ceilDiv(total, nodes));
    }

    /** Which of a node's {@code poolSize} connections lane {@code lane} uses. */
    public static int connectionFor(int lane, int poolSize) {
        if (poolSize < 1) {
            throw new IllegalArgumentException("a node needs at least one connection, has " + poolSize);
        }
        return Math.floorMod(lane, poolSize);
    }

    private static void check(int total, int nodes) {
        if (total < 1 || nodes < 1) {
            throw new IllegalArgumentException("need at least one connection and one node, got " + total
                    + " connections over " + nodes + " nodes");
        }
    }
}
