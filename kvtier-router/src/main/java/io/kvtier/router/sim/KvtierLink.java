package io.kvtier.router.sim;

import io.kvtier.client.ClientOptions;
import io.kvtier.client.ClientResources;
import io.kvtier.client.HostPort;
import io.kvtier.client.Reply;
import io.kvtier.client.RespConnection;
import io.kvtier.client.cluster.ClusterClient;
import io.kvtier.client.cluster.ClusterClientOptions;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * An engine's connections to kvtier, as LMCache's connector holds them: to one node (RESP, a few connections used in
 * turn, each reconnected when it drops) or to a cluster (slot-routed, following MOVED and failover, as a
 * {@code redis-cluster://} client). Every command is bounded by the timeout. Thread-safe.
 */
abstract sealed class KvtierLink implements AutoCloseable {
    /** Sends a command about {@code key} ({@code args} includes the key); never throws, the future fails instead. */
    abstract CompletableFuture<Reply> send(byte[] key, Object... args);

    @Override
    public abstract void close();

    /** {@code cluster}: route by slot through {@code address}'s CLUSTER SLOTS; else everything to {@code address}. */
    static KvtierLink open(HostPort address, boolean cluster, int connections, Duration timeout) throws IOException {
        if (cluster) {
            return new Cluster(ClusterClient.open(new ClusterClientOptions(address, null, connections, timeout,
                    ClusterClientOptions.Mode.SLOTS), io.kvtier.client.cluster.CommandObserver.NONE));
        }
        return new Node(address, connections, timeout);
    }

    private static final class Node extends KvtierLink {
        private final HostPort address;
        private final ClientResources resources = ClientResources.create(1);
        private final ClientOptions options;
        private final AtomicReferenceArray<CompletableFuture<RespConnection>> connections;
        private final AtomicInteger next = new AtomicInteger();

        Node(HostPort address, int connections, Duration timeout) {
            this.address = address;
            this.options = new ClientOptions(timeout, timeout);
            this.connections = new AtomicReferenceArray<>(connections);
        }

        @Override
        CompletableFuture<Reply> send(byte[] key, Object... args) {
            int i = Math.floorMod(next.getAndIncrement(), connections.length());
            return connection(i).handle((c, e) -> {
                if (e != null) { // not sent: the payload buffers are still ours
                    RespConnection.releaseUnsent(args);
                    return CompletableFuture.<Reply>failedFuture(e);
                }
                return c.send(args);
            }).thenCompose(f -> f);
        }

        /** The i-th connection, opened (again) when it is not open: a dead node costs a connect timeout per try. */
        private CompletableFuture<RespConnection> connection(int i) {
            while (true) {
                CompletableFuture<RespConnection> c = connections.get(i);
                if (c != null && !(c.isDone() && (c.isCompletedExceptionally() || !c.join().isOpen()))) {
                    return c;
                }
                CompletableFuture<RespConnection> fresh = RespConnection.connect(resources, address.host(),
                        address.port(), options);
                if (connections.compareAndSet(i, c, fresh)) {
                    return fresh;
                }
                fresh.thenAccept(RespConnection::close);
            }
        }

        @Override
        public void close() {
            for (int i = 0; i < connections.length(); i++) {
                CompletableFuture<RespConnection> c = connections.get(i);
                if (c != null) {
                    c.thenAccept(RespConnection::close);
                }
            }
            resources.close();
        }
    }

    private static final class Cluster extends KvtierLink {
        private final ClusterClient client;
        private final AtomicInteger lanes = new AtomicInteger();

        Cluster(ClusterClient client) {
            this.client = client;
        }

        @Override
        CompletableFuture<Reply> send(byte[] key, Object... args) {
            return client.send(lanes.getAndIncrement() & Integer.MAX_VALUE, key, args);
        }

        @Override
        public void close() {
            client.close();
        }
    }
}
