package io.kvtier.server.config;

import io.kvtier.cluster.node.ClusterSettings;
import io.kvtier.store.IndexBudget;
import io.kvtier.store.StoreOptions;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.List;

/**
 * Everything a node is configured with, validated on construction; the CLI and the config file both map onto this
 * one record, and error messages name the flag, the value and the limit.
 */
public record ServerOptions(
        String bind,
        int port,
        Path dir,
        long memoryBytes,
        long diskBytes,
        long maxValueBytes,
        String requirePass,
        boolean protectedMode,
        int metricsPort,
        int maxClients,
        int diskThreads,
        int ioThreads,
        long diskReadBufferBytes,
        double pinShare,
        long indexBytes,
        ClusterSettings cluster,
        ClientLimits clientLimits,
        TlsSettings tls,
        int kvEventsPort,
        List<Path> moreDiskDirs,
        long diskWriteLimit,
        boolean sharedMemory) {

    public static final String DEFAULT_BIND = "127.0.0.1";
    public static final int DEFAULT_PORT = 6379;
    public static final long DEFAULT_MEMORY = 1L << 30;
    public static final long DEFAULT_DISK = 8L << 30;
    public static final long DEFAULT_MAX_VALUE = 512L << 20;
    public static final int DEFAULT_MAX_CLIENTS = 10_000;
    public static final int DEFAULT_DISK_THREADS = 4;
    /**
     * Half the cores, at least one. On the 2-core benchmark machine one event loop served 1 MiB GETs at 4.2-4.5 GB/s
     * against 2.5-2.8 GB/s with two and 1.8 GB/s with four (Netty's default): a kvtier node shares its cores with
     * the clients and inference engines of the same server, and a loop per core competes with them for the CPU
     * that the kernel's socket copies need (BENCHMARKS.md, "Event-loop threads").
     */
    public static final int DEFAULT_IO_THREADS = Math.max(1, Runtime.getRuntime().availableProcessors() / 2);
    public static final long DEFAULT_DISK_READ_BUFFER = 256L << 20;
    /** Share of the memory budget pinned keys (KVC.PIN) may hold: room for system prompts, not the whole tier. */
    public static final double DEFAULT_PIN_SHARE = 0.25;
    /**
     * Heap besides the key index: request decoding, connections, replication and the JVM's own (the whole heap was
     * 1 GiB before the index had a budget, issue 10).
     */
    public static final long HEAP_HEADROOM = 768L << 20;

    /** {@code indexBytes} 0 means the default for the memory and disk budgets ({@link IndexBudget#defaultBytes}). */
    public ServerOptions {
        if (indexBytes == 0) {
            indexBytes = IndexBudget.defaultBytes(memoryBytes, diskBytes);
        }
        if (indexBytes < IndexBudget.MIN_BYTES) {
            throw new IllegalArgumentException("--index-memory " + indexBytes + " is below the minimum "
                    + IndexBudget.MIN_BYTES + " (1 MiB)");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("--port " + port + " is outside 0..65535");
        }
        if (tls != null && tls.cluster() && cluster == null) {
            throw new IllegalArgumentException("--tls-cluster yes needs --seeds or --dns-query (cluster mode)");
        }
        if (tls != null && port == 0 && cluster != null && !tls.cluster()) {
            throw new IllegalArgumentException("--port 0 (TLS only) in a cluster needs --tls-cluster yes: peers "
                    + "reach a node at its announced port, which is then the TLS port");
        }
        if (metricsPort < 0 || metricsPort > 65535) {
            throw new IllegalArgumentException("--metrics-port " + metricsPort + " is outside 0..65535 (0 = off)");
        }
        if (kvEventsPort < 0 || kvEventsPort > 65534) {
            throw new IllegalArgumentException("--kv-events " + kvEventsPort + " is outside 1..65534 (0 = off; the "
                    + "replay and snapshot socket takes the port above)");
        }
        if (maxClients < 1) {
            throw new IllegalArgumentException("--max-clients " + maxClients + " must be at least 1");
        }
        if (diskThreads < 1 || diskThreads > 256) {
            throw new IllegalArgumentException("--disk-threads " + diskThreads + " is outside 1..256");
        }
        if (ioThreads < 1 || ioThreads > 1024) {
            throw new IllegalArgumentException("--io-threads " + ioThreads + " is outside 1..1024");
        }
        if (diskReadBufferBytes < (1 << 20)) {
            throw new IllegalArgumentException("disk read buffer " + diskReadBufferBytes + " is below 1 MiB");
        }
        if (!(pinShare >= 0 && pinShare <= 0.5)) {
            throw new IllegalArgumentException("--pin-share " + pinShare + " is outside 0..0.5 (a share of --memory;"
                    + " values over half of it bypass memory)");
        }
        if (memoryBytes < StoreOptions.MIN_MEMORY) {
            throw new IllegalArgumentException("--memory " + memoryBytes + " is below the minimum "
                    + StoreOptions.MIN_MEMORY + " (1 MiB)");
        }
        if (diskBytes < StoreOptions.MIN_DISK) {
            throw new IllegalArgumentException("--disk " + diskBytes + " is below the minimum " + StoreOptions.MIN_DISK
                    + " (16 MiB)");
        }
        if (maxValueBytes < 1 || maxValueBytes > StoreOptions.MAX_VALUE) {
            throw new IllegalArgumentException("--max-value " + maxValueBytes + " is outside 1.." + StoreOptions.MAX_VALUE);
        }
        if (clientLimits == null) {
            clientLimits = ClientLimits.defaults();
        }
        if (requirePass != null && requirePass.isEmpty()) {
            requirePass = null;
        }
        if (protectedMode && requirePass == null && !isLoopback(bind)) {
            throw new IllegalArgumentException("refusing to listen on " + bind + " without a password: set "
                    + "--requirepass, bind 127.0.0.1, or pass --protected-mode no if the network is trusted");
        }
        moreDiskDirs = List.copyOf(moreDiskDirs == null ? List.of() : moreDiskDirs);
        if (diskWriteLimit < 0) {
            throw new IllegalArgumentException("--disk-write-limit " + diskWriteLimit + " must be 0 (none) or a size "
                    + "per second");
        }
        storeOptions(dir, memoryBytes, diskBytes, maxValueBytes, pinShare, indexBytes, moreDiskDirs, diskWriteLimit,
                sharedMemory);
    }

    /** Options whose disk tier is the data directory alone. */
    public ServerOptions(String bind, int port, Path dir, long memoryBytes, long diskBytes, long maxValueBytes,
                         String requirePass, boolean protectedMode, int metricsPort, int maxClients, int diskThreads,
                         int ioThreads, long diskReadBufferBytes, double pinShare, long indexBytes,
                         ClusterSettings cluster, ClientLimits clientLimits, TlsSettings tls, int kvEventsPort) {
        this(bind, port, dir, memoryBytes, diskBytes, maxValueBytes, requirePass, protectedMode, metricsPort,
                maxClients, diskThreads, ioThreads, diskReadBufferBytes, pinShare, indexBytes, cluster, clientLimits,
                tls, kvEventsPort, List.of(), 0, false);
    }

    private static StoreOptions storeOptions(Path dir, long memory, long disk, long maxValue, double pinShare,
                                             long index, List<Path> moreDiskDirs, long diskWriteLimit,
                                             boolean sharedMemory) {
        return new StoreOptions(dir, memory, disk, maxValue, 30_000, (long) (memory * pinShare), index,
                moreDiskDirs, diskWriteLimit, sharedMemory);
    }

    public StoreOptions storeOptions() {
        return storeOptions(dir, memoryBytes, diskBytes, maxValueBytes, pinShare, indexBytes, moreDiskDirs,
                diskWriteLimit, sharedMemory);
    }

    /** These options with demotion writes capped at {@code bytesPerSecond} (--disk-write-limit; 0: no cap). */
    public ServerOptions withDiskWriteLimit(long bytesPerSecond) {
        return new ServerOptions(bind, port, dir, memoryBytes, diskBytes, maxValueBytes, requirePass, protectedMode,
                metricsPort, maxClients, diskThreads, ioThreads, diskReadBufferBytes, pinShare, indexBytes, cluster,
                clientLimits, tls, kvEventsPort, moreDiskDirs, bytesPerSecond, sharedMemory);
    }

    /** These options with the memory tier in shared memory for clients on the same host (--shm; KVC.SHM). */
    public ServerOptions withSharedMemory(boolean shared) {
        return new ServerOptions(bind, port, dir, memoryBytes, diskBytes, maxValueBytes, requirePass, protectedMode,
                metricsPort, maxClients, diskThreads, ioThreads, diskReadBufferBytes, pinShare, indexBytes, cluster,
                clientLimits, tls, kvEventsPort, moreDiskDirs, diskWriteLimit, shared);
    }

    /** These options with the disk tier also in {@code dirs} (--disk-dir), one per drive. */
    public ServerOptions withMoreDiskDirs(List<Path> dirs) {
        return new ServerOptions(bind, port, dir, memoryBytes, diskBytes, maxValueBytes, requirePass, protectedMode,
                metricsPort, maxClients, diskThreads, ioThreads, diskReadBufferBytes, pinShare, indexBytes, cluster,
                clientLimits, tls, kvEventsPort, dirs, diskWriteLimit, sharedMemory);
    }

    /**
     * The JVM heap (-Xmx) this configuration needs, which the launcher sets: the index budget, a quarter more for
     * recovery's peak and the garbage collector's room, and {@link #HEAP_HEADROOM} for everything else.
     */
    public long heapBytes() {
        return HEAP_HEADROOM + indexBytes + indexBytes / 4;
    }

    static boolean isLoopback(String bind) {
        try {
            for (String host : bind.trim().split("\\s+")) {
                if (!InetAddress.getByName(host).isLoopbackAddress()) {
                    return false;
                }
            }
            return true;
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("--bind " + bind + " is not a resolvable address");
        }
    }

    /** Defaults: 127.0.0.1:6379, ./kvtier-data, 1 GiB memory, 8 GiB disk, 512 MiB values, no password. */
    public static ServerOptions defaults() {
        return new ServerOptions(DEFAULT_BIND, DEFAULT_PORT, Path.of("kvtier-data"), DEFAULT_MEMORY, DEFAULT_DISK,
                DEFAULT_MAX_VALUE, null, true, 0, DEFAULT_MAX_CLIENTS, DEFAULT_DISK_THREADS, DEFAULT_IO_THREADS,
                DEFAULT_DISK_READ_BUFFER, DEFAULT_PIN_SHARE, 0, null, ClientLimits.defaults(), null, 0);
    }

    /** These options as a member of a cluster ({@code null}: a single-node store). */
    public ServerOptions withCluster(ClusterSettings settings) {
        return new ServerOptions(bind, port, dir, memoryBytes, diskBytes, maxValueBytes, requirePass, protectedMode,
                metricsPort, maxClients, diskThreads, ioThreads, diskReadBufferBytes, pinShare, indexBytes, settings,
                clientLimits, tls, kvEventsPort, moreDiskDirs, diskWriteLimit, sharedMemory);
    }

    /** These options with {@code limits} on what clients may hold and how long they may idle. */
    public ServerOptions withClientLimits(ClientLimits limits) {
        return new ServerOptions(bind, port, dir, memoryBytes, diskBytes, maxValueBytes, requirePass, protectedMode,
                metricsPort, maxClients, diskThreads, ioThreads, diskReadBufferBytes, pinShare, indexBytes, cluster,
                limits, tls, kvEventsPort, moreDiskDirs, diskWriteLimit, sharedMemory);
    }

    /**
     * These options with a TLS listener ({@code null}: none). With TLS, {@code --port 0} means no plain listener
     * (TLS only), as in Redis, rather than a free port.
     */
    public ServerOptions withTls(TlsSettings settings) {
        return new ServerOptions(bind, port, dir, memoryBytes, diskBytes, maxValueBytes, requirePass, protectedMode,
                metricsPort, maxClients, diskThreads, ioThreads, diskReadBufferBytes, pinShare, indexBytes, cluster,
                clientLimits, settings, kvEventsPort, moreDiskDirs, diskWriteLimit, sharedMemory);
    }

    /** These options publishing store events on {@code eventsPort} (0: off), replays and snapshots on the one above. */
    public ServerOptions withKvEvents(int eventsPort) {
        return new ServerOptions(bind, port, dir, memoryBytes, diskBytes, maxValueBytes, requirePass, protectedMode,
                metricsPort, maxClients, diskThreads, ioThreads, diskReadBufferBytes, pinShare, indexBytes, cluster,
                clientLimits, tls, eventsPort, moreDiskDirs, diskWriteLimit, sharedMemory);
    }

    /** Whether the node listens for plain (non-TLS) clients: always, unless --port 0 with a TLS port. */
    public boolean plainListener() {
        return tls == null || port != 0;
    }
}
