package io.kvtier.client;

import io.netty.handler.ssl.SslContext;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Supplier;

/**
 * The connections a cluster node keeps to its peers: {@code connectionsPerPeer} {@link RespConnection}s per peer
 * address, opened on first use, taken round-robin, and replaced by the next send once they close. Thread-safe without
 * locks: a slot's connection changes only by compare-and-set of its connect future, so concurrent sends share one
 * connect attempt per slot; futures complete on I/O threads, so their callbacks must not block.
 */
public final class PeerPool implements AutoCloseable {
    private final ClientResources resources;
    private final ClientOptions options;
    private final int connectionsPerPeer;
    /** Sent with AUTH on every new connection before it takes commands; null for none. */
    private final String password;
    /** The TLS context of each new connection, asked at every connect; null for plain connections. */
    private final Supplier<SslContext> tls;
    private final ConcurrentHashMap<InetSocketAddress, Peer> peers = new ConcurrentHashMap<>();
    private volatile boolean closed;

    private PeerPool(ClientResources resources, ClientOptions options, int connectionsPerPeer, String password,
                     Supplier<SslContext> tls) {
        this.resources = resources;
        this.options = options;
        this.connectionsPerPeer = connectionsPerPeer;
        this.password = password;
        this.tls = tls;
    }

    /**
     * A pool that opens up to {@code connectionsPerPeer} connections to each peer on {@code resources}' threads, with
     * {@code options}' connect and command timeouts. Close it before {@code resources}.
     */
    public static PeerPool create(ClientResources resources, ClientOptions options, int connectionsPerPeer) {
        return create(resources, options, connectionsPerPeer, null);
    }

    /**
     * Like {@link #create(ClientResources, ClientOptions, int)}, authenticating every connection with
     * {@code AUTH password} (null: none) before it carries a command; a refused AUTH fails the connect, and with it
     * the sends waiting for it, with {@link java.io.IOException}.
     */
    public static PeerPool create(ClientResources resources, ClientOptions options, int connectionsPerPeer,
                                  String password) {
        return create(resources, options, connectionsPerPeer, password, null);
    }

    /**
     * Like {@link #create(ClientResources, ClientOptions, int, String)}, over TLS when {@code tls} is not null: each
     * new connection uses the context {@code tls} supplies at that moment (so a reloaded certificate applies to the
     * connections opened after it), and is handed out once its handshake has succeeded.
     */
    public static PeerPool create(ClientResources resources, ClientOptions options, int connectionsPerPeer,
                                  String password, Supplier<SslContext> tls) {
        if (resources == null || options == null) {
            throw new IllegalArgumentException("resources and options are required");
        }
        if (connectionsPerPeer < 1) {
            throw new IllegalArgumentException("connectionsPerPeer " + connectionsPerPeer + " must be at least 1");
        }
        return new PeerPool(resources, options, connectionsPerPeer, password, tls);
    }

    /**
     * Sends one command to {@code peer} on the next of its connections, connecting that one first if it is not open.
     * Arguments are those of {@link RespConnection#send}, whose ownership rule holds here too: ByteBuf arguments are
     * released whatever happens. Never throws for a command; the future fails instead: with the transport's exception
     * when the peer cannot be reached within the connect timeout, with {@link RespTimeoutException} or
     * {@link ConnectionClosedException} as for {@link RespConnection#send}, with IllegalArgumentException for bad
     * arguments, and with IllegalStateException after {@link #close()}.
     *
     * @throws IllegalArgumentException when {@code peer} is null
     */
    public CompletableFuture<Reply> send(InetSocketAddress peer, Object... args) {
        if (peer == null) {
            CommandEncoder.releaseArgs(args);
            throw new IllegalArgumentException("peer is required");
        }
        if (closed) {
            return refuse(args, poolClosed(peer));
        }
        Peer target = peers.computeIfAbsent(peer, Peer::new);
        if (closed) {
            // close() may have missed a peer added after it looked; whoever sees closed closes it.
            close(peer);
            return refuse(args, poolClosed(peer));
        }
        return target.send(args);
    }

    /**
     * Closes and forgets {@code peer}'s connections (a node that left the cluster), failing their pending commands
     * with {@link ConnectionClosedException} by the time it returns. A later send to {@code peer} connects afresh.
     */
    public void evict(InetSocketAddress peer) {
        if (peer != null) {
            close(peer);
        }
    }

    /**
     * Closes every connection, failing pending commands with {@link ConnectionClosedException} by the time it
     * returns; later sends fail with IllegalStateException. Idempotent.
     */
    @Override
    public void close() {
        closed = true;
        for (InetSocketAddress peer : peers.keySet()) {
            close(peer);
        }
    }

