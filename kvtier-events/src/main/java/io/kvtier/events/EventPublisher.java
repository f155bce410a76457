package io.kvtier.events;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * Publishes encoded event batches as vLLM's {@code ZmqEventPublisher} does: a PUB socket sending
 * {@code [topic, seq, payload]} (seq 8 bytes big-endian, from 0), and, where a replay endpoint is given, a ROUTER socket
 * that answers {@code [identity, "", start seq]} with every buffered batch from that seq on and an end marker (seq -1,
 * empty payload), with or without a topic frame as vLLM before and from 0.26 does. Keeps the last {@code bufferSteps}
 * batches. kvtier's extension: a publisher with a {@link SnapshotSource} answers the start seq {@link #SNAPSHOT} (-2)
 * with the whole current state, every part under the seq of the first batch published after it was begun, then the
 * end marker; applying the parts, then every batch from that seq on, gives the current state again.
 * {@link #publish} is thread-safe; replay requests and snapshots are served on the publisher's own thread.
 */
public final class EventPublisher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EventPublisher.class);
    static final byte[] END_SEQ = ByteBuffer.allocate(8).putLong(-1).array();
    /** The start seq that asks for a snapshot instead of a replay. */
    public static final long SNAPSHOT = -2;

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
    private long nextSeq;
    private volatile boolean closing;

    /**
     * Binds {@code endpoint} (e.g. {@code tcp://*:5557}) and, unless null, {@code replayEndpoint};
     * {@code topicInReplies}: replay answers carry the topic frame (vLLM from 0.26 on); {@code snapshots} (null: none)
     * answers snapshot requests.
     */
    public EventPublisher(String endpoint, String replayEndpoint, String topic, boolean topicInReplies,
            int bufferSteps, SnapshotSource snapshots) {
        if (bufferSteps < 1) {
            throw new IllegalArgumentException("buffer steps " + bufferSteps + " must be at least 1");
        }
        this.topic = topic.getBytes(StandardCharsets.UTF_8);
        this.topicInReplies = topicInReplies;
        this.snapshots = snapshots;
        this.bufferSteps = bufferSteps;
        pub = context.createSocket(SocketType.PUB);
        pub.setSndHWM(100_000);
        pub.bind(endpoint);
        port = portOf(pub);
        if (replayEndpoint == null) {
            router = null;
            replayer = null;
            replayPort = -1;
        } else {
            router = context.createSocket(SocketType.ROUTER);
            router.setReceiveTimeOut(100);
            // A ROUTER drops what a peer's full pipe cannot take, silently: a replay or snapshot longer than the
            // high-water mark would arrive with holes but its end marker. No limit here; a replay is bounded by the
            // buffer, a snapshot by the state, and the pipe goes with the peer.
            router.setSndHWM(0);
            router.bind(replayEndpoint);
            replayPort = portOf(router);
            // From here on only the replayer touches the ROUTER socket: a ZMQ socket is not thread-safe (reading
            // its last endpoint from another thread lost the first replay request now and then).
            replayer = Thread.ofPlatform().daemon().name("kv-events-replay").start(this::serveReplays);
        }
    }

    /** The port the PUB socket is bound to (for an endpoint bound to port 0 or {@code *}). */
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

    /** The seq of the last batch published (or skipped); -1 before any. */
    public synchronized long lastSeq() {
        return nextSeq - 1;
    }

    private synchronized long publish(byte[] payload, boolean send) {
        long seq = nextSeq++;
        if (send) {
            pub.sendMore(topic);
            pub.sendMore(ByteBuffer.allocate(8).putLong(seq).array());
            pub.send(payload);
        }
        synchronized (seqs) {
            seqs.addLast(seq);
            payloads.addLast(payload);
            if (seqs.size() > bufferSteps) {
                seqs.removeFirst();
                payloads.removeFirst();
            }
        }
        return seq;
    }

    private void serveReplays() {
        while (!closing) {
            try {
                byte[] identity = router.recv();
                if (identity == null) {
                    continue;
                }
                List<byte[]> rest = new ArrayList<>();
                while (router.hasReceiveMore()) {
                    rest.add(router.recv());
                }
                if (rest.size() != 2 || rest.get(1).length != 8) {
                    log.warn("replay request of {} frames ignored: expected [\"\", start seq]", rest.size() + 1);
                    continue;
                }
                long from = ByteBuffer.wrap(rest.get(1)).getLong();
                if (from == SNAPSHOT) {
                    snapshot(identity);
                } else {
                    replay(identity, from);
                }
            } catch (org.zeromq.ZMQException e) {
                if (!closing) {
                    log.warn("replay socket failed: {}", e.toString());
                }
                return;
            }
        }
    }

    private void replay(byte[] identity, long from) {
        List<Long> s;
        List<byte[]> p;
        synchronized (seqs) {
            s = new ArrayList<>(seqs);
            p = new ArrayList<>(payloads);
        }
        for (int i = 0; i < s.size(); i++) {
            if (s.get(i) >= from) {
                send(identity, ByteBuffer.allocate(8).putLong(s.get(i)).array(), p.get(i));
            }
        }
        send(identity, END_SEQ, new byte[0]);
    }

    private void snapshot(byte[] identity) {
        if (snapshots == null) {
            send(identity, END_SEQ, new byte[0]); // an empty answer: a subscriber asking for one sees it fail
            return;
        }
        // Every batch from this seq on is newer than the parts (it may repeat changes they show: applying it after them
        // still ends in the current state).
        byte[] at = ByteBuffer.allocate(8).putLong(lastSeq() + 1).array();
        try {
            snapshots.snapshot(part -> send(identity, at, part));
        } catch (RuntimeException e) {
            log.error("snapshot failed", e);
            return; // no end marker: the subscriber times out and tries again
        }
        send(identity, END_SEQ, new byte[0]);
    }

    private void send(byte[] identity, byte[] seq, byte[] payload) {
        router.sendMore(identity);
        router.sendMore(new byte[0]);
        if (topicInReplies) {
            router.sendMore(payload.length == 0 ? new byte[0] : topic);
        }
        router.sendMore(seq);
        router.send(payload);
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
        context.close();
    }
}
