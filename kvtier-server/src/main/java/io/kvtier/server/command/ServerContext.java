package io.kvtier.server.command;

import io.kvtier.server.config.ClientLimit;
import io.kvtier.server.config.ClientLimits;
import io.kvtier.server.config.ServerOptions;
import io.kvtier.server.fatal.FatalErrorHandler;
import io.kvtier.server.metrics.InstantaneousRates;
import io.kvtier.server.metrics.Metrics;
import io.kvtier.server.value.DiskReads;
import io.kvtier.store.TieredStore;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/** What every connection shares: the store, options, disk-read pool, command table, clients and counters. */
public final class ServerContext {
    private final ServerOptions options;
    private final TieredStore store;
    private final io.kvtier.kvcache.KvCache kvcache;
    private final io.kvtier.server.command.Keyspace keyspace;
    private final DiskReads diskReads;
    private final CommandTable commands;
    private final Metrics metrics;
    private final io.kvtier.server.value.RequestMemory requestMemory;
    private final io.kvtier.server.script.Scripting scripting = new io.kvtier.server.script.Scripting();
    private final FatalErrorHandler fatal = new FatalErrorHandler();
    private final KeyGate keyGate = new KeyGate();
    private final Watches watches;
    private final ConcurrentHashMap<Long, Session> sessions = new ConcurrentHashMap<>();
    private final AtomicLong nextClientId = new AtomicLong();
    private final long startMillis = System.currentTimeMillis();
    public final LongAdder connectionsReceived = new LongAdder();
    public final LongAdder connectionsRejected = new LongAdder();
    public final LongAdder commandsProcessed = new LongAdder();
    public final LongAdder netInputBytes = new LongAdder();
    /** Of netInputBytes, those the socket read straight into values' memory (no copy by kvtier). */
    public final LongAdder netInputLandedBytes = new LongAdder();
    public final LongAdder netOutputBytes = new LongAdder();
    private final InstantaneousRates rates = new InstantaneousRates();
    private final AtomicLong usedMemoryPeak = new AtomicLong();
    private final java.util.concurrent.atomic.AtomicInteger clients = new java.util.concurrent.atomic.AtomicInteger();
    /** {@code --max-clients}, lowered at start if the open-file limit leaves less room (see {@link ClientLimit}). */
    private volatile int maxClients;
    private volatile int boundPort;
    private volatile io.kvtier.cluster.node.ClusterNode cluster;
    private volatile io.kvtier.cluster.node.Replicator replicator;
    private volatile io.kvtier.server.events.StoreEventLog storeEvents;

    public ServerContext(ServerOptions options, TieredStore store, io.kvtier.kvcache.KvCache kvcache,
                         DiskReads diskReads, CommandTable commands, Metrics metrics, Watches watches) {
        this.options = options;
        this.watches = watches;
        this.store = store;
        this.kvcache = kvcache;
        this.keyspace = new io.kvtier.server.command.Keyspace(store, kvcache);
        this.diskReads = diskReads;
        this.commands = commands;
        this.metrics = metrics;
        this.maxClients = options.maxClients();
        this.requestMemory = new io.kvtier.server.value.RequestMemory(options.clientLimits(), options.memoryBytes(),
                options.diskBytes(), options.dir());
        this.sharedLeases = store.sharedMemory() ? new io.kvtier.server.value.SharedLeases(store) : null;
    }

    private final io.kvtier.server.value.SharedLeases sharedLeases;

    /** KVC.SHM's leases (--shm), or null when the memory tier is not shared. */
    public io.kvtier.server.value.SharedLeases sharedLeases() {
        return sharedLeases;
    }

    /** Ends every shared-memory lease: the server is stopping, and the store closes next. */
    public void closeSharedLeases() {
        if (sharedLeases != null) {
            sharedLeases.close();
        }
    }

    private io.kvtier.server.value.Prefetcher prefetcher; // guarded by this; made by the first KVC.PREFETCH
    private boolean prefetcherClosed;                     // guarded by this

    /** KVC.PREFETCH's queue and thread, started by the first use; null once the server stops. */
    public synchronized io.kvtier.server.value.Prefetcher prefetcher() {
        if (prefetcher == null && !prefetcherClosed) {
            prefetcher = new io.kvtier.server.value.Prefetcher(store);
        }
        return prefetcher;
    }

    /** The prefetcher if one was started (INFO), without starting it. */
    public synchronized io.kvtier.server.value.Prefetcher prefetcherIfStarted() {
        return prefetcher;
    }

    /** Stops the prefetcher (its thread reads the store: before the store closes). */
    public void closePrefetcher() throws InterruptedException {
        io.kvtier.server.value.Prefetcher p;
        synchronized (this) {
            prefetcherClosed = true;
            p = prefetcher;
            prefetcher = null;
        }
        if (p != null) {
            p.close();
        }
    }

    /** The clients admitted at once: {@code --max-clients}, or fewer if the open-file limit says so. */
    public int maxClients() {
        return maxClients;
    }

