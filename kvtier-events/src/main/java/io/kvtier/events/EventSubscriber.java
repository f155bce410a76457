package io.kvtier.events;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/*
 * Following one engine's event stream without ever applying a wrong state.
 *
 * vLLM numbers its batches from 0 per process (no epoch), and a SUB socket drops messages silently (high-water mark,
 * reconnects). So every message's seq is checked against the last one applied:
 * - last + 1: applied.
 * - at most last, after a replay: a batch the replay already applied; skipped.
 * - below the last seq received live: the engine restarted (its count began again): everything known of it is dropped
 *   ("resync"), and its buffer replayed from 0.
 * - above last + 1: a gap. Where the engine has a replay endpoint, the missing batches are asked for (DEALER, within a
 *   timeout); if they all come, the stream goes on as if nothing was lost. Otherwise (no replay endpoint, the buffer no
 *   longer holds them, no answer, a hole) the engine's entries are dropped and rebuilt from what follows: the map then
 *   lacks blocks stored before (a lookup finds less, never more, than the engine holds).
 * Besides, the engine's buffer is asked for on start (an engine already running is known at once), whenever the
 * connection drops (another process may publish once it is back), and after every second without a batch (a batch
 * lost right before a quiet spell shows no gap until the engine speaks again). A payload that does not decode is a
 * loss. Anything this thread fails on drops the engine's entries and starts it over: a stale map is worse than none.
 *
 * The seq frame is 8 bytes (vLLM up to now) or longer: vLLM's snapshot proposal (PR 57789) appends the publisher's
 * lifetime id (a 16-byte UUID), and a new id is a restart even where the count did not go back. A message with an empty
 * payload is an idle heartbeat: its seq is taken as a batch without events (a seq number it did not use shows as a gap
 * the next batch repairs). Neither is malformed.
 *
 * A router that kept its map across a restart resumes it ({@link #resume}): the engine's buffer is asked for from the
 * last batch the saved map had applied, and the map goes on from there only if that batch is still there with the same
 * payload (same digest: the same process published it); otherwise the saved entries are dropped (a resync) and the
 * stream starts over as above.
 *
 * A publisher with snapshots (kvtier's store events) is never left partly known: where the stream above would drop
 * what it knows and rebuild from what follows, and on start and reconnect, the subscriber asks for a snapshot instead
 * (the whole state before seq S), hands it on after a resync, and goes on from S (replayed, or live). A snapshot
 * that fails is asked for again after a pause; meanwhile what follows is applied.
 */

/**
 * Subscribes to one publisher's events (vLLM's ZMQ protocol: an engine's KV events, or a kvtier node's store events),
 * decodes each batch and hands it, in order and once, to a {@link Listener}, detecting sequence gaps and publisher
 * restarts and replaying what it missed. One thread per subscriber; the listener is called on it.
 *
 * @param <T> a decoded batch
 */
