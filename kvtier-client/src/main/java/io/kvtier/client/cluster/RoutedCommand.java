package io.kvtier.client.cluster;

import io.kvtier.client.HostPort;
import io.kvtier.client.Reply;
import io.kvtier.client.RespConnection;
import io.kvtier.client.RespTimeoutException;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One command's way through a {@link ClusterClient}: sent to its slot's primary; resent after {@code -MOVED}; when
 * the primary cannot be reached, sent once to another node (which may answer MOVED) and then, if need be, to the
 * slot's primary after a map refresh; finished by its reply, its failure or the client's timeout, whichever comes
 * first. Owns the command's ByteBuf arguments until it finishes (each send gets a
 * retained duplicate, so a resend still has the bytes). Thread-safe: attempts continue on I/O, timer and refresher
 * threads, one at a time; the argument buffers are guarded by this object's lock.
 */
final class RoutedCommand {
    private static final Set<String> WRITES = Set.of("SET", "DEL", "UNLINK", "MSET", "SETEX", "PSETEX", "SETNX",
            "GETDEL", "GETEX", "EXPIRE", "PEXPIRE", "PERSIST");

    private final ClusterClient client;
    private final int lane;
    private final int slot;
    private final boolean write;
    private final long startNanos = System.nanoTime();
    private final CompletableFuture<Reply> result = new CompletableFuture<>();
    private Object[] args; // null once released
    private volatile int hops;
    private volatile boolean askedOther;

    RoutedCommand(ClusterClient client, int lane, int slot, Object[] args) {
        this.client = client;
        this.lane = lane;
        this.slot = slot;
        this.args = args;
        this.write = WRITES.contains(name(args[0]));
        ScheduledFuture<?> timeout = client.timer().schedule(this::expire, client.timeout().toNanos(),
                TimeUnit.NANOSECONDS);
        result.whenComplete((reply, failure) -> {
            timeout.cancel(false);
            releaseArgs();
            client.observer().completed(slot, write, startNanos, System.nanoTime(), errorKind(reply, failure));
        });
    }

    CompletableFuture<Reply> result() {
        return result;
    }

    void attempt() {
        NodePool pool = client.poolFor(slot);
        if (pool == null) {
            unreachable(null, new IllegalStateException("no node is known to serve slot " + slot));
            return;
        }
        attemptOn(pool);
    }

    private void attemptOn(NodePool pool) {
        pool.connection(lane).whenComplete((connection, failure) -> {
            if (failure != null) {
                unreachable(pool.node(), failure);
            } else {
                sendOn(connection, pool.node());
            }
        });
    }

    private void sendOn(RespConnection connection, HostPort node) {
        Object[] copy = argsForSend();
        if (copy == null) {
            return; // finished meanwhile (timed out)
        }
        CompletableFuture<Reply> sent;
        try {
            sent = connection.send(copy);
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        sent.whenComplete((reply, failure) -> replied(node, reply, failure));
    }

    private void replied(HostPort node, Reply reply, Throwable failure) {
        if (failure != null) {
            client.refreshed(); // the node may be gone; the command may have run, so it is not resent
            finish(null, failure);
            return;
        }
        if (reply instanceof Reply.Error(String message) && client.followsRedirects()) {
            if (ClusterError.parse(message, node) instanceof ClusterError.Moved moved
                    && hops < ClusterClient.MAX_REDIRECTS && !result.isDone()) {
                Reply.release(reply);
                client.moved(moved);
                hops++;
                attempt();
                return;
            }
        }
        finish(reply, null);
    }

    /**
     * Not sent. The first time, ask another node: once any survivor has the new table it answers with the value or
     * a MOVED to the new primary, one round trip instead of a whole map refresh (2 MB of CLUSTER SLOTS for three
     * kvtier nodes, which a busy node takes a second to send). After that, or when no other node is known, wait for
     * a fresher map and go to the slot's new primary if it has moved.
     */
    private void unreachable(HostPort node, Throwable failure) {
        NodePool other = askedOther || hops >= ClusterClient.MAX_REDIRECTS ? null : client.anotherPool(node);
        if (other != null && !result.isDone()) {
            askedOther = true;
            hops++;
            client.refreshed(); // meanwhile, for the commands that come next
            attemptOn(other);
            return;
        }
        client.refreshed().whenComplete((ignored, refreshFailure) -> {
            HostPort now = client.primaryFor(slot);
            if (now != null && !now.equals(node) && hops < ClusterClient.MAX_REDIRECTS && !result.isDone()) {
                hops++;
                attempt();
            } else {
                finish(null, new UnreachableException(node, failure));
            }
        });
    }

    private void expire() {
        result.completeExceptionally(new TimeoutException("slot " + slot + ": no reply within "
                + client.timeout().toMillis() + " ms, after " + hops + " redirects"));
    }

    private void finish(Reply reply, Throwable failure) {
        boolean mine = failure == null ? result.complete(reply) : result.completeExceptionally(failure);
        if (!mine && reply != null) {
            Reply.release(reply);
        }
    }

    private synchronized Object[] argsForSend() {
        if (args == null) {
            return null;
        }
        Object[] copy = args.clone();
        for (int i = 0; i < copy.length; i++) {
            if (copy[i] instanceof ByteBuf buf) {
                copy[i] = buf.retainedDuplicate();
            }
        }
        return copy;
    }

    private synchronized void releaseArgs() {
        if (args != null) {
            releaseAll(args);
            args = null;
        }
    }

    static void releaseAll(Object[] args) {
        io.kvtier.client.RespConnection.releaseUnsent(args);
    }

    /** What {@link CommandObserver#completed} is told: null for success, else the kind of failure. */
    static String errorKind(Reply reply, Throwable failure) {
        if (failure != null) {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            return switch (cause) {
                case TimeoutException t -> "timeout";
                case RespTimeoutException t -> "timeout";
                case UnreachableException u -> "unreachable";
                default -> "closed";
            };
        }
        if (reply instanceof Reply.Error(String message)) {
            return ClusterError.code(message);
        }
        return null;
    }

    /** The command was never sent: its node refused the connection, or no node was known for its slot. */
    static final class UnreachableException extends RuntimeException {
        UnreachableException(HostPort node, Throwable cause) {
            super((node == null ? "no node" : node.host() + ":" + node.port()) + " unreachable: " + cause,
                    cause);
        }
    }

    private static String name(Object arg) {
        return switch (arg) {
            case byte[] b -> new String(b, StandardCharsets.US_ASCII).toUpperCase(Locale.ROOT);
            case String s -> s.toUpperCase(Locale.ROOT);
            default -> "";
        };
    }
}
