package io.kvtier.router.events;

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
 */

/**
 * Subscribes to one engine's KV events (vLLM's ZMQ protocol) and hands each batch, in order and once, to a
 * {@link Listener}, detecting sequence gaps and engine restarts and replaying what it missed. One thread per subscriber;
 * the listener is called on it.
 */
public final class EventSubscriber implements AutoCloseable {
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

    /** What the subscriber delivers, on its own thread. */
    public interface Listener {
        /** The next batch of the engine's stream. */
        void batch(KvEventBatch batch);

        /** Everything delivered before can no longer be trusted to be complete: drop it; batches follow. */
        void resync(String why);
    }

    private final String name;
    private final String endpoint;
    private final String replayEndpoint;
    private final byte[] topic;
    private final Duration replayTimeout;
    private final Listener listener;
    private final ZContext context = new ZContext(1);
    private final Thread thread;
    private final AtomicLong batches = new AtomicLong();
    private final AtomicLong gaps = new AtomicLong();
    private final AtomicLong replayed = new AtomicLong();
    private final AtomicLong resyncs = new AtomicLong();
    private final AtomicLong malformed = new AtomicLong();
    private volatile long lastSeq = -1;
    private long lastLive = -1;
    private volatile boolean closing;

    /**
     * Connects to {@code endpoint} (e.g. {@code tcp://10.0.0.5:5557}) for batches under {@code topic} (a prefix; ""
     * takes all), and to {@code replayEndpoint} (null: none) to fill gaps, each replay bounded by {@code replayTimeout}.
     */
    public EventSubscriber(String name, String endpoint, String replayEndpoint, String topic, Duration replayTimeout,
            Listener listener) {
        this.name = name;
        this.endpoint = endpoint;
        this.replayEndpoint = replayEndpoint;
        this.topic = topic.getBytes(StandardCharsets.UTF_8);
        this.replayTimeout = replayTimeout;
        this.listener = listener;
        this.thread = Thread.ofPlatform().daemon().name("kv-events-" + name).unstarted(this::run);
    }

    public EventSubscriber start() {
        thread.start();
        return this;
    }

    /** Counters: batches applied, gaps seen, batches replayed, resyncs, payloads that did not decode. */
    public record Stats(long lastSeq, long batches, long gaps, long replayed, long resyncs, long malformed) {
    }

    public Stats stats() {
        return new Stats(lastSeq, batches.get(), gaps.get(), replayed.get(), resyncs.get(), malformed.get());
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

    private void follow() {
        String monitorAddress = "inproc://disconnects-" + MONITORS.incrementAndGet();
        try (ZMQ.Socket sub = context.createSocket(SocketType.SUB);
                ZMQ.Socket monitor = context.createSocket(SocketType.PAIR)) {
            sub.setRcvHWM(100_000);
            sub.setMaxMsgSize(MAX_MESSAGE_BYTES);
            sub.setReceiveTimeOut(POLL_MS);
            sub.subscribe(topic);
            sub.monitor(monitorAddress, ZMQ.EVENT_DISCONNECTED);
            monitor.connect(monitorAddress);
            sub.connect(endpoint);
            // Catch up at once rather than wait for the engine's next batch to show the gap: an engine idle now may
            // have cached plenty before (llm-d's router replays on connect too).
            repair(0, UNBOUNDED);
            long quietSince = System.nanoTime();
            while (!closing) {
                if (ZMQ.Event.recv(monitor, ZMQ.DONTWAIT) != null) {
                    // Another process may publish once the link is back (vLLM's seq has no epoch): start over from
                    // its buffer now, not when (if ever) it publishes again.
                    if (lastSeq >= 0) {
                        resync("the connection to " + endpoint + " dropped (the engine may have restarted)");
                    }
                    lastSeq = -1;
                    lastLive = -1;
                    repair(0, UNBOUNDED);
                }
                byte[] first = sub.recv();
                long now = System.nanoTime();
                if (first != null) {
                    receive(sub, first);
                    quietSince = now;
                } else if (replayEndpoint != null && now - quietSince > IDLE_POLL_NANOS) {
                    // A batch lost right before a quiet spell shows no gap until the engine speaks again: ask.
                    repair(lastSeq + 1, UNBOUNDED);
                    quietSince = now;
                }
            }
        }
    }

    private void receive(ZMQ.Socket sub, byte[] first) {
        List<byte[]> frames = new ArrayList<>(3);
        frames.add(first);
        while (sub.hasReceiveMore()) {
            frames.add(sub.recv());
        }
        if (frames.size() != 3 || frames.get(1).length != 8) {
            malformed.incrementAndGet();
            log.warn("{}: a message of {} frames ignored: expected [topic, seq, payload]", name, frames.size());
            return;
        }
        live(ByteBuffer.wrap(frames.get(1)).getLong(), frames.get(2));
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
            if (from > 0 || lastSeq >= 0) {
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
        return closing ? "closing" : "no answer from " + replayEndpoint + " within " + replayTimeout.toMillis() + " ms";
    }

    private String replayOnce(long from, long to, List<Long> seqs, List<byte[]> payloads, long deadline) {
        long firstBy = System.nanoTime() + RETRY_MS * 1_000_000L;
        try (ZMQ.Socket dealer = context.createSocket(SocketType.DEALER)) {
            dealer.setLinger(1_000);
            dealer.setMaxMsgSize(MAX_MESSAGE_BYTES);
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
                if (n < 3 || n > 4 || frames.get(n - 2).length != 8) {
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
        KvEventBatch batch;
        try {
            batch = VllmEventCodec.decode(payload);
        } catch (MalformedEventException e) {
            malformed.incrementAndGet();
            resync("batch " + seq + " does not decode: " + e.getMessage());
            lastSeq = seq;
            return;
        }
        lastSeq = seq;
        batches.incrementAndGet();
        try {
            listener.batch(batch);
        } catch (RuntimeException e) {
            log.error("{}: batch {} could not be applied", name, seq, e);
            resync("batch " + seq + " could not be applied: " + e);
        }
    }

    private void resync(String why) {
        resyncs.incrementAndGet();
        log.warn("{}: dropping what is known of this engine: {}", name, why);
        listener.resync(why);
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
