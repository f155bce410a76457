package io.kvtier.router.proxy;

import io.kvtier.client.ClientResources;
import io.kvtier.client.Reply;
import io.kvtier.client.RespConnection;
import io.kvtier.events.StoreEvent;
import io.kvtier.router.map.StoreMap;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fetch bandwidth measured, per kvtier node and tier: every interval the router GETs one chunk each node holds in
 * memory and one it holds on disk (keys it learned from the node's store events), over RESP as LMCache does, and times
 * the whole value's arrival. The bandwidth is bytes over that time (request latency included: it is what a chunk of
 * that size costs to fetch), averaged over the last samples (EWMA, 0.3 for the newest). The {@code kvtier} policy
 * prices a node's chunks with it, and with {@code --fetch-bandwidth} until a first sample exists.
 *
 * <p>What it measures is the path from the router to the node, and stands for the engines' path to it (same network,
 * same node; an engine on the node's own machine fetches faster). It costs one chunk per node and tier per interval.
 * The probe's connection is in CLIENT NO-TOUCH mode: its reads record no access in the eviction policy, promote
 * nothing from disk and count in no hit statistics, so probing leaves the store's judgement of what is hot unchanged.
 * A node that refuses that mode, answers with an error (a password, a MOVED for a backup's copy) or not within the
 * timeout gives no sample; nothing else changes.
 */
public final class FetchProbes implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(FetchProbes.class);
    static final double NEWEST_WEIGHT = 0.3;

    private final List<KvtierEndpoint> nodes;
    private final StoreMap map;
    private final Duration timeout;
    private final ClientResources resources = ClientResources.create(1);
    private final ScheduledExecutorService timer;
    private final Map<String, Measured> measured = new ConcurrentHashMap<>();
    private final String password;
    private final Map<String, RespConnection> connections = new ConcurrentHashMap<>();

    /** A node's and tier's bandwidth in bytes per second, from {@code samples} reads. */
    public record Measured(double bytesPerSecond, long samples, byte[] lastKey) {
    }

    public FetchProbes(List<KvtierEndpoint> nodes, StoreMap map, Duration interval, Duration timeout) {
        this(nodes, map, interval, timeout, null);
    }

    /** As above; {@code password} (null: none) is sent with {@code AUTH} on each probe connection. */
    public FetchProbes(List<KvtierEndpoint> nodes, StoreMap map, Duration interval, Duration timeout,
            String password) {
        this.password = password == null || password.isEmpty() ? null : password;
        this.nodes = List.copyOf(nodes);
        this.map = map;
        this.timeout = timeout;
        this.timer = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().daemon().name("router-fetch-probes")
                .factory());
        timer.scheduleWithFixedDelay(this::probeAll, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The measured bandwidth of {@code node}'s {@code tier}, or NaN before a first sample. */
    public double bytesPerSecond(String node, StoreEvent.Tier tier) {
        Measured m = measured.get(key(node, tier));
        return m == null ? Double.NaN : m.bytesPerSecond();
    }

    /** Every measurement: "node tier" to its figures. */
    public Map<String, Measured> all() {
        return Map.copyOf(measured);
    }

    private static String key(String node, StoreEvent.Tier tier) {
        return node + " " + tier.name().toLowerCase(java.util.Locale.ROOT);
    }

    void probeAll() {
        for (KvtierEndpoint n : nodes) {
            for (StoreEvent.Tier tier : StoreEvent.Tier.values()) {
                try {
                    probe(n, tier);
                } catch (Exception e) {
                    RespConnection c = connections.remove(n.name());
                    if (c != null) {
                        c.close();
                    }
                    log.debug("fetch probe of {} ({}) failed: {}", n.name(), tier, e.toString());
                }
            }
        }
    }

    private void probe(KvtierEndpoint n, StoreEvent.Tier tier) throws Exception {
        String node = n.name();
        String k = key(node, tier);
        Measured before = measured.get(k);
        byte[] chunk = map.recentKey(node, tier, before == null ? null : before.lastKey());
        if (chunk == null) {
            return;
        }
        RespConnection c = connection(n);
        long start = System.nanoTime();
        java.util.concurrent.CompletableFuture<Reply> f = c.send("GET", chunk);
        Reply r;
        try {
            r = f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            f.thenAccept(Reply::release); // a value arriving after all is released, not leaked
            throw e;
        }
        long nanos = System.nanoTime() - start;
        try {
            if (!(r instanceof Reply.Bulk b)) {
                return; // gone meanwhile, or an error: no sample
            }
            double sample = b.content().readableBytes() / (Math.max(nanos, 1) / 1e9);
            double bw = before == null ? sample
                    : NEWEST_WEIGHT * sample + (1 - NEWEST_WEIGHT) * before.bytesPerSecond();
            measured.put(k, new Measured(bw, before == null ? 1 : before.samples() + 1, chunk));
        } finally {
            Reply.release(r);
        }
    }

    private RespConnection connection(KvtierEndpoint n) throws Exception {
        String node = n.name();
        RespConnection c = connections.get(node);
        if (c != null && c.isOpen()) {
            return c;
        }
        c = n.connect(resources, timeout, password);
        // Probe reads must not make chunks look used: no access recorded, no promotion from disk, no hit counted.
        Reply r = c.send("CLIENT", "NO-TOUCH", "ON").get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (!(r instanceof Reply.Simple)) {
            c.close();
            throw new IllegalStateException(node + " refused CLIENT NO-TOUCH (" + r + "): not probed");
        }
        connections.put(node, c);
        return c;
    }

    @Override
    public void close() {
        timer.shutdownNow();
        try {
            timer.awaitTermination(timeout.toMillis() * 3, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        connections.values().forEach(RespConnection::close);
        resources.close();
    }
}