public final class EventSubscriber<T> implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EventSubscriber.class);
    private static final int POLL_MS = 100;
    private static final long RETRY_MS = 300;
    private static final long UNBOUNDED = Long.MAX_VALUE;
    /** After this long without a batch, the replay endpoint is asked whether one was missed. */
    private static final long IDLE_POLL_NANOS = 1_000_000_000L;
    /** Largest message accepted; vLLM's batches are kilobytes (a step's blocks), a replay at most its buffer. */
    private static final long MAX_MESSAGE_BYTES = 64L << 20;
    /** Most batches one replay may bring (vLLM keeps 10,000 by default). */
    private static final int MAX_REPLAY = 200_000;
    private static final AtomicLong MONITORS = new AtomicLong();
    private static final String NO_FIRST_ANSWER = "no first answer";
    private static final long SNAPSHOT_RETRY_MS = 1_000;

    /** Turns a payload into a batch. */
    public interface Decoder<T> {
        T decode(byte[] payload) throws MalformedEventException;
    }

    /** What the subscriber delivers, on its own thread. */
    public interface Listener<T> {
        /** The next batch of the stream (or a part of a snapshot). */
        void batch(T batch);

        /**
         * The next batch of the stream, with its seq and {@link #digest} of its payload: what a saved map
         * {@linkplain #resume resumes} from. Defaults to {@link #batch(Object)}.
         */
        default void batch(T batch, long seq, long digest) {
            batch(batch);
        }

        /** An idle heartbeat took seq {@code seq} (nothing changed); {@code digest} is that of its empty payload. */
        default void heartbeat(long seq, long digest) {
        }

        /** Everything delivered before can no longer be trusted to be complete: drop it; batches follow. */
        void resync(String why);
    }

    /** A 64-bit digest of a payload (CRC32C and length): tells a batch from another of the same seq. */
    public static long digest(byte[] payload) {
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(payload);
        return (crc.getValue() << 32) | (payload.length & 0xFFFFFFFFL);
    }

    private final String name;
    private final String endpoint;
    private final String replayEndpoint;
    private final byte[] topic;
    private final Duration replayTimeout;
    private final Decoder<T> decoder;
    private final boolean snapshots;
    private final Listener<T> listener;
    private final ZContext context = new ZContext(1);
    private final Thread thread;
    private final AtomicLong batches = new AtomicLong();
    private final AtomicLong gaps = new AtomicLong();
    private final AtomicLong replayed = new AtomicLong();
    private final AtomicLong resyncs = new AtomicLong();
    private final AtomicLong malformed = new AtomicLong();
    private final AtomicLong snapshotsTaken = new AtomicLong();
    private final AtomicLong heartbeats = new AtomicLong();
    /** The publisher id the seq frames carried last (vLLM's snapshot proposal); null: none yet, or 8-byte frames. */
    private byte[] publisherId;
    private boolean bind;
    private SharedEventPort shared;
    private long resumeSeq = -1;
    private long resumeDigest;
    /** A snapshot is due (snapshot publishers only): on start, after a loss, after a failed one. */
    private boolean snapshotDue;
    private long snapshotNotBefore;
    private volatile String password;
    private volatile long lastSeq = -1;
    private long lastLive = -1;
    private volatile boolean closing;

    /**
     * Connects to {@code endpoint} (e.g. {@code tcp://10.0.0.5:5557}) for batches under {@code topic} (a prefix; ""
     * takes all), and to {@code replayEndpoint} (null: none) to fill gaps, each replay bounded by {@code replayTimeout};
     * {@code snapshots}: the publisher answers snapshot requests (needs a replay endpoint).
     */
    public EventSubscriber(String name, String endpoint, String replayEndpoint, String topic, Duration replayTimeout,
            Decoder<T> decoder, boolean snapshots, Listener<T> listener) {
        if (snapshots && replayEndpoint == null) {
            throw new IllegalArgumentException("snapshots need a replay endpoint");
        }
        this.name = name;
        this.decoder = decoder;
        this.snapshots = snapshots;
        this.endpoint = endpoint;
        this.replayEndpoint = replayEndpoint;
        this.topic = topic.getBytes(StandardCharsets.UTF_8);
        this.replayTimeout = replayTimeout;
        this.listener = listener;
        this.thread = Thread.ofPlatform().daemon().name("kv-events-" + name).unstarted(this::run);
    }

    /**
     * The password the publisher asks for (kvtier's {@code --requirepass}): presented through ZMTP's PLAIN mechanism
     * on both sockets. Null or empty: none (a publisher that asks for one then refuses every connection, and no batch
     * ever comes). Call before {@link #start}.
     */
    public EventSubscriber<T> password(String password) {
        this.password = password == null || password.isEmpty() ? null : password;
        return this;
    }

    private void credentials(ZMQ.Socket socket) {
        String p = password;
        if (p != null) {
            socket.setPlainUsername("default");
            socket.setPlainPassword(p);
        }
    }

    /**
     * Binds the endpoint (e.g. {@code tcp://*:5557}) and lets the publisher connect, instead of connecting to it:
     * vLLM's publisher connects where its endpoint names a host (llm-d's "centralized" mode). Call before
     * {@link #start}.
     */
    public EventSubscriber<T> bind(boolean bind) {
        this.bind = bind;
        return this;
    }

    /**
     * Takes the messages under this subscriber's topic from {@code port}, a bound socket many publishers share, instead
     * of a socket of its own (the endpoint is then only a name). Among many connections the subscriber cannot see its
     * publisher's drop: a restart shows as the seq going back or a new publisher id, and a batch lost before a quiet
     * spell is asked for from the replay endpoint as ever. Call before {@link #start}.
     */
    public EventSubscriber<T> fedBy(SharedEventPort port) {
        this.shared = port;
        return this;
    }

    /**
     * The listener already holds the state after batch {@code seq} (a map saved before a restart), whose payload had
     * {@code digest}: on start the stream goes on from there if the publisher still has that batch (else the listener
     * gets a resync first). Not for snapshot publishers. Call before {@link #start}.
     */
    public EventSubscriber<T> resume(long seq, long digest) {
        if (snapshots) {
            throw new IllegalStateException("a snapshot publisher's state is taken from a snapshot");
        }
        this.resumeSeq = seq;
        this.resumeDigest = digest;
        return this;
    }

    public EventSubscriber<T> start() {
        thread.start();
        return this;
    }

    /**
     * Counters: batches applied, gaps seen, batches replayed, resyncs, payloads that did not decode, snapshots, idle
     * heartbeats.
     */
    public record Stats(long lastSeq, long batches, long gaps, long replayed, long resyncs, long malformed,
            long snapshots, long heartbeats) {
    }

    public Stats stats() {
        return new Stats(lastSeq, batches.get(), gaps.get(), replayed.get(), resyncs.get(), malformed.get(),
                snapshotsTaken.get(), heartbeats.get());
    }

    private void run() {
        long backoff = POLL_MS;
        while (!closing) {
            try {
                follow();
                return;
            } catch (Throwable t) { // whatever it was, the map must not keep what this thread can no longer follow
                if (closing) {
                    return;
                }
                log.error("{}: following {} failed; dropping this engine's entries and reconnecting", name, endpoint,
                        t);
                try {
                    resync("the subscriber failed: " + t);
                } catch (RuntimeException e) {
                    log.error("{}: the resync failed too", name, e);
                }
                lastSeq = -1;
                lastLive = -1;
                try {
                    Thread.sleep(backoff);
                } catch (InterruptedException e) {
                    return;
                }
                backoff = Math.min(backoff * 2, 5_000);
            }
        }
    }

    /** Where the messages come from: a socket of the subscriber's own, or its inbox at a shared port. */
    private interface Inbox extends AutoCloseable {
        /** The next message's frames, or null after {@link #POLL_MS} without one. */
        List<byte[]> next();

        /** Whether the connection dropped since last asked (only a socket of its own can tell). */
        boolean disconnected();

        @Override
        void close();
    }

    private Inbox open() {
        if (shared != null) {
            String prefix = new String(topic, StandardCharsets.UTF_8);
            SharedEventPort.Inbox queue = shared.register(prefix);
            return new Inbox() {
                @Override
                public List<byte[]> next() {
                    try {
                        return queue.poll(POLL_MS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        closing = true;
                        return null;
                    }
                }

                @Override
                public boolean disconnected() {
                    return false;
                }

                @Override
                public void close() {
                    shared.unregister(prefix, queue);
                }
            };
        }
        String monitorAddress = "inproc://disconnects-" + MONITORS.incrementAndGet();
        ZMQ.Socket sub = context.createSocket(SocketType.SUB);
        ZMQ.Socket monitor = context.createSocket(SocketType.PAIR);
        try {
            sub.setRcvHWM(100_000);
            sub.setMaxMsgSize(MAX_MESSAGE_BYTES);
            sub.setReceiveTimeOut(POLL_MS);
            sub.subscribe(topic);
            credentials(sub);
            sub.monitor(monitorAddress, ZMQ.EVENT_DISCONNECTED);
            monitor.connect(monitorAddress);
            if (bind) {
                sub.bind(endpoint);
            } else {
                sub.connect(endpoint);
            }
        } catch (RuntimeException e) {
            sub.close();
            monitor.close();
            throw e;
        }
        return new Inbox() {
            @Override
            public List<byte[]> next() {
                return Frames.read(sub, 0);
            }

            @Override
            public boolean disconnected() {
                return ZMQ.Event.recv(monitor, ZMQ.DONTWAIT) != null;
            }

            @Override
            public void close() {
                sub.close();
                monitor.close();
            }
        };
    }

    private void follow() {
        try (Inbox inbox = open()) {
            // Catch up at once rather than wait for the engine's next batch to show the gap: an engine idle now may
            // have cached plenty before (llm-d's router replays on connect too).
            if (snapshots) {
                snapshotDue = true;
                snapshotNotBefore = System.nanoTime(); // nanoTime may be negative: never compare it with 0
            } else if (resumeSeq >= 0) {
                resumeSaved();
            } else {
                repair(0, UNBOUNDED);
            }
            long quietSince = System.nanoTime();
            while (!closing) {
                if (snapshotDue && System.nanoTime() - snapshotNotBefore >= 0) {
                    snapshot();
                    quietSince = System.nanoTime();
                }
                if (inbox.disconnected()) {
                    // Another process may publish once the link is back (vLLM's seq has no epoch): start over from
                    // its buffer now, not when (if ever) it publishes again.
                    if (lastSeq >= 0) {
                        resync("the connection to " + endpoint + " dropped (the engine may have restarted)");
                    }
                    lastSeq = -1;
                    lastLive = -1;
                    if (snapshots) {
                        snapshotDue = true;
                        snapshotNotBefore = System.nanoTime();
                    } else {
                        repair(0, UNBOUNDED);
                    }
                }
                List<byte[]> frames = inbox.next();
                long now = System.nanoTime();
                if (frames != null) {
                    receive(frames);
                    quietSince = now;
                } else if (replayEndpoint != null && !snapshotDue && now - quietSince > IDLE_POLL_NANOS) {
                    // A batch lost right before a quiet spell shows no gap until the engine speaks again: ask.
                    repair(lastSeq + 1, UNBOUNDED);
                    quietSince = now;
                }
            }
        }
    }

    private void receive(List<byte[]> frames) {
        if (frames.size() != 3 || frames.get(1).length < 8) {
            malformed.incrementAndGet();
            log.warn("{}: a message of {} frames ignored: expected [topic, seq, payload]", name, frames.size());
            return;
        }
        byte[] seqFrame = frames.get(1);
        if (seqFrame.length > 8) {
            byte[] id = java.util.Arrays.copyOfRange(seqFrame, 8, seqFrame.length);
            if (publisherId != null && !java.util.Arrays.equals(id, publisherId) && lastSeq >= 0) {
                resync("the publisher's id changed (the engine restarted)");
                lastSeq = -1;
                lastLive = -1;
            }
            publisherId = id;
        }
        live(ByteBuffer.wrap(seqFrame).getLong(), frames.get(2));
    }

    /**
     * Goes on from the saved state after batch {@link #resumeSeq}, if the publisher's buffer still holds that very
     * batch; else drops the saved state and starts over from the buffer.
     */
    private void resumeSaved() {
        long seq = resumeSeq;
        resumeSeq = -1; // once: a later reconnect starts over as usual
        List<Long> seqs = new ArrayList<>();
        List<byte[]> payloads = new ArrayList<>();
        String failure = replayEndpoint == null ? "no replay endpoint" : replay(seq, seq + 1, seqs, payloads);
        if (failure == null && seqs.size() == 1 && seqs.get(0) == seq && digest(payloads.get(0)) == resumeDigest) {
            lastSeq = seq;
            log.info("{}: resuming the saved state after batch {}", name, seq);
            repair(seq + 1, UNBOUNDED);
            return;
        }
        resync("the saved state (after batch " + seq + ") is not the engine's: " + (failure != null ? failure
                : seqs.isEmpty() || seqs.get(0) != seq ? "its buffer no longer holds batch " + seq
                : "its batch " + seq + " is another (the engine restarted)"));
        lastSeq = -1;
        repair(0, UNBOUNDED);
    }

    private void live(long seq, byte[] payload) {
        if (lastLive >= 0 && seq < lastLive) {
            resync("sequence went back from " + lastLive + " to " + seq + " (the engine restarted)");
            lastSeq = -1;
        }
        lastLive = seq;
        if (seq <= lastSeq) {
            return; // replayed already
        }
        if (seq > lastSeq + 1) {
            gaps.incrementAndGet();
            repair(lastSeq + 1, seq);
        }
        deliver(seq, payload);
    }

    /**
     * Replays the batches from {@code from} up to {@code to} (exclusive; {@link #UNBOUNDED}: whatever the engine has).
     * Where the engine's buffer does not hold them all from {@code from} on without a hole (no replay endpoint, no
     * answer, the buffer starts later, a hole), what is known of the engine is dropped (unless nothing was known) and
     * only the last run without a hole is applied, and only if it reaches {@code to}: a batch before a hole could
     * store a block whose removal is in the hole. A bounded repair leaves {@code lastSeq} at {@code to - 1} either
     * way; an unbounded one that gets no answer changes nothing (nothing is known to be missing).
     */
    private void repair(long from, long to) {
        boolean bounded = to != UNBOUNDED;
        List<Long> seqs = new ArrayList<>();
        List<byte[]> payloads = new ArrayList<>();
        String failure = replayEndpoint == null ? "no replay endpoint" : replay(from, to, seqs, payloads);
        if (!bounded && (failure != null || seqs.isEmpty())) {
            return;
        }
        int start = 0;
        for (int i = 1; i < seqs.size(); i++) {
            if (seqs.get(i) != seqs.get(i - 1) + 1) {
                start = i;
            }
        }
        boolean reaches = !seqs.isEmpty() && (!bounded || seqs.get(seqs.size() - 1) == to - 1);
        boolean whole = failure == null && reaches && start == 0 && seqs.get(0) == from;
        if (!whole) {
            if (from > 0 || lastSeq >= 0 || snapshots) {
                resync("batches from " + from + (bounded ? " to " + (to - 1) : "") + " lost: " + (failure != null
                        ? failure : seqs.isEmpty() ? "the engine's buffer holds none of them"
                        : "the engine's buffer holds " + seqs.get(0) + " to " + seqs.get(seqs.size() - 1)
                        + (start > 0 ? " with a hole before " + seqs.get(start) : "")));
            }
            if (!reaches) {
                start = seqs.size();
            }
        }
        for (int i = start; i < seqs.size(); i++) {
            deliver(seqs.get(i), payloads.get(i));
            replayed.incrementAndGet();
        }
        if (bounded) {
            lastSeq = to - 1;
        }
    }

    /**
     * Asks the replay endpoint for the batches [from, to); null if its end marker came, else why not. A request that
     * gets no first answer within {@link #RETRY_MS} is sent again on a fresh socket, so that a connection whose setup
     * went wrong costs a retry, not the replay (JeroMQ 0.6.0's DEALER lost about 1 request in 40 that way).
     */
    private String replay(long from, long to, List<Long> seqs, List<byte[]> payloads) {
        long deadline = System.nanoTime() + replayTimeout.toNanos();
        while (!closing && System.nanoTime() < deadline) {
            String result = replayOnce(from, to, seqs, payloads, deadline);
            if (result == null || !result.equals(NO_FIRST_ANSWER)) {
                return result;
            }
        }
        return closing ? "closing" : "no answer from " + replayEndpoint + " within " + replayTimeout.toMillis() + " ms"
                + (password == null ? " (if the node has a password, give it)" : " (is the password right?)");
    }

    private String replayOnce(long from, long to, List<Long> seqs, List<byte[]> payloads, long deadline) {
        long firstBy = System.nanoTime() + RETRY_MS * 1_000_000L;
        try (ZMQ.Socket dealer = context.createSocket(SocketType.DEALER)) {
            // Closed only once the answer is whole or given up on: a request still queued then is unwanted (with a
            // linger, a publisher coming back got every request abandoned while it was down).
            dealer.setLinger(0);
            dealer.setMaxMsgSize(MAX_MESSAGE_BYTES);
            credentials(dealer);
            dealer.connect(replayEndpoint);
            dealer.sendMore(new byte[0]);
            dealer.send(ByteBuffer.allocate(8).putLong(from).array());
            boolean answered = false;
            while (!closing) {
                long until = answered ? deadline : Math.min(deadline, firstBy);
                long left = (until - System.nanoTime()) / 1_000_000;
                if (left <= 0) {
                    return answered ? "no end of replay from " + replayEndpoint + " within "
                            + replayTimeout.toMillis() + " ms" : NO_FIRST_ANSWER;
                }
                dealer.setReceiveTimeOut((int) Math.min(left, Integer.MAX_VALUE));
                byte[] first = dealer.recv();
                if (first == null) {
                    continue;
                }
                answered = true;
                List<byte[]> frames = new ArrayList<>(4);
                frames.add(first);
                while (dealer.hasReceiveMore()) {
                    frames.add(dealer.recv());
                }
                // ["", seq, payload], or from vLLM 0.26 on ["", topic, seq, payload]; seq -1 ends the replay.
                int n = frames.size();
                if (n < 3 || n > 4 || frames.get(n - 2).length < 8) {
                    return "a replay answer of " + n + " frames";
                }
                long seq = ByteBuffer.wrap(frames.get(n - 2)).getLong();
                if (seq == -1) {
                    return null;
                }
                if (seq < to) { // the live stream has the rest
                    if (seqs.size() >= MAX_REPLAY) {
                        return "a replay of more than " + MAX_REPLAY + " batches";
                    }
                    seqs.add(seq);
                    payloads.add(frames.get(n - 1));
                }
            }
            return "closing";
        } catch (org.zeromq.ZMQException e) {
            return "replay failed: " + e;
        }
    }

    private void deliver(long seq, byte[] payload) {
        if (payload.length == 0) { // an idle heartbeat: nothing changed
            lastSeq = seq;
            heartbeats.incrementAndGet();
            listener.heartbeat(seq, digest(payload));
            return;
        }
        T batch;
        try {
            batch = decoder.decode(payload);
        } catch (MalformedEventException e) {
            malformed.incrementAndGet();
            resync("batch " + seq + " does not decode: " + e.getMessage());
            lastSeq = seq;
            return;
        }
        lastSeq = seq;
        batches.incrementAndGet();
        try {
            listener.batch(batch, seq, digest(payload));
        } catch (RuntimeException e) {
            log.error("{}: batch {} could not be applied", name, seq, e);
            resync("batch " + seq + " could not be applied: " + e);
        }
    }

    private void resync(String why) {
        resyncs.incrementAndGet();
        log.warn("{}: dropping what is known of this {}: {}", name, snapshots ? "node" : "engine", why);
        listener.resync(why);
        if (snapshots && !snapshotDue) {
            snapshotDue = true;
            snapshotNotBefore = System.nanoTime();
        }
    }

    /**
     * Asks for the publisher's whole state; on success the listener gets a resync and then the parts, and the stream
     * goes on after the snapshot's seq. On failure, asked again after a pause (what follows is applied meanwhile).
     */
    private void snapshot() {
        List<Long> seqs = new ArrayList<>();
        List<byte[]> parts = new ArrayList<>();
        String failure = replay(EventPublisher.SNAPSHOT, UNBOUNDED, seqs, parts);
        if (failure == null && parts.isEmpty()) {
            failure = "the publisher sent no snapshot (an empty state is one empty part)";
        }
        if (failure != null) {
            log.warn("{}: snapshot failed, asking again in {} ms: {}", name, SNAPSHOT_RETRY_MS, failure);
            snapshotNotBefore = System.nanoTime() + SNAPSHOT_RETRY_MS * 1_000_000L;
            return;
        }
        snapshotDue = false;
        snapshotsTaken.incrementAndGet();
        long next = seqs.get(0); // the first batch not in the snapshot
        listener.resync("snapshot before seq " + next);
        for (int i = 0; i < parts.size(); i++) {
            T part;
            try {
                part = decoder.decode(parts.get(i));
            } catch (MalformedEventException e) {
                malformed.incrementAndGet();
                log.warn("{}: snapshot part {} does not decode: {}; asking again", name, i, e.getMessage());
                listener.resync("snapshot part does not decode");
                snapshotDue = true;
                snapshotNotBefore = System.nanoTime() + SNAPSHOT_RETRY_MS * 1_000_000L;
                return;
            }
            listener.batch(part);
        }
        lastSeq = next - 1;
        lastLive = -1;
        repair(next, UNBOUNDED); // what was published while the snapshot was taken and sent
    }

    /** Tells the thread to stop at its next step, without waiting for it; {@link #close} waits. */
    public void stopSoon() {
        closing = true;
    }

    @Override
    public void close() {
        closing = true;
        try {
            thread.join(replayTimeout.toMillis() + 2_000); // a replay in progress ends within its timeout
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        context.close();
    }
}
