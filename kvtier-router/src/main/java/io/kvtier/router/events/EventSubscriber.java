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
 * - below the last seq received live, or the first after the connection dropped: the engine may have restarted (its
 *   count began again): everything known of it is dropped ("resync"), and the stream is followed as from the start.
 * - above last + 1: a gap. Where the engine has a replay endpoint, the missing batches are asked for (DEALER, within a
 *   timeout); if they all come, the stream goes on as if nothing was lost. Otherwise (no replay endpoint, the buffer no
 *   longer holds them, no answer) the engine's entries are dropped and rebuilt from what follows: the map then lacks
 *   blocks stored before (a lookup finds less, never more, than the engine holds; the engine re-announces nothing).
 * A payload that does not decode is a gap of one batch. On start the engine's whole replay buffer is asked for at
 * once, so that an engine already running is known before its next batch; without a replay endpoint the first
 * message after start is taken as it comes.
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
    private boolean disconnected;
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
        try (ZMQ.Socket sub = context.createSocket(SocketType.SUB);
                ZMQ.Socket monitor = context.createSocket(SocketType.PAIR)) {
            sub.setRcvHWM(100_000);
            sub.setReceiveTimeOut(POLL_MS);
            sub.subscribe(topic);
            sub.monitor("inproc://disconnects", ZMQ.EVENT_DISCONNECTED);
            monitor.connect("inproc://disconnects");
            sub.connect(endpoint);
            catchUp();
            while (!closing) {
                if (ZMQ.Event.recv(monitor, ZMQ.DONTWAIT) != null) {
                    disconnected = true;
                }
                byte[] first = sub.recv();
                if (first != null) {
                    receive(sub, first);
                }
            }
        } catch (org.zeromq.ZMQException e) {
            if (!closing) {
                log.error("{}: event stream failed; no more events from {}", name, endpoint, e);
            }
        }
    }

    /**
     * On start, asks for the engine's whole replay buffer rather than waiting for its next batch to show the gap: an
     * engine that is idle now may have cached plenty before (llm-d's router replays on connect too). The last run
     * without holes is applied; anything missed between the answer and the SUB socket's joining is a gap later.
     */
    private void catchUp() {
        if (replayEndpoint == null) {
            return;
        }
        List<Long> seqs = new ArrayList<>();
        List<byte[]> payloads = new ArrayList<>();
        String failure = replay(0, Long.MAX_VALUE, seqs, payloads);
        if (failure != null) {
            log.info("{}: no replay on start ({}); following the live stream", name, failure);
            return;
        }
        int first = 0;
        for (int i = 1; i < seqs.size(); i++) {
            if (seqs.get(i) != seqs.get(i - 1) + 1) {
                first = i;
            }
        }
        for (int i = first; i < seqs.size(); i++) {
            deliver(seqs.get(i), payloads.get(i));
            replayed.incrementAndGet();
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
        if (disconnected) {
            // Another process may be publishing now (vLLM's seq has no epoch): start over, replaying its buffer.
            disconnected = false;
            if (lastSeq >= 0) {
                resync("reconnected to " + endpoint + " (the engine may have restarted)");
            }
            lastSeq = -1;
            lastLive = -1;
        }
        live(ByteBuffer.wrap(frames.get(1)).getLong(), frames.get(2));
    }

    private void live(long seq, byte[] payload) {
        if (lastLive >= 0 && seq < lastLive) {
            resync("sequence went back from " + lastLive + " to " + seq + " (the engine restarted)");
            lastSeq = seq - 1;
        }
        lastLive = seq;
        if (seq <= lastSeq) {
            return; // replayed already
        }
        if (seq > lastSeq + 1) {
            gaps.incrementAndGet();
            fill(lastSeq + 1, seq);
        }
        if (seq > lastSeq) {
            deliver(seq, payload);
        }
    }

    /**
     * Replays [from, to). Where that fails (no replay endpoint, the buffer no longer holds {@code from}, no answer, a
     * hole), resyncs and applies only the replayed run that ends right before {@code to}: a batch before a hole could
     * store a block whose removal is in the hole.
     */
    private void fill(long from, long to) {
        List<Long> seqs = new ArrayList<>();
        List<byte[]> payloads = new ArrayList<>();
        String failure = replayEndpoint == null ? "no replay endpoint" : replay(from, to, seqs, payloads);
        int first = 0;
        if (failure == null && (seqs.isEmpty() || seqs.get(0) != from)) {
            failure = "the engine's replay buffer starts at " + (seqs.isEmpty() ? to : seqs.get(0));
        }
        for (int i = 1; i < seqs.size(); i++) {
            if (seqs.get(i) != seqs.get(i - 1) + 1) {
                failure = failure != null ? failure : "the replay skipped " + (seqs.get(i - 1) + 1);
                first = i;
            }
        }
        if (failure != null && !seqs.isEmpty() && seqs.get(seqs.size() - 1) != to - 1) {
            first = seqs.size(); // the run does not reach the live stream: nothing to apply
        }
        if (failure != null && (from > 0 || lastSeq >= 0)) {
            resync("batches " + from + " to " + (to - 1) + " lost: " + failure);
        }
        for (int i = first; i < seqs.size(); i++) {
            deliver(seqs.get(i), payloads.get(i));
            replayed.incrementAndGet();
        }
        lastSeq = to - 1;
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

    @Override
    public void close() {
        closing = true;
        try {
            thread.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        context.close();
    }
}
