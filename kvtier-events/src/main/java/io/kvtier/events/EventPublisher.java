package io.kvtier.events;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZAuth;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

/**
 * Publishes encoded event batches as vLLM's {@code ZmqEventPublisher} does: a PUB socket sending
 * {@code [topic, seq, payload]} (seq 8 bytes big-endian, from 0), and, where a replay endpoint is given, a ROUTER socket
 * that answers {@code [identity, "", start seq]} with every buffered batch from that seq on and an end marker (seq -1,
 * empty payload), with or without a topic frame as vLLM before and from 0.26 does. Keeps the last {@code bufferSteps}
 * batches. kvtier's extension: a publisher with a {@link SnapshotSource} answers the start seq {@link #SNAPSHOT} (-2)
 * with the whole current state, every part under the seq of the first batch published after it was begun, then the
 * end marker; applying the parts, then every batch from that seq on, gives the current state again.
 * {@link #publish} is thread-safe; replay requests and snapshots are served on the publisher's own thread.
 *
 * <p>Bounds: a subscriber that does not read holds at most {@link #PUB_HWM} batches (then the PUB socket drops what
 * it cannot take, and the subscriber sees a gap); a replay peer at most {@link #REPLAY_HWM} answers, and one that
 * takes none for {@link #REPLAY_SEND_TIMEOUT_MS} ms loses the rest of its answer and is ignored for
 * {@link #STALLED_MS} ms (counted: {@link #peersDropped}); at most {@link #MAX_STALLED} peers are held so at once,
 * requests from others wait until one is released. The replay buffer keeps at most {@code bufferSteps} batches and
 * {@link #BUFFER_BYTES} bytes. With a password, both sockets are ZMTP PLAIN servers: a peer must present it (any user
 * name), as a Redis client must send {@code AUTH}.
 */
