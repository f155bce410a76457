package io.kvtier.server.command;

import io.kvtier.resp.RequestBudget;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.unix.UnixChannel;
import java.net.InetSocketAddress;
import java.net.SocketAddress;

/**
 * The per-connection state commands read and change: identity, name, protocol, authentication. Event-loop confined,
 * except that CLIENT LIST reads the fields (racy but harmless snapshots).
 */
public final class Session {
    /**
     * The longest line {@link #describe} returns: fixed fields and numbers (under 600 bytes: 214 of field names and
     * constants, two scoped IPv6 addresses, 19-digit numbers, the longest command name) plus the name, lib-name and
     * lib-ver of at most {@link ConnectionCommands#MAX_NAME_BYTES} each.
     */
    static final int MAX_DESCRIPTION_BYTES = 600 + 3 * ConnectionCommands.MAX_NAME_BYTES;
    public final long id;
    public final ServerContext server;
    public final Channel channel;
    public final long createdMillis = System.currentTimeMillis();
    volatile String name;
    volatile String libName;
    volatile String libVersion;
    volatile boolean authenticated;
    /**
     * CLIENT LIST's cmd and idle. Written per command by the connection's event loop, so plain fields: a volatile
     * store per command cost a fence each; a CLIENT LIST on another loop may see them a command late.
     */
    String lastCommand = "NULL";
    long lastCommandNanos = System.nanoTime();
    /**
     * System.nanoTime() when this connection's current command started: a cluster call's budget (the peer timeout)
     * counts from there, so waiting for keys, queueing on a peer connection and retries all come out of it.
     */
    long commandStartNanos = System.nanoTime();
    /**
     * On a connection from another node: the smallest (arrival - deadline) of its peer requests so far, on this node's
     * wall clock against the sender's. It holds the two clocks' offset, so lateness is measured against it rather
     * than against the clocks agreeing (see PeerCommands.refuseLate). Long.MAX_VALUE before the first.
     */
    long peerDelayBaseline = Long.MAX_VALUE;
    /**
     * The cluster version the values a command stores carry while it runs as a slot's primary (ClusterRouter sets it
     * around the command's synchronous part; the puts read it when they start), 0 outside that: one version per
     * written state, the same on every node that holds it (see Replicator).
     */
    long writeVersion;
    volatile int protocol = 2;
    boolean closeAfterReply;
    /** READONLY: reads of slots this node backs up are served here (Redis Cluster replica reads). */
    volatile boolean readOnly;
    /** CLIENT NO-TOUCH ON: this client's reads leave the eviction policy and the hit statistics as they were. */
    volatile boolean noTouch;
    /** Asked for the cluster's layout (CLUSTER SLOTS/SHARDS/NODES, READONLY): gets -MOVED instead of proxying. */
    volatile boolean clusterAware;
    private volatile RequestBudget.Account requestHeap;
    private volatile int queryBuffer;
    /**
     * Bytes of the command running now, as it arrived (its handler sets it; event-loop confined): while it runs, a
     * command is still part of its client's input buffer in Redis, which CLIENT LIST and CLIENT INFO of the client itself
     * show in qbuf.
     */
    public int commandBytes;
    private volatile int queryBufferFree;

    /** MULTI ... EXEC: the commands queued so far; null outside a transaction. Event-loop confined. */
    Transaction transaction;
    /** WATCH: this connection's watched keys; null when it watches none. Event-loop confined. */
    Watches.Watch watch;
    /**
     * While EXEC runs its queue: this connection holds every key of the transaction exclusively in the
     * {@link KeyGate}, so a queued command (a script) must not try to take them again (it would wait for itself).
     */
    volatile boolean holdsKeyGate;

    public Session(long id, ServerContext server, Channel channel) {
        this.id = id;
        this.server = server;
        this.channel = channel;
        this.authenticated = server.options().requirePass() == null;
    }

    public boolean authenticated() {
        return authenticated;
    }

    public int protocol() {
        return protocol;
    }

    /** Whether the connection should be closed once the pending replies are sent (QUIT). */
    public boolean closeAfterReply() {
        return closeAfterReply;
    }

    /**
     * Whether commands are being queued (between MULTI and EXEC or DISCARD): the request memory of queued commands
     * stays charged to the connection until the transaction ends.
     */
    public boolean inTransaction() {
        return transaction != null;
    }

    /** Commands queued in the transaction in progress, -1 outside one (CLIENT LIST's {@code multi}). */
    public int transactionSize() {
        Transaction t = transaction;
        return t == null ? -1 : t.size();
    }

    /** Ends the transaction (if any) without running it and forgets watched keys: DISCARD, RESET, a closed connection. */
    public void discardTransaction() {
        if (transaction != null) {
            transaction.release();
            transaction = null;
        }
        unwatch();
    }

    void unwatch() {
        Watches.Watch w = watch;
        server.watches().unwatch(w);
        watch = null;
        if (w != null) {
            releaseHeap(w.charged());
        }
    }

