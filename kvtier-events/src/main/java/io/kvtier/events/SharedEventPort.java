package io.kvtier.events;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * One bound SUB socket that many publishers connect to, each under a topic of its own: llm-d's "centralized" mode,
 * where every vLLM pod's publisher connects to the router's one port with the topic {@code kv@POD_IP@MODEL}. Each
 * message goes to the {@link EventSubscriber} whose topic takes it ({@link EventSubscriber#fedBy}): the same topic, or
 * one that begins with the subscriber's where that ends in {@code @} or is empty (llm-d's {@code kv@POD_IP@} before
 * the model's name; {@code kv@10.0.0.5@} never takes {@code kv@10.0.0.55@m}), the longest such if several; it follows its publisher's seq, replays and restarts as it would on a socket of
 * its own (it cannot see one publisher's connection drop among many: a restart shows as its seq going back, or its
 * publisher id changing).
 *
 * <p>Bounded: each subscriber's inbox holds {@value #INBOX} messages and {@value #INBOX_BYTES} bytes; a message that
 * finds it full is dropped (counted),
 * which its subscriber sees as a gap and repairs from the engine's replay buffer, as it would a drop at a socket's
 * high-water mark. A message under no registered topic is dropped and counted, its topic logged once (the first
 * {@value #LOGGED_TOPICS} such topics). One thread reads the socket; registering is thread-safe.
 */
public final class SharedEventPort implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SharedEventPort.class);
    /** Messages waiting for one subscriber. */
    public static final int INBOX = 10_000;
    /** Bytes waiting for one subscriber (vLLM's batches are kilobytes: a step's blocks). */
    public static final long INBOX_BYTES = 64L << 20;
    private static final int LOGGED_TOPICS = 64;
    private static final int POLL_MS = 100;
    private static final long MAX_MESSAGE_BYTES = 64L << 20;

    private final String endpoint;
    private final ZContext context = new ZContext(1);
    /** The subscribers' inboxes by topic: replaced whole (copy on write) whenever one comes or goes. */
    private volatile Map<String, Inbox> inboxes = Map.of();
    /** The reader thread's own: each topic seen to its inbox under {@link #routesOf} (rebuilt when that changes). */
    private final Map<String, Inbox> routes = new java.util.HashMap<>();
    private Map<String, Inbox> routesOf = Map.of();

    /** One subscriber's messages, bounded in count and bytes: filled by the port's thread, drained by the subscriber. */
    static final class Inbox {
        private final BlockingQueue<List<byte[]>> messages = new ArrayBlockingQueue<>(INBOX);
        private final AtomicLong bytes = new AtomicLong();

        /** False (the message dropped) where the inbox is full. */
        boolean offer(List<byte[]> frames) {
            long size = 0;
            for (byte[] f : frames) {
                size += f.length;
            }
            if (bytes.get() + size > INBOX_BYTES || !messages.offer(frames)) {
                return false;
            }
            bytes.addAndGet(size);
            return true;
        }

        /** The next message, or null after {@code millis} without one. */
        List<byte[]> poll(long millis) throws InterruptedException {
            List<byte[]> frames = messages.poll(millis, java.util.concurrent.TimeUnit.MILLISECONDS);
            if (frames != null) {
                long size = 0;
                for (byte[] f : frames) {
                    size += f.length;
                }
                bytes.addAndGet(-size);
            }
            return frames;
        }

        int size() {
            return messages.size();
        }
    }
    private final Set<String> loggedTopics = ConcurrentHashMap.newKeySet();
    private final AtomicLong received = new AtomicLong();
    private final AtomicLong unmatched = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private final Thread thread;
    private volatile boolean closing;

    private SharedEventPort(String endpoint) {
        this.endpoint = endpoint;
        this.thread = Thread.ofPlatform().daemon().name("kv-events-port-" + endpoint).unstarted(this::run);
    }

    /**
     * Binds {@code endpoint} (e.g. {@code tcp://*:5557}) and reads it, on a thread of its own; where it cannot be bound
     * (in use, not an address of this host) it says so and tries again, every few seconds, until closed.
     */
    public static SharedEventPort bind(String endpoint) {
        SharedEventPort port = new SharedEventPort(endpoint);
        port.thread.start();
        return port;
    }

    public String endpoint() {
        return endpoint;
    }

    /** Messages read, those under no registered topic, and those dropped at a full inbox. */
    public record Stats(long received, long unmatched, long dropped) {
    }

    public Stats stats() {
        return new Stats(received.get(), unmatched.get(), dropped.get());
    }

    /**
     * The inbox of the subscriber for {@code topicPrefix}: every message it {@linkplain #takes takes} (and no longer
     * registered topic does), as its frames. A later registration of the same topic takes it over (the engine's new
     * subscriber, while the one it replaces is still stopping).
     */
    synchronized Inbox register(String topicPrefix) {
        Inbox inbox = new Inbox();
        Map<String, Inbox> next = new java.util.HashMap<>(inboxes);
        next.put(topicPrefix, inbox);
        inboxes = Map.copyOf(next);
        return inbox;
    }

    /** Stops handing messages to {@code inbox} (registered for {@code topicPrefix}). */
    synchronized void unregister(String topicPrefix, Inbox inbox) {
        if (inboxes.get(topicPrefix) == inbox) {
            Map<String, Inbox> next = new java.util.HashMap<>(inboxes);
            next.remove(topicPrefix);
            inboxes = Map.copyOf(next);
        }
    }

    /** The inbox a message under {@code topic} goes to, or null; on the reader thread only. */
    private Inbox route(String topic) {
        Map<String, Inbox> current = inboxes;
        if (current != routesOf) {
            routes.clear();
            routesOf = current;
        }
        Inbox known = routes.get(topic);
        if (known != null) {
            return known;
        }
        String best = null;
        for (String prefix : current.keySet()) {
            if (takes(prefix, topic) && (best == null || prefix.length() > best.length())) {
                best = prefix;
            }
        }
        Inbox inbox = best == null ? null : current.get(best);
        if (inbox != null && routes.size() < 100_000) { // topics are publishers: a few, but never unbounded
            routes.put(topic, inbox);
        }
        return inbox;
    }

    /** Whether a subscriber registered for {@code registered} takes a message under {@code topic}. */
    static boolean takes(String registered, String topic) {
        return topic.equals(registered) || topic.startsWith(registered)
                && (registered.isEmpty() || registered.endsWith("@"));
    }

    private void run() {
        long backoff = POLL_MS;
        while (!closing) {
            try {
                follow();
            } catch (RuntimeException e) {
                if (closing) {
                    return;
                }
                log.error("{}: cannot bind the shared event port ({}); trying again in {} ms", endpoint, e.toString(),
                        backoff);
                try {
                    Thread.sleep(backoff);
                } catch (InterruptedException ie) {
                    return;
                }
                backoff = Math.min(backoff * 2, 5_000);
            }
        }
    }

    private void follow() {
        try (ZMQ.Socket sub = context.createSocket(SocketType.SUB)) {
            sub.setRcvHWM(100_000);
            sub.setMaxMsgSize(MAX_MESSAGE_BYTES);
            sub.setReceiveTimeOut(POLL_MS);
            sub.subscribe(new byte[0]);
            sub.bind(endpoint);
            log.info("{}: the shared event port is bound", endpoint);
            while (!closing) {
                try {
                    receive(sub);
                } catch (RuntimeException e) { // a message lost is a gap its subscriber repairs; the port goes on
                    if (closing) {
                        return;
                    }
                    log.error("{}: reading the shared event port failed; going on", endpoint, e);
                    try {
                        Thread.sleep(POLL_MS);
                    } catch (InterruptedException ie) {
                        return;
                    }
                }
            }
        }
    }

    private void receive(ZMQ.Socket sub) {
        List<byte[]> frames = Frames.read(sub, 0);
        if (frames == null) {
            return;
        }
        received.incrementAndGet();
        String topic = new String(frames.get(0), StandardCharsets.UTF_8);
        Inbox inbox = route(topic);
        if (inbox == null) {
            unmatched.incrementAndGet();
            if (loggedTopics.size() < LOGGED_TOPICS && loggedTopics.add(topic)) {
                log.warn("{}: messages under topic '{}' are no engine's (none is registered for it); dropped",
                        endpoint, topic);
            }
        } else if (!inbox.offer(frames)) {
            dropped.incrementAndGet(); // its subscriber sees the gap and replays
        }
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