    public void maxClients(int n) {
        this.maxClients = n;
    }

    /** Takes a client slot if one is free (any thread); whoever got one gives it back with {@link #clientLeft}. */
    public boolean admitClient() {
        int n;
        do {
            n = clients.get();
            if (n >= maxClients) {
                return false;
            }
        } while (!clients.compareAndSet(n, n + 1));
        return true;
    }

    public void clientLeft() {
        clients.decrementAndGet();
    }

    /** What the requests in progress of all connections hold, against the bounds of {@link ClientLimits}. */
    public io.kvtier.server.value.RequestMemory requestMemory() {
        return requestMemory;
    }

    /** Isolation of transactions and scripts from other commands on their keys. */
    public KeyGate keyGate() {
        return keyGate;
    }

    /** The script cache, the script threads and the scripts running now. */
    public io.kvtier.server.script.Scripting scripting() {
        return scripting;
    }

    /** WATCH's registry of watched keys, told of every change by the store. */
    public Watches watches() {
        return watches;
    }

    public ServerOptions options() {
        return options;
    }

    public TieredStore store() {
        return store;
    }

    /** The door every command takes to the keys: the store under the KV-cache rules. */
    public io.kvtier.server.command.Keyspace keyspace() {
        return keyspace;
    }

    /** The KV-cache layer over the store: LMCache key statistics, companion fate, prefix lookups. */
    public io.kvtier.kvcache.KvCache kvcache() {
        return kvcache;
    }

    public DiskReads diskReads() {
        return diskReads;
    }

    public CommandTable commands() {
        return commands;
    }

    public Metrics metrics() {
        return metrics;
    }

    public long startMillis() {
        return startMillis;
    }

    public int port() {
        return boundPort;
    }

    public void port(int port) {
        this.boundPort = port;
    }

    /** This node's cluster part; null for a single-node store. */
    public io.kvtier.cluster.node.ClusterNode cluster() {
        return cluster;
    }

    public io.kvtier.cluster.node.Replicator replicator() {
        return replicator;
    }

    /** The node's store events (--kv-events), or null. */
    public io.kvtier.server.events.StoreEventLog storeEvents() {
        return storeEvents;
    }

    public void storeEvents(io.kvtier.server.events.StoreEventLog events) {
        this.storeEvents = events;
    }

    public void cluster(io.kvtier.cluster.node.ClusterNode node) {
        this.cluster = node;
        this.replicator = new io.kvtier.cluster.node.Replicator(node, diskReads::readCopy);
    }

    public long newClientId() {
        return nextClientId.incrementAndGet();
    }

    public ConcurrentHashMap<Long, Session> sessions() {
        return sessions;
    }

    /**
     * Reports an {@code Error} on a thread that serves clients: the process stops ({@link FatalErrorHandler}).
     */
    public void fatal(FatalErrorHandler.Source where, Throwable error) {
        fatal.handle(where, error);
    }

    /** The handler that {@link #fatal} uses; the CLI installs it as the process's uncaught-exception handler. */
    public FatalErrorHandler fatalErrors() {
        return fatal;
    }

    /** INFO's instantaneous_* rates. */
    public InstantaneousRates rates() {
        return rates;
    }

    /**
     * INFO's used_memory: the JVM heap in use (the key index, requests in progress) plus the memory tier's pages in
     * use (off-heap, bounded by --memory). Netty's I/O buffers and the JVM's own memory are not counted (they show in
     * used_memory_rss). Also moves {@link #usedMemoryPeak()} up.
     */
    public long usedMemory() {
        Runtime rt = Runtime.getRuntime();
        long used = rt.totalMemory() - rt.freeMemory() + store.stats().memoryUsedBytes();
        usedMemoryPeak.accumulateAndGet(used, Math::max);
        return used;
    }

    /** The highest {@link #usedMemory()} seen: sampled every {@link InstantaneousRates#PERIOD_MILLIS} ms and by INFO. */
    public long usedMemoryPeak() {
        return usedMemoryPeak.get();
    }

    /**
     * Samples the counters behind {@link #rates()} and {@link #usedMemoryPeak()}; run every
     * {@link InstantaneousRates#PERIOD_MILLIS} ms.
     */
    public void sampleRates() {
        try {
            rates.sample(System.nanoTime(), commandsProcessed.sum(), netInputBytes.sum(), netOutputBytes.sum());
            usedMemory();
        } catch (Error e) { // Netty would only log it: an OutOfMemoryError here stops the node as on any event loop
            fatal(FatalErrorHandler.Source.STATISTICS, e);
        }
    }

    /** CONFIG RESETSTAT. */
    public void resetStats() {
        connectionsReceived.reset();
        connectionsRejected.reset();
        commandsProcessed.reset();
        netInputBytes.reset();
        netInputLandedBytes.reset();
        netOutputBytes.reset();
        metrics.resetStats();
    }
}
