package io.kvtier.server.config;

import io.kvtier.store.StoreOptions;
import io.kvtier.store.disk.RegionFiles;
import java.io.IOException;
import java.lang.management.ManagementFactory;

/**
 * How many clients the process's open-file limit leaves room for, as Redis's {@code adjustOpenFilesLimit} decides it:
 * every client costs one descriptor, and the descriptors the node needs for itself are set aside first, so that a
 * client beyond the limit is answered {@code -ERR max number of clients reached} instead of hanging in the accept
 * queue. Immutable.
 *
 * <p>Set aside: the descriptors open when the listeners are about to be bound (the JVM, the event loops, the LOCK
 * file, the region files recovery opened), the region files the disk budget may still add (every region holds at
 * least a region's bytes or, written directly, more than half the memory budget: {@code TieringRules.bypassesMemory}),
 * the listeners, the metrics endpoint's listener and connections, a cluster's peer connections, and Redis's 32 for
 * everything else (logs, values being streamed to a file of their own, connections being refused).
 *
 * @param fdLimit   the soft RLIMIT_NOFILE (the JVM raises it to the hard limit at start), or -1 if unknown
 * @param reserved  descriptors set aside for the node itself
 * @param configured {@code --max-clients}
 * @param effective  the clients admitted: {@code min(configured, fdLimit - reserved)}
 */
public record ClientLimit(long fdLimit, long reserved, int configured, int effective) {
    /** Redis's CONFIG_MIN_RESERVED_FDS: logs, files opened on the way, connections being refused. */
    static final int MIN_RESERVED = 32;
    /** A cluster node's peer connections: pooled connections and gossip to each member, with room to spare. */
    static final int CLUSTER_RESERVED = 128;

    /**
     * The limit for a node configured with {@code options} whose store in {@code options.dir()} is open, with
     * {@code listeners} RESP listeners and, if {@code metricsConnections > 0}, a metrics endpoint still to bind.
     *
     * @throws IOException if the limit leaves no room for a single client
     */
    public static ClientLimit compute(ServerOptions options, int listeners, int metricsConnections) throws IOException {
        long limit = -1;
        long open = 0;
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean os) {
            limit = os.getMaxFileDescriptorCount();
            open = os.getOpenFileDescriptorCount();
        }
        long metrics = metricsConnections > 0 ? 1 + metricsConnections : 0;
        long cluster = options.cluster() != null ? CLUSTER_RESERVED : 0;
        long reserved = open + regionsToCome(options) + listeners + metrics + cluster + MIN_RESERVED;
        return of(limit, reserved, options.maxClients());
    }

    /** The limit for a process allowed {@code fdLimit} descriptors (-1: unknown) that keeps {@code reserved}. */
    static ClientLimit of(long fdLimit, long reserved, int configured) throws IOException {
        if (fdLimit < 0) {
            return new ClientLimit(fdLimit, reserved, configured, configured);
        }
        long room = fdLimit - reserved;
        if (room < 1) {
            throw new IOException("the open-file limit " + fdLimit + " leaves no room for clients: kvtier keeps "
                    + reserved + " descriptors for itself; raise it with ulimit -n (at least " + (reserved + 1)
                    + ", or " + (reserved + configured) + " for --max-clients " + configured + ")");
        }
        return new ClientLimit(fdLimit, reserved, configured, (int) Math.min(configured, room));
    }

    /** Whether the open-file limit lowered {@code --max-clients}. */
    public boolean reduced() {
        return effective < configured;
    }

    /** Region files the disk budget may add to those open now (at least the active one and one being sealed). */
    static long regionsToCome(ServerOptions options) throws IOException {
        StoreOptions store = options.storeOptions();
        long smallest = Math.max(1, Math.min(store.regionBytes(), options.memoryBytes() / 2));
        long most = options.diskBytes() / smallest + 2L * store.diskDirs().size();
        long open = 0;
        for (java.nio.file.Path dir : store.diskDirs()) {
            open += RegionFiles.count(dir);
        }
        return Math.max(2, most - open);
    }
}