    /**
     * Charges {@code n} bytes this connection's state holds (watched keys) to its share of the client heap budget,
     * evicting larger connections if need be; false if this one holds the most and the budget is still exceeded.
     */
    boolean chargeHeap(long n) {
        RequestBudget.Account heap = requestHeap;
        return heap == null || (!heap.evicted() && heap.charge(n));
    }

    /** Gives back what {@link #chargeHeap} took (never more than the account still holds: closed, it holds none). */
    void releaseHeap(long n) {
        RequestBudget.Account heap = requestHeap;
        if (heap != null && n > 0) {
            heap.release(Math.min(n, heap.held()));
        }
    }

    /** Whether this connection's EXEC is running its queue, holding the transaction's keys in the key gate. */
    public boolean holdsKeyGate() {
        return holdsKeyGate;
    }

    /** The connection's command {@code name} starts now ({@code nowNanos}: System.nanoTime(), read once per command). */
    public void commandStarted(String name, long nowNanos) {
        lastCommand = name;
        lastCommandNanos = nowNanos;
        commandStartNanos = nowNanos;
    }

    /** This connection's share of the request heap: argv-mem in {@link #describe}. Set once by its handler. */
    public void requestHeap(RequestBudget.Account account) {
        requestHeap = account;
    }

    /** The handler's input buffer after a batch of commands: unparsed bytes and room left (qbuf, qbuf-free). */
    public void queryBuffer(int used, int free) {
        queryBuffer = used;
        queryBufferFree = free;
    }

    /** Bytes this connection's requests hold: the input buffer with its free room, and arguments on the heap. */
    long inputBufferBytes() {
        RequestBudget.Account heap = requestHeap;
        return (long) queryBuffer + queryBufferFree + (heap == null ? 0 : heap.held());
    }

    /** Bytes of replies written but not yet taken by the socket. */
    long outputBufferBytes() {
        ChannelOutboundBuffer out = channel.unsafe().outboundBuffer();
        return out == null ? 0 : out.totalPendingWriteBytes();
    }

    /**
     * One line of CLIENT LIST / CLIENT INFO: Redis 7.0's fields in its order, then lib-name and lib-ver (Redis 7.2).
     * Memory fields map to kvtier's buffers: qbuf and qbuf-free are the input buffer, argv-mem the request's heap
     * (large values land off-heap and are not counted), obl 0 (no fixed reply buffer), oll and omem the replies the
     * socket has not taken, tot-mem their sum; rbs and rbp 0 (replies are handed to Netty as they are built).
     */
    String describe(Session asking) {
        long now = System.currentTimeMillis();
        RequestBudget.Account heap = requestHeap;
        long argv = heap == null ? 0 : heap.held();
        int qbuf = queryBuffer + (asking == this ? commandBytes : 0);
        int qbufFree = queryBufferFree;
        ChannelOutboundBuffer out = channel.unsafe().outboundBuffer();
        long omem = out == null ? 0 : out.totalPendingWriteBytes();
        StringBuilder flags = new StringBuilder(3); // in Redis's order
        if (transaction != null) {
            flags.append('x');
        }
        if (closeAfterReply) {
            flags.append('c');
        }
        if (readOnly) {
            flags.append('r');
        }
        if (noTouch) {
            flags.append('T');
        }
        if (flags.isEmpty()) {
            flags.append('N');
        }
        boolean reading = channel.config().isAutoRead();
        String events = (reading ? "r" : "") + (omem > 0 ? "w" : "");
        return "id=" + id + " addr=" + hostPort(channel.remoteAddress()) + " laddr=" + hostPort(channel.localAddress())
                + " fd=" + (channel instanceof UnixChannel unix ? unix.fd().intValue() : -1)
                + " name=" + (name == null ? "" : name) + " age=" + (now - createdMillis) / 1000
                + " idle=" + (System.nanoTime() - lastCommandNanos) / 1_000_000_000 + " flags=" + flags
                + " db=0 sub=0 psub=0 ssub=0"
                + " multi=" + transactionSize() + " qbuf=" + qbuf + " qbuf-free=" + qbufFree + " argv-mem=" + argv
                + " multi-mem=0 rbs=0 rbp=0 obl=0 oll=" + (out == null ? 0 : out.size()) + " omem=" + omem
                + " tot-mem=" + ((long) qbuf + qbufFree + argv + omem) + " events=" + events + " cmd=" + lastCommand
                + " user=default redir=-1 resp=" + protocol
                + (libName != null ? " lib-name=" + libName : " lib-name=")
                + (libVersion != null ? " lib-ver=" + libVersion : " lib-ver=");
    }

    /** host:port of a TCP address; another kind of channel (in-process, embedded) shows its own name. */
    static String hostPort(SocketAddress a) {
        if (a instanceof InetSocketAddress inet) {
            return inet.getAddress().getHostAddress() + ":" + inet.getPort();
        }
        return a == null ? "" : a.toString().replace(' ', '_');
    }
}
