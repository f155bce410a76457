package io.kvtier.cli.cluster;

import io.kvtier.client.ClientOptions;
import io.kvtier.client.ClientResources;
import io.kvtier.client.Reply;
import io.kvtier.client.RespConnection;
import io.kvtier.client.RespTimeoutException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Reads KVT.STATUS (CLUSTER INFO plus the membership) from nodes over kvtier-client connections, one connection per
 * query, several queries at once on one I/O thread; connecting, AUTH and the command are each bounded by the timeout. A
 * failed query is an IOException whose message says what to check. Thread-safe; close it after the last query.
 */
final class NodeQuery implements AutoCloseable {
    private final ClientResources resources = ClientResources.create(1);
    private final String password;
    private final Duration timeout;

    /** Queries that send AUTH {@code password} first unless it is null, and wait up to {@code timeout} per step. */
    NodeQuery(String password, Duration timeout) {
        this.password = password;
        this.timeout = timeout;
    }

    /** The text of {@code host:port}'s KVT.STATUS; waits for it. */
    String clusterInfo(String host, int port) throws IOException {
        return await(clusterInfoAsync(host, port));
    }

    /** One report per member of {@code seen} other than the node that gave it, queried in parallel, in its order. */
    List<NodeReport> others(ClusterInfo seen) {
        List<ClusterInfo.MemberRow> members = seen.members().stream().filter(m -> !m.id().equals(seen.nodeId()))
                .toList();
        List<CompletableFuture<String>> replies = new ArrayList<>();
        for (ClusterInfo.MemberRow m : members) {
            replies.add(clusterInfoAsync(m));
        }
        List<NodeReport> reports = new ArrayList<>();
        for (int i = 0; i < members.size(); i++) {
            ClusterInfo.MemberRow m = members.get(i);
            try {
                reports.add(new NodeReport(m.id(), m.endpoint(), ClusterInfo.parse(await(replies.get(i))), null));
            } catch (IOException | IllegalArgumentException e) {
                reports.add(new NodeReport(m.id(), m.endpoint(), null, e.getMessage()));
            }
        }
        return reports;
    }

    /** Asks {@code m} at the endpoint it advertises ({@code host:port}, an IPv6 host in brackets). */
    private CompletableFuture<String> clusterInfoAsync(ClusterInfo.MemberRow m) {
        int colon = m.endpoint().lastIndexOf(':');
        try {
            return clusterInfoAsync(stripBrackets(m.endpoint().substring(0, colon)),
                    Integer.parseInt(m.endpoint().substring(colon + 1)));
        } catch (RuntimeException e) { // no colon, or no port number after it
            return CompletableFuture.failedFuture(failure("member " + m.id() + " advertises no usable endpoint ('"
                    + m.endpoint() + "')"));
        }
    }

    private CompletableFuture<String> clusterInfoAsync(String host, int port) {
        return commandAsync(host, port, timeout, "KVT.STATUS");
    }

    /**
     * Sends {@code args} to {@code host:port} and returns its reply as text (an integer in decimal); an error reply
     * fails with its message. {@code wait} bounds the reply (connecting and AUTH have the query's timeout).
     */
    String command(String host, int port, Duration wait, Object... args) throws IOException {
        return await(commandAsync(host, port, wait, args), wait);
    }

    private CompletableFuture<String> commandAsync(String host, int port, Duration wait, Object... args) {
        String target = host + ":" + port;
        return RespConnection.connect(resources, host, port, new ClientOptions(timeout, wait))
                .exceptionally(e -> {
                    throw failure("cannot reach " + target + ": " + connectFailure(unwrap(e)));
                })
                .thenCompose(c -> ask(c, target, wait, args).whenComplete((text, e) -> c.close()));
    }

    private CompletableFuture<String> ask(RespConnection c, String target, Duration wait, Object... args) {
        String name = String.valueOf(args[0]);
        CompletableFuture<Reply> auth = password == null ? CompletableFuture.completedFuture(null)
                : c.send("AUTH", password);
        return auth.thenCompose(a -> {
            if (a instanceof Reply.Error e) {
                throw failure(target + " refused the password: " + e.message());
            }
            return c.send(args);
        }).handle((r, e) -> {
            try {
                if (e != null) {
                    Throwable cause = unwrap(e);
                    if (cause instanceof UncheckedIOException u) {
                        throw u;
                    }
                    throw failure(target + " did not answer " + name + (cause instanceof RespTimeoutException
                            ? " within " + wait.toMillis() + " ms (raise --timeout if it is merely slow)"
                            : ": " + message(cause)));
                }
                return name.equals("KVT.STATUS") ? text(r, target) : reply(r, target, name);
            } finally {
                Reply.release(r);
            }
        });
    }

    private static String text(Reply r, String target) {
        return switch (r) {
            case Reply.Bulk b -> b.utf8();
            case Reply.Other o when o.type() == '=' -> o.text().startsWith("txt:") ? o.text().substring(4) : o.text();
            case Reply.Error e when e.message().startsWith("NOAUTH") -> throw failure(target
                    + " requires a password: pass --password (" + e.message() + ")");
            case Reply.Error e -> throw failure(target + " is not a cluster node: " + e.message());
            default -> throw failure(target + " answered KVT.STATUS with " + r);
        };
    }

    /** A command's reply as text; an error reply fails with its message. */
    private static String reply(Reply r, String target, String name) {
        return switch (r) {
            case Reply.Simple v -> v.text();
            case Reply.Bulk v -> v.utf8();
            case Reply.Int v -> Long.toString(v.value());
            case Reply.Error v when v.message().startsWith("NOAUTH") -> throw failure(target
                    + " requires a password: pass --password (" + v.message() + ")");
            case Reply.Error v -> throw failure(target + " refused " + name + ": " + v.message());
            default -> throw failure(target + " answered " + name + " with " + r);
        };
    }

    /** Waits for a query: connect, AUTH and the command each have the timeout, so three of them bound the whole. */
    private String await(CompletableFuture<String> query) throws IOException {
        return await(query, timeout);
    }

    private String await(CompletableFuture<String> query, Duration wait) throws IOException {
        try {
            return query.get(timeout.toMillis() * 2 + wait.toMillis() + 1_000, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            Throwable cause = unwrap(e);
            throw cause instanceof UncheckedIOException u ? u.getCause() : new IOException(message(cause), cause);
        } catch (TimeoutException e) {
            throw new IOException("no answer within " + (timeout.toMillis() * 2 + wait.toMillis() + 1_000) + " ms", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    /** Netty's words for a failed connect, in an operator's. */
    private String connectFailure(Throwable e) {
        if (e instanceof io.netty.channel.ConnectTimeoutException) {
            return "no connection within " + timeout.toMillis() + " ms";
        }
        String m = message(e);
        return m.contains("Connection refused") ? "connection refused (is a kvtier node listening there?)" : m;
    }

    private static UncheckedIOException failure(String message) {
        return new UncheckedIOException(new IOException(message));
    }

    private static Throwable unwrap(Throwable e) {
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    private static String message(Throwable e) {
        Throwable cause = unwrap(e);
        return cause.getMessage() == null ? cause.toString() : cause.getMessage();
    }

    private static String stripBrackets(String host) {
        return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    }

    @Override
    public void close() {
        resources.close();
    }

    /** What one member said about itself, or why it could not be asked. */
    record NodeReport(String id, String endpoint, ClusterInfo info, String error) {
    }
}
