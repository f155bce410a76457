package io.kvtier.client.cluster;

import io.kvtier.client.ClientOptions;
import io.kvtier.client.ClientResources;
import io.kvtier.client.HostPort;
import io.kvtier.client.Reply;
import io.kvtier.client.cluster.SlotHash;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/*
 * How the client routes, and why this way. A command goes to the connection of its key's primary, as the slot map
 * says (SlotMap). The map is learned from CLUSTER SLOTS of the entry node at start and refreshed, at most every
 * REFRESH_INTERVAL_MILLIS (MapRefresher), whenever something says it is stale:
 *   -MOVED slot host:port   (ClusterError.Moved) the slot is patched at once and the command resent there (at most
 *                           MAX_REDIRECTS times), as Redis Cluster clients do; a refresh then picks up the other
 *                           slots that moved with it.
 *   a node cannot be reached (refused, reset)   the command was not sent: it is sent once to another node (the
 *                           entry node), which answers MOVED to the new primary as soon as it has the new table (one
 *                           round trip, where a refresh is 2 MB of CLUSTER SLOTS for three kvtier nodes); if that
 *                           leads back to the dead node, it waits for the next refresh and goes to the slot's new
 *                           primary if there is one, else it fails. Its connection slot reconnects at most every
 *                           NodePool.RETRY_MILLIS, so a dead node costs a bounded error rate, not a spin.
 *   a connection closes with the command in flight   the command may have run: it fails, and the map is refreshed.
 *   -ASK, -TRYAGAIN, -CLUSTERDOWN and other errors   returned as they are: the caller counts them, the client does
 *                           not retry.
 * Every command is bounded by the timeout, redirects and waits included. Connections are made cluster-aware so that
 * kvtier answers MOVED instead of proxying (ClusterClientOptions.Mode.PROXY keeps them unaware, and sends everything
 * to the entry node). Nodes that appear later (a join) get connections on their first MOVED or refresh.
 */

/**
 * A cluster-aware client: routes each command to its key's slot's primary, as Redis Cluster clients do, over a fixed
 * number of lanes (a caller's lane {@code i} always uses connection {@code i mod share} of whichever node it goes to).
 * Not to be confused with the server's command router, which decides whether a node serves a command. Thread-safe;
 * owns its I/O threads, connections, timer and refresher thread, all stopped by {@link #close}.
 */
public final class ClusterClient implements AutoCloseable {
    static final int MAX_REDIRECTS = 5;
    static final long REFRESH_INTERVAL_MILLIS = 100;
    private static final Duration MAX_CONNECT_TIMEOUT = Duration.ofSeconds(2);
    /** Least time CLUSTER SLOTS is given, whatever the command timeout: a 2 MB reply from a busy node is not dead. */
    private static final Duration MIN_SLOTS_TIMEOUT = Duration.ofSeconds(10);

