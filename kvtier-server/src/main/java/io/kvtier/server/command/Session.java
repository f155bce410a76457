package io.kvtier.server.command;

import io.kvtier.server.ServerContext;
import io.netty.channel.Channel;
import java.net.InetSocketAddress;
import java.net.SocketAddress;

/**
 * The per-connection state commands read and change: identity, name, protocol, authentication. Event-loop confined,
 * except that CLIENT LIST reads the fields (racy but harmless snapshots).
 */
public final class Session {
    /**
     * The longest line {@link #describe} returns: fixed fields and numbers (under 400 bytes with IPv6 addresses and
     * 20-digit numbers) plus the name, lib-name and lib-ver of at most {@link ConnectionCommands#MAX_NAME_BYTES} each.
     */
    static final int MAX_DESCRIPTION_BYTES = 400 + 3 * ConnectionCommands.MAX_NAME_BYTES;
    public final long id;
    public final ServerContext server;
    public final Channel channel;
    public final long createdMillis = System.currentTimeMillis();
    volatile String name;
    volatile String libName;
    volatile String libVersion;
    volatile boolean authenticated;
    volatile String lastCommand = "NULL";
    volatile long lastCommandMillis = createdMillis;
    volatile int protocol = 2;
    boolean closeAfterReply;
    /** READONLY: reads of slots this node backs up are served here (Redis Cluster replica reads). */
    volatile boolean readOnly;
    /** Asked for the cluster's layout (CLUSTER SLOTS/SHARDS/NODES, READONLY): gets -MOVED instead of proxying. */
    volatile boolean clusterAware;

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
        server.watches().unwatch(watch);
        watch = null;
    }

    /** Whether this connection's EXEC is running its queue, holding the transaction's keys in the key gate. */
    public boolean holdsKeyGate() {
        return holdsKeyGate;
    }

    public void commandStarted(String name) {
        lastCommand = name;
        lastCommandMillis = System.currentTimeMillis();
    }

    /** One line of CLIENT LIST / CLIENT INFO, in Redis's field order for the fields kvtier has. */
    String describe() {
        long now = System.currentTimeMillis();
        return "id=" + id + " addr=" + hostPort(channel.remoteAddress()) + " laddr=" + hostPort(channel.localAddress())
                + " fd=-1 name="
                + (name == null ? "" : name) + " age=" + (now - createdMillis) / 1000 + " idle="
                + (now - lastCommandMillis) / 1000 + " flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 qbuf=0 qbuf-free=0"
                + " argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd="
                + lastCommand + " user=default redir=-1 resp=" + protocol
                + (libName != null ? " lib-name=" + libName : " lib-name=")
                + (libVersion != null ? " lib-ver=" + libVersion : " lib-ver=");
    }

    /** host:port of a TCP address; another kind of channel (in-process, embedded) shows its own name. */
    private static String hostPort(SocketAddress a) {
        if (a instanceof InetSocketAddress inet) {
            return inet.getAddress().getHostAddress() + ":" + inet.getPort();
        }
        return a == null ? "" : a.toString().replace(' ', '_');
    }
}
