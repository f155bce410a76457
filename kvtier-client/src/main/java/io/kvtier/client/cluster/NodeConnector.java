package io.kvtier.client.cluster;

import io.kvtier.client.ClientOptions;
import io.kvtier.client.ClientResources;
import io.kvtier.client.HostPort;
import io.kvtier.client.Reply;
import io.kvtier.client.RespConnection;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Opens ready connections to cluster nodes: authenticated when there is a password and, for slot routing, made
 * cluster-aware ({@code READONLY} then {@code READWRITE}: kvtier answers such a session {@code -MOVED} instead of
 * proxying, and reads still go to primaries). Also fetches CLUSTER SLOTS on a connection of its own. Thread-safe;
 * does not own the client resources.
 */
final class NodeConnector {
    private final ClientResources resources;
    private final ClientOptions options;
    private final String password;
    private final boolean clusterAware;

    NodeConnector(ClientResources resources, ClientOptions options, String password, boolean clusterAware) {
        this.resources = resources;
        this.options = options;
        this.password = password;
        this.clusterAware = clusterAware;
    }

    /** A connection that has passed its handshake; fails with the transport's exception or the refusal. */
    CompletableFuture<RespConnection> connect(HostPort node) {
        return connect(node, options);
    }

    private CompletableFuture<RespConnection> connect(HostPort node, ClientOptions with) {
        CompletableFuture<RespConnection> connected;
        try {
            connected = RespConnection.connect(resources, node.host(), node.port(), with);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return connected.thenCompose(c -> handshake(c, node).whenComplete((ok, failure) -> {
            if (failure != null) {
                c.close();
            }
        }));
    }

    private CompletableFuture<RespConnection> handshake(RespConnection c, HostPort node) {
        CompletableFuture<Void> steps = CompletableFuture.completedFuture(null);
        if (password != null) {
            steps = expectOk(c.send("AUTH", password), node, "AUTH");
        }
        if (clusterAware) {
            CompletableFuture<Void> readOnly = expectOk(c.send("READONLY"), node, "READONLY");
            CompletableFuture<Void> readWrite = expectOk(c.send("READWRITE"), node, "READWRITE");
            steps = CompletableFuture.allOf(steps, readOnly, readWrite);
        }
        return steps.thenApply(ignored -> c);
    }

    private static CompletableFuture<Void> expectOk(CompletableFuture<Reply> reply, HostPort node, String command) {
        return reply.thenAccept(r -> {
            try {
                if (!(r instanceof Reply.Simple(String text) && text.equals("OK"))) {
                    throw new IllegalStateException(command + " at " + node.host() + ":" + node.port()
                            + " answered " + r + (command.equals("AUTH") ? "; check the password" : ""));
                }
            } finally {
                Reply.release(r);
            }
        });
    }

    /**
     * Asks {@code node} for CLUSTER SLOTS on a connection of its own, whose replies may take {@code replyTimeout} (a
     * 3-node kvtier table is about 14,000 ranges, 2 MB, and a loaded or just started node may take a while).
     */
    List<SlotRange> fetchSlots(HostPort node, Duration replyTimeout) throws IOException {
        long waitMillis = options.connectTimeout().toMillis() + replyTimeout.toMillis();
        CompletableFuture<RespConnection> connecting = connect(node, new ClientOptions(options.connectTimeout(),
                replyTimeout));
        RespConnection c;
        try {
            c = await(connecting, node, waitMillis);
        } catch (IOException e) {
            connecting.thenAccept(RespConnection::close); // should it still succeed
            throw e;
        }
        try {
            Reply reply = await(c.send("CLUSTER", "SLOTS"), node, replyTimeout.toMillis() + 1000);
            try {
                return ClusterSlots.parse(reply, node);
            } catch (IllegalArgumentException e) {
                throw new IOException(e.getMessage(), e);
            } finally {
                Reply.release(reply);
            }
        } finally {
            c.close();
        }
    }

    private static <T> T await(CompletableFuture<T> future, HostPort node, long millis) throws IOException {
        try {
            return future.get(millis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while asking " + node.host() + ":" + node.port(), e);
        } catch (ExecutionException | TimeoutException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new IOException("cannot reach " + node.host() + ":" + node.port() + " ("
                    + cause.getClass().getSimpleName() + (cause.getMessage() == null ? "" : ": " + cause.getMessage())
                    + ")", cause);
        }
    }
}