    private final ClusterClientOptions options;
    private final ClientResources resources;
    private final NodeConnector connector;
    private final CommandObserver observer;
    private final SlotMap map = new SlotMap();
    private final ConcurrentHashMap<HostPort, NodePool> pools = new ConcurrentHashMap<>();
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
        Thread t = new Thread(r, "kvtier-cluster-client-timer");
        t.setDaemon(true);
        return t;
    });
    private final MapRefresher refresher = new MapRefresher(this::refreshNow, REFRESH_INTERVAL_MILLIS);
    private final LongAdder redirects = new LongAdder();
    private final LongAdder refreshFailures = new LongAdder();
    private final AtomicLong longestRefreshNanos = new AtomicLong();
    private volatile String lastRefreshFailure = "";
    private final List<String> startNotes = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    private ClusterClient(ClusterClientOptions options, CommandObserver observer) {
        this.options = options;
        this.observer = observer;
        this.resources = ClientResources.create(Math.max(1, Math.min(options.connections(),
                Runtime.getRuntime().availableProcessors())));
        Duration connect = options.timeout().compareTo(MAX_CONNECT_TIMEOUT) < 0 ? options.timeout()
                : MAX_CONNECT_TIMEOUT;
        this.connector = new NodeConnector(resources, new ClientOptions(connect, options.timeout()),
                options.password(), options.mode() == ClusterClientOptions.Mode.SLOTS);
        timer.setRemoveOnCancelPolicy(true); // one timeout per command: cancelled ones must not pile up
    }

    /**
     * Learns the slot map from the entry node and connects to every primary.
     *
     * @throws IOException naming the node when it cannot be reached, is not a cluster node or serves no slots
     */
    public static ClusterClient open(ClusterClientOptions options, CommandObserver observer) throws IOException {
        ClusterClient client = new ClusterClient(options, observer);
        try {
            client.start();
            return client;
        } catch (IOException | RuntimeException e) {
            client.close();
            throw e;
        }
    }

    private void start() throws IOException {
        HostPort entry = options.entry();
        try {
            map.install(connector.fetchSlots(entry, slotsTimeout()));
        } catch (IOException e) {
            throw new IOException(e.getMessage() + "; is " + entry.host() + ":" + entry.port() + " a cluster node?", e);
        }
        List<HostPort> nodes = options.mode() == ClusterClientOptions.Mode.PROXY ? List.of(entry)
                : new ArrayList<>(map.primaries());
        if (nodes.isEmpty() || map.unassigned() == SlotHash.SLOTS) {
            throw new IOException(entry.host() + ":" + entry.port() + " serves no slots yet"
                    + " (CLUSTER SLOTS is empty); wait until the cluster has formed");
        }
        for (int i = 0; i < nodes.size(); i++) {
            pools.put(nodes.get(i), newPool(nodes.get(i), ConnectionShares.share(options.connections(),
                    nodes.size(), i)));
        }
        connectAll();
    }

    /**
     * Connects every pool. A primary that cannot be reached does not stop the run (the map may still list a node
     * that just died): its commands fail until the map moves its slots; only when no primary answers is it fatal.
     */
    private void connectAll() throws IOException {
        IOException last = null;
        int reached = 0;
        for (NodePool pool : pools.values()) {
            try {
                for (int i = 0; i < pool.size(); i++) {
                    pool.connection(i).get(options.timeout().toMillis() + 1000, TimeUnit.MILLISECONDS);
                }
                reached++;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while connecting to the cluster", e);
            } catch (ExecutionException | TimeoutException e) {
                Throwable cause = e.getCause() == null ? e : e.getCause();
                last = new IOException("cannot connect to " + pool.node().host() + ":"
                        + pool.node().port() + " (" + cause + ")", cause);
                startNotes.add("cluster: at the start " + pool.node().host() + ":" + pool.node().port()
                        + " could not be reached (" + cause.getMessage() + "); its commands failed until the map"
                        + " moved its slots");
            }
        }
        if (reached == 0) {
            throw last;
        }
    }

    private NodePool newPool(HostPort node, int size) {
        return new NodePool(node, size, connector, timer);
    }

    /** Sends {@code args} to the primary of {@code key}'s slot on lane {@code lane}'s connection to it. */
    public CompletableFuture<Reply> send(int lane, byte[] key, Object... args) {
        if (closed) {
            RoutedCommand.releaseAll(args);
            return CompletableFuture.failedFuture(new IllegalStateException("the cluster client is closed"));
        }
        RoutedCommand command;
        try {
            command = new RoutedCommand(this, lane, SlotHash.slot(key), args);
        } catch (RuntimeException e) { // the timer refused: closing
            RoutedCommand.releaseAll(args);
            return CompletableFuture.failedFuture(e);
        }
        command.attempt();
        return command.result();
    }

    /** The pool of the node that should serve {@code slot} now, or null when no node is known for it. */
    NodePool poolFor(int slot) {
        HostPort node = primaryFor(slot);
        if (node == null) {
            return null;
        }
        NodePool pool = pools.get(node);
        if (pool != null || closed) {
            return pool;
        }
        return pools.computeIfAbsent(node, n -> newPool(n, ConnectionShares.shareOfNewcomer(options.connections(),
                pools.size() + 1)));
    }

    /**
     * A pool of a node other than {@code unreachable} to ask about a slot (the entry node if it is another, else
     * any); null in proxy mode, where every command goes to the entry node, or when no other node is known.
     */
    NodePool anotherPool(HostPort unreachable) {
        if (options.mode() != ClusterClientOptions.Mode.SLOTS) {
            return null;
        }
        NodePool entry = pools.get(options.entry());
        if (entry != null && !options.entry().equals(unreachable)) {
            return entry;
        }
        return pools.values().stream().filter(p -> !p.node().equals(unreachable)).findFirst().orElse(null);
    }

    HostPort primaryFor(int slot) {
        return options.mode() == ClusterClientOptions.Mode.PROXY ? options.entry() : map.primary(slot);
    }

    boolean followsRedirects() {
        return options.mode() == ClusterClientOptions.Mode.SLOTS;
    }

    void moved(ClusterError.Moved moved) {
        redirects.increment();
        map.redirect(moved);
        refresher.request();
    }

    /** Completes once a map refresh that started after this call has run (at once in proxy mode: no map needed). */
    CompletableFuture<Void> refreshed() {
        return followsRedirects() ? refresher.request() : CompletableFuture.completedFuture(null);
    }

    ScheduledThreadPoolExecutor timer() {
        return timer;
    }

    Duration timeout() {
        return options.timeout();
    }

    CommandObserver observer() {
        return observer;
    }

    private Duration slotsTimeout() {
        return options.timeout().compareTo(MIN_SLOTS_TIMEOUT) > 0 ? options.timeout() : MIN_SLOTS_TIMEOUT;
    }

    private void refreshNow() {
        long start = System.nanoTime();
        try {
            String failure = "no node known";
            for (HostPort candidate : candidates()) {
                try {
                    map.install(connector.fetchSlots(candidate, slotsTimeout()));
                    return;
                } catch (IOException | RuntimeException e) {
                    failure = e.getMessage();
                }
            }
            refreshFailures.increment();
            lastRefreshFailure = failure;
        } finally {
            longestRefreshNanos.accumulateAndGet(System.nanoTime() - start, Math::max);
        }
    }

    /** Nodes to ask for the map: the entry node first, then every node the client has talked to. */
    private List<HostPort> candidates() {
        Set<HostPort> all = new LinkedHashSet<>();
        all.add(options.entry());
        all.addAll(pools.keySet());
        return new ArrayList<>(all);
    }

    /** The slot map as the client knows it now; shared, not a copy. */
    public SlotMap slotMap() {
        return map;
    }

    /** The slots whose primary is {@code node} now. */
    public BitSet slotsOf(HostPort node) {
        return map.slotsOf(node);
    }

    public boolean isOpen() {
        return !closed;
    }

    /** How the routing went so far, for a report: MOVED followed, refreshes, reconnects. */
    public List<String> notes() {
        long reconnects = pools.values().stream().mapToLong(NodePool::reconnects).sum();
        List<String> notes = new ArrayList<>();
        if (options.mode() == ClusterClientOptions.Mode.PROXY) {
            notes.add(String.format(Locale.ROOT, "proxy: every command sent to %s:%d on cluster-unaware connections"
                    + " (it forwards); %d reconnects", options.entry().host(), options.entry().port(), reconnects));
            return notes;
        }
        notes.add(String.format(Locale.ROOT, "cluster: %d primaries at the end (%s); %d MOVED followed, %d slot-map"
                + " refreshes (longest %.0f ms), %d reconnects", map.primaries().size(), String.join(" ",
                map.primaries().stream().map(n -> n.host() + ":" + n.port()).toList()), redirects.sum(),
                refresher.runs(), longestRefreshNanos.get() / 1e6, reconnects));
        notes.addAll(startNotes);
        if (refreshFailures.sum() > 0) {
            notes.add("cluster: " + refreshFailures.sum() + " refreshes reached no node (last: " + lastRefreshFailure
                    + ")");
        }
        return notes;
    }

    @Override
    public void close() {
        closed = true;
        refresher.close();
        pools.values().forEach(NodePool::close);
        timer.shutdownNow();
        resources.close();
    }

    /** Connections kept to {@code node}, 0 for a node never seen. */
    int poolSize(HostPort node) {
        NodePool p = pools.get(node);
        return p == null ? 0 : p.size();
    }
}