    private void close(InetSocketAddress peer) {
        Peer removed = peers.remove(peer);
        if (removed != null) {
            removed.close(new ConnectionClosedException("connection to " + peer + " closed: "
                    + (closed ? "its PeerPool was closed" : "the peer was evicted from its PeerPool"), null));
        }
    }

    private static IllegalStateException poolClosed(InetSocketAddress peer) {
        return new IllegalStateException("cannot send to " + peer + ": this PeerPool is closed; create a new one");
    }

    private static CompletableFuture<Reply> refuse(Object[] args, Throwable cause) {
        CommandEncoder.releaseArgs(args);
        return CompletableFuture.failedFuture(cause);
    }

    /** One peer's slots; a slot holds the future of its current (or last) connection, null before first use. */
    private final class Peer {
        private final InetSocketAddress address;
        private final AtomicReferenceArray<CompletableFuture<RespConnection>> slots;
        private final AtomicInteger next = new AtomicInteger();
        /** Set before the slots are emptied, so a connect started after close() sees it and fails. */
        private volatile ConnectionClosedException closedBy;

        Peer(InetSocketAddress address) {
            this.address = address;
            this.slots = new AtomicReferenceArray<>(connectionsPerPeer);
        }

        CompletableFuture<Reply> send(Object[] args) {
            CompletableFuture<RespConnection> connection = acquire(Math.floorMod(next.getAndIncrement(),
                    connectionsPerPeer));
            if (connection.state() == CompletableFuture.State.SUCCESS) {
                return sendOn(connection.resultNow(), args);
            }
            CompletableFuture<Reply> result = new CompletableFuture<>();
            connection.whenComplete((opened, error) -> {
                if (error != null) {
                    CommandEncoder.releaseArgs(args);
                    result.completeExceptionally(error instanceof CompletionException e ? e.getCause() : error);
                    return;
                }
                sendOn(opened, args).whenComplete((reply, failed) -> {
                    if (failed != null) {
                        result.completeExceptionally(failed);
                    } else if (!result.complete(reply)) {
                        Reply.release(reply);
                    }
                });
            });
            return result;
        }

        /** The slot's connection if it is open or opening, else a new connect attempt that replaces it. */
        private CompletableFuture<RespConnection> acquire(int slot) {
            while (true) {
                CompletableFuture<RespConnection> current = slots.get(slot);
                if (current != null && usable(current)) {
                    return current;
                }
                // A closed connection has already closed its channel: nothing to clean up, just replace it.
                CompletableFuture<RespConnection> fresh = new CompletableFuture<>();
                if (slots.compareAndSet(slot, current, fresh)) {
                    connect(fresh);
                    return fresh;
                }
            }
        }

        private static boolean usable(CompletableFuture<RespConnection> connection) {
            return switch (connection.state()) {
                case RUNNING -> true;
                case SUCCESS -> connection.resultNow().isOpen();
                case FAILED, CANCELLED -> false;
            };
        }

        private void connect(CompletableFuture<RespConnection> fresh) {
            ConnectionClosedException cause = closedBy;
            if (cause != null) {
                fresh.completeExceptionally(cause);
                return;
            }
            RespConnection.connect(resources, address.getHostString(), address.getPort(), options,
                            tls == null ? null : tls.get())
                    .thenCompose(this::authenticated)
                    .whenComplete((opened, error) -> {
                        if (error != null) {
                            fresh.completeExceptionally(error instanceof CompletionException e && e.getCause() != null
                                    ? e.getCause() : error);
                        } else if (!fresh.complete(opened)) {
                            opened.close(); // closed while connecting
                        }
                    });
        }

        /** {@code opened} once AUTH succeeded on it (at once without a password); closed if AUTH failed. */
        private CompletableFuture<RespConnection> authenticated(RespConnection opened) {
            if (password == null) {
                return CompletableFuture.completedFuture(opened);
            }
            return sendOn(opened, "AUTH", password).handle((reply, error) -> {
                try {
                    if (error == null && !(reply instanceof Reply.Error)) {
                        return opened;
                    }
                    opened.close();
                    throw new CompletionException(new java.io.IOException("AUTH at " + address + " failed: "
                            + (error != null ? error.getMessage() : ((Reply.Error) reply).message())));
                } finally {
                    Reply.release(reply);
                }
            });
        }

        private static CompletableFuture<Reply> sendOn(RespConnection connection, Object... args) {
            try {
                return connection.send(args);
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        }

        void close(ConnectionClosedException cause) {
            closedBy = cause;
            for (int slot = 0; slot < slots.length(); slot++) {
                CompletableFuture<RespConnection> connection = slots.getAndSet(slot, null);
                if (connection != null && !connection.completeExceptionally(cause)
                        && connection.state() == CompletableFuture.State.SUCCESS) {
                    connection.resultNow().close();
                }
            }
        }
    }
}