public final class EventPublisher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EventPublisher.class);
    static final byte[] END_SEQ = ByteBuffer.allocate(8).putLong(-1).array();
    /** The start seq that asks for a snapshot instead of a replay. */
    public static final long SNAPSHOT = -2;
    /** Batches a PUB subscriber may have unread before the socket drops for it. */
    static final int PUB_HWM = 256;
    /** Replay answers a peer may have unread before a send waits. */
    static final int REPLAY_HWM = 16;
    static final int REPLAY_SEND_TIMEOUT_MS = 2_000;
    static final long STALLED_MS = 60_000;
    static final int MAX_STALLED = 16;
    /** Requests read while an answer waits for room, kept to be served after it. */
    static final int MAX_PENDING = 1_024;
    /** Most bytes of batches kept for replays. */
    static final long BUFFER_BYTES = 64L << 20;
    /** The ZAP domain of the PLAIN sockets. */
    private static final String ZAP_DOMAIN = "kvtier";

    /** The whole state a subscriber needs to start from, as payloads of the stream's own format. */
    public interface SnapshotSource {
        /** Hands every part of the current state to {@code part}, in order; called on the publisher's thread. */
        void snapshot(java.util.function.Consumer<byte[]> part);
    }

    private final ZContext context = new ZContext(1);
    private final ZMQ.Socket pub;
    private final ZMQ.Socket router;
    private final byte[] topic;
    private final boolean topicInReplies;
    private final SnapshotSource snapshots;
    private final int bufferSteps;
    private final ArrayDeque<Long> seqs = new ArrayDeque<>();
    private final ArrayDeque<byte[]> payloads = new ArrayDeque<>();
    private final Thread replayer;
    private final int port;
    private final int replayPort;
    private final ZAuth auth;
    /** Replay peers that stopped reading, and when they may be served again; on the replayer's thread only. */
    private final Map<String, Long> stalled = new HashMap<>();
    /** Requests read while an answer waited; on the replayer's thread only. */
    private final ArrayDeque<List<byte[]>> pending = new ArrayDeque<>();
    private final AtomicLong peersDropped = new AtomicLong();
    private final AtomicLong requestsIgnored = new AtomicLong();
    private long bufferedBytes;
    private long nextSeq;
    /** Appended to every seq frame (vLLM's snapshot proposal: the publisher's lifetime UUID); null: 8-byte frames. */
    private volatile byte[] publisherId;
    private volatile boolean closing;

    /**
     * Binds {@code endpoint} (e.g. {@code tcp://*:5557}) and, unless null, {@code replayEndpoint};
     * {@code topicInReplies}: replay answers carry the topic frame (vLLM from 0.26 on); {@code snapshots} (null: none)
     * answers snapshot requests.
     */
    public EventPublisher(String endpoint, String replayEndpoint, String topic, boolean topicInReplies,
            int bufferSteps, SnapshotSource snapshots) {
        this(endpoint, replayEndpoint, topic, topicInReplies, bufferSteps, snapshots, null);
    }

    /** As above; {@code password} (null or empty: none) is what every peer of both sockets must present. */
    public EventPublisher(String endpoint, String replayEndpoint, String topic, boolean topicInReplies,
            int bufferSteps, SnapshotSource snapshots, String password) {
        this(endpoint, replayEndpoint, topic, topicInReplies, bufferSteps, snapshots, password, false);
    }

    /**
     * As above; {@code connect}: the PUB socket connects to {@code endpoint} (a subscriber's bound port, as vLLM's
     * publisher does where its endpoint names a host) instead of binding it; {@link #port()} is then -1.
     */
    public EventPublisher(String endpoint, String replayEndpoint, String topic, boolean topicInReplies,
            int bufferSteps, SnapshotSource snapshots, String password, boolean connect) {
        if (bufferSteps < 1) {
            throw new IllegalArgumentException("buffer steps " + bufferSteps + " must be at least 1");
        }
        this.topic = topic.getBytes(StandardCharsets.UTF_8);
        this.topicInReplies = topicInReplies;
        this.snapshots = snapshots;
        this.bufferSteps = bufferSteps;
        boolean plain = password != null && !password.isEmpty();
        // The ZAP handler must be up before a PLAIN socket binds: without one, JeroMQ lets every peer in.
        auth = plain ? new ZAuth(context, "kv-events-auth", Map.of("PLAIN", new PasswordCheck(password))) : null;
        pub = context.createSocket(SocketType.PUB);
        pub.setSndHWM(PUB_HWM);
        pub.setLinger(0);
        if (plain) {
            pub.setZAPDomain(ZAP_DOMAIN);
            pub.setPlainServer(true);
        }
        if (connect) {
            pub.connect(endpoint);
            port = -1;
        } else {
            pub.bind(endpoint);
            port = portOf(pub);
        }
        if (replayEndpoint == null) {
            router = null;
            replayer = null;
            replayPort = -1;
        } else {
            router = context.createSocket(SocketType.ROUTER);
            router.setReceiveTimeOut(100);
            // A plain ROUTER drops what a peer's full pipe cannot take, silently: a replay or snapshot would arrive
            // with holes but its end marker. Mandatory routing makes a send to a full pipe wait instead (at most the
            // send timeout, then it fails: the answer is cut short, without its end marker, and the peer retries),
            // and one to a peer that is gone fail at once.
            router.setRouterMandatory(true);
            router.setSndHWM(REPLAY_HWM);
            router.setSendTimeOut(REPLAY_SEND_TIMEOUT_MS);
            router.setLinger(0);
            if (plain) {
                router.setZAPDomain(ZAP_DOMAIN);
                router.setPlainServer(true);
            }
            router.bind(replayEndpoint);
            replayPort = portOf(router);
            // From here on only the replayer touches the ROUTER socket: a ZMQ socket is not thread-safe (reading
            // its last endpoint from another thread lost the first replay request now and then).
            replayer = Thread.ofPlatform().daemon().name("kv-events-replay").start(this::serveReplays);
        }
    }

    /** The port the PUB socket is bound to (for an endpoint bound to port 0 or {@code *}); -1 where it connects. */
    public int port() {
        return port;
    }

    /** The port the replay socket is bound to; -1 without one. */
    public int replayPort() {
        return replayPort;
    }

    private static int portOf(ZMQ.Socket socket) {
        String endpoint = socket.getLastEndpoint();
        return Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
    }

    /** Sends one encoded batch, and keeps it for replay; returns its sequence number. */
    public long publish(byte[] payload) {
        return publish(payload, true);
    }

    /**
     * Keeps a batch for replay without sending it, as a PUB socket at its high-water mark drops one: a fault to inject
     * (tests, benchmarks). Returns its sequence number.
     */
    public long drop(byte[] payload) {
        return publish(payload, false);
    }

    /**
     * Uses up a sequence number without a batch, neither sent nor kept: events were lost before they could be
     * published (a full queue). Subscribers see a gap no replay fills, and start over.
     */
    public synchronized long skip() {
        return nextSeq++;
    }

    /**
     * From now on every seq frame, live and replayed, is the 8-byte seq followed by {@code id} (vLLM's snapshot
     * proposal, PR 57789, sends a 24-byte frame: seq and the publisher's 16-byte lifetime UUID); null: 8 bytes.
     */
    public void publisherId(byte[] id) {
        this.publisherId = id == null ? null : id.clone();
    }

    /**
     * Sends an idle heartbeat: a message with an empty payload under the next seq, not kept for replay (the harder
     * case for a subscriber: a replay across it shows a hole). Returns its seq.
     */
    public synchronized long heartbeat() {
        long seq = nextSeq++;
        pub.sendMore(topic);
        pub.sendMore(seqFrame(seq));
        pub.send(new byte[0]);
        return seq;
    }

    private byte[] seqFrame(long seq) {
        byte[] id = publisherId;
        ByteBuffer b = ByteBuffer.allocate(8 + (id == null ? 0 : id.length)).putLong(seq);
        if (id != null) {
            b.put(id);
        }
        return b.array();
    }

    /** The seq of the last batch published (or skipped); -1 before any. */
    public synchronized long lastSeq() {
        return nextSeq - 1;
    }

    private synchronized long publish(byte[] payload, boolean send) {
        long seq = nextSeq++;
        if (send) {
            pub.sendMore(topic);
            pub.sendMore(seqFrame(seq));
            pub.send(payload);
        }
        synchronized (seqs) {
            seqs.addLast(seq);
            payloads.addLast(payload);
            bufferedBytes += payload.length;
            while (seqs.size() > bufferSteps || (bufferedBytes > BUFFER_BYTES && seqs.size() > 1)) {
                seqs.removeFirst();
                bufferedBytes -= payloads.removeFirst().length;
            }
        }
        return seq;
    }

    private void serveReplays() {
        while (!closing) {
            try {
                List<byte[]> request = pending.isEmpty() ? receive(0) : pending.removeFirst();
                if (request == null) {
                    continue;
                }
                byte[] identity = request.get(0);
                List<byte[]> rest = request.subList(1, request.size());
                if (rest.size() != 2 || rest.get(1).length != 8) {
                    log.warn("replay request of {} frames ignored: expected [\"\", start seq]", rest.size() + 1);
                    continue;
                }
                if (!admitted(identity)) {
                    requestsIgnored.incrementAndGet();
                    continue;
                }
                long from = ByteBuffer.wrap(rest.get(1)).getLong();
                try {
                    if (from == SNAPSHOT) {
                        snapshot(identity);
                    } else {
                        replay(identity, from);
                    }
                } catch (PeerGone e) {
                    if (e.stalled) {
                        stalled.put(key(identity), System.nanoTime() + STALLED_MS * 1_000_000L);
                        long n = peersDropped.incrementAndGet();
                        log.warn("a replay peer took no answer for {} ms: its answer cut short, its requests ignored "
                                + "for {} s ({} peers dropped so far)", REPLAY_SEND_TIMEOUT_MS, STALLED_MS / 1000, n);
                    }
                }
            } catch (org.zeromq.ZMQException e) {
                if (!closing) {
                    log.warn("replay socket failed: {}", e.toString());
                }
                return;
            }
        }
    }

    /** The next request on the ROUTER socket, [identity, frames...]; waits its receive timeout, or not at all. */
    private List<byte[]> receive(int flags) {
        return Frames.read(router, flags);
    }

    /**
     * Reads what has come in while an answer waits, keeping at most {@link #MAX_PENDING} requests for later (the
     * rest are dropped, counted as ignored). Reading is also what lets the pipe of a peer that has gone finish
     * closing: JeroMQ ends it only once its end marker has been read, and until then a send to it waits as one to a
     * full pipe would.
     */
    private void readPending() {
        List<byte[]> request;
        while ((request = receive(ZMQ.DONTWAIT)) != null) {
            if (pending.size() < MAX_PENDING) {
                pending.addLast(request);
            } else {
                requestsIgnored.incrementAndGet();
            }
        }
    }

    /**
     * Whether a request from {@code identity} is served now: not from a peer that stalled lately, and, while
     * {@link #MAX_STALLED} peers that stopped reading may still hold answers, from nobody new.
     */
    private boolean admitted(byte[] identity) {
        long now = System.nanoTime();
        for (Iterator<Long> it = stalled.values().iterator(); it.hasNext(); ) {
            if (now - it.next() >= 0) {
                it.remove();
            }
        }
        return !stalled.containsKey(key(identity)) && stalled.size() < MAX_STALLED;
    }

    private static String key(byte[] identity) {
        return java.util.HexFormat.of().formatHex(identity);
    }

    /** Peers whose answers were cut short because they took none for the send timeout. */
    public long peersDropped() {
        return peersDropped.get();
    }

    /** Requests not served: from a peer dropped lately, or while too many were. */
    public long requestsIgnored() {
        return requestsIgnored.get();
    }

    /** A send to a replay peer failed: it took nothing for the send timeout (stalled), or it is gone. */
    private static final class PeerGone extends RuntimeException {
        final boolean stalled;

        PeerGone(boolean stalled) {
            super(null, null, false, false);
            this.stalled = stalled;
        }
    }

    private void replay(byte[] identity, long from) {
        List<Long> s;
        List<byte[]> p;
        synchronized (seqs) {
            s = new ArrayList<>(seqs);
            p = new ArrayList<>(payloads);
        }
        boolean first = true;
        for (int i = 0; i < s.size(); i++) {
            if (s.get(i) >= from) {
                send(identity, seqFrame(s.get(i)), p.get(i), first);
                first = false;
            }
        }
        send(identity, END_SEQ, new byte[0], first);
    }

    private void snapshot(byte[] identity) {
        if (snapshots == null) {
            send(identity, END_SEQ, new byte[0], true); // an empty answer: a subscriber asking for one sees it fail
            return;
        }
        // Every batch from this seq on is newer than the parts (it may repeat changes they show: applying it after them
        // still ends in the current state).
        byte[] at = ByteBuffer.allocate(8).putLong(lastSeq() + 1).array();
        boolean[] first = {true};
        try {
            snapshots.snapshot(part -> {
                send(identity, at, part, first[0]);
                first[0] = false;
            });
        } catch (PeerGone e) {
            throw e;
        } catch (RuntimeException e) {
            log.error("snapshot failed", e);
            return; // no end marker: the subscriber times out and tries again
        }
        send(identity, END_SEQ, new byte[0], first[0]);
    }

    private void send(byte[] identity, byte[] seq, byte[] payload, boolean first) {
        // With mandatory routing the identity frame is where a full pipe or a gone peer shows (JeroMQ checks the
        // route on the first frame; the others of the message then always go). The first message of an answer is
        // tried without waiting: a pipe that takes nothing then is one whose peer has gone (a subscriber abandons a
        // request it got no answer to within its retry time, and its closing pipe refuses without failing), or one
        // still full of an answer the peer never read; either way it is skipped at once, not waited on.
        // A later message waits for room at most the send timeout; while it does, what comes in is read (see
        // readPending), so that a peer gone in the middle of its answer shows as gone, not as one that stopped reading.
        long deadline = System.nanoTime() + REPLAY_SEND_TIMEOUT_MS * 1_000_000L;
        long pauseNanos = 50_000;
        while (true) {
            boolean routed;
            try {
                routed = router.send(identity, ZMQ.SNDMORE | ZMQ.DONTWAIT);
            } catch (org.zeromq.ZMQException e) {
                if (closing) {
                    throw e;
                }
                routed = false;
            }
            if (routed) {
                break;
            }
            boolean full = router.errno() == ZMQ.Error.EAGAIN.getCode();
            if (!full || first || closing) {
                throw new PeerGone(false);
            }
            if (System.nanoTime() - deadline >= 0) {
                throw new PeerGone(true);
            }
            readPending();
            java.util.concurrent.locks.LockSupport.parkNanos(pauseNanos);
            pauseNanos = Math.min(pauseNanos * 2, 2_000_000);
        }
        router.sendMore(new byte[0]);
        if (topicInReplies) {
            router.sendMore(payload.length == 0 ? new byte[0] : topic);
        }
        router.sendMore(seq);
        router.send(payload);
    }

    /** ZAP for PLAIN: the password must match (compared in constant time); the user name is not checked. */
    private static final class PasswordCheck implements ZAuth.Auth {
        private final byte[] password;
        private final AtomicLong lastWarning = new AtomicLong(System.nanoTime() - 20_000_000_000L);

        PasswordCheck(String password) {
            this.password = password.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public boolean configure(ZMsg msg, boolean verbose) {
            return true;
        }

        @Override
        public boolean authorize(ZAuth.ZapRequest request, boolean verbose) {
            boolean ok = request.password != null
                    && MessageDigest.isEqual(password, request.password.getBytes(StandardCharsets.UTF_8));
            if (!ok) {
                long now = System.nanoTime();
                long last = lastWarning.get();
                if (now - last > 10_000_000_000L && lastWarning.compareAndSet(last, now)) {
                    log.warn("store events: a peer from {} gave a wrong password (said at most every 10 s)",
                            request.address);
                }
            } else {
                request.userId = request.username;
            }
            return ok;
        }
    }

    @Override
    public void close() {
        closing = true;
        if (replayer != null) {
            try {
                replayer.join(2_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (auth != null) {
            auth.destroy();
        }
        context.close();
    }
}
