package io.kvtier.router.proxy;

import io.kvtier.client.ClientResources;
import io.kvtier.client.Reply;
import io.kvtier.client.RespConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Prefetch on route: once a request is routed, the chunks its engine will load from kvtier's disk
 * ({@link Policy.Choice#prefetch}) are named to their nodes with {@code KVC.PREFETCH}, which copies them to memory
 * in the background while the request travels to the engine and waits its turn there. Fire and forget, off the
 * request's thread: one connection per node (AUTH with the nodes' password), at most {@link #QUEUE} requests' worth
 * waiting (more are dropped and counted), a reply awaited at most the timeout; a failure closes that node's connection
 * and is counted, nothing else (a prefetch is a hint: a lost one costs a disk read later, as before).
 */
public final class StorePrefetch implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StorePrefetch.class);
    /** Routed requests whose prefetches may wait to be sent. */
    static final int QUEUE = 1_024;

    private final Map<String, KvtierEndpoint> nodes = new ConcurrentHashMap<>();
    private final Duration timeout;
    private final String password;
    private final ClientResources resources = ClientResources.create(1);
    private final Map<String, RespConnection> connections = new ConcurrentHashMap<>();
    private final ExecutorService sender;
    final LongAdder keys = new LongAdder();
    final LongAdder dropped = new LongAdder();
    final LongAdder failed = new LongAdder();

    public StorePrefetch(List<KvtierEndpoint> nodes, Duration timeout, String password) {
        nodes.forEach(n -> this.nodes.put(n.name(), n));
        this.timeout = timeout;
        this.password = password == null || password.isEmpty() ? null : password;
        this.sender = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(QUEUE),
                Thread.ofPlatform().daemon().name("router-prefetch").factory());
    }

    /** Sends {@code byNode} (node name to data keys) in the background; never blocks. */
    public void send(Map<String, List<String>> byNode) {
        if (byNode.isEmpty()) {
            return;
        }
        try {
            sender.execute(() -> byNode.forEach(this::sendTo));
        } catch (RejectedExecutionException e) {
            dropped.add(byNode.values().stream().mapToInt(List::size).sum());
        }
    }

    /** Keys named to nodes, keys dropped (queue full), sends that failed. */
    public long keys() {
        return keys.sum();
    }

    public long dropped() {
        return dropped.sum();
    }

    public long failed() {
        return failed.sum();
    }

    private void sendTo(String node, List<String> dataKeys) {
        KvtierEndpoint n = nodes.get(node);
        if (n == null) {
            return;
        }
        try {
            RespConnection c = connection(n);
            List<Object> args = new ArrayList<>(dataKeys.size() + 1);
            args.add("KVC.PREFETCH");
            args.addAll(dataKeys);
            Reply r = c.send(args.toArray()).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            try {
                if (!(r instanceof Reply.Int)) {
                    throw new IllegalStateException("KVC.PREFETCH answered " + r);
                }
            } finally {
                Reply.release(r);
            }
            keys.add(dataKeys.size());
        } catch (Exception e) {
            failed.increment();
            RespConnection c = connections.remove(node);
            if (c != null) {
                c.close();
            }
            log.debug("prefetch on {} failed: {}", node, e.toString());
        }
    }

    private RespConnection connection(KvtierEndpoint n) throws Exception {
        RespConnection c = connections.get(n.name());
        if (c != null && c.isOpen()) {
            return c;
        }
        c = n.connect(resources, timeout, password);
        connections.put(n.name(), c);
        return c;
    }

    @Override
    public void close() {
        sender.shutdownNow();
        try {
            sender.awaitTermination(timeout.toMillis() * 3, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        connections.values().forEach(RespConnection::close);
        resources.close();
    }
}
