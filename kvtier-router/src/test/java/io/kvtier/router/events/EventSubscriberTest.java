package io.kvtier.router.events;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.events.EventPublisher;
import io.kvtier.events.EventSubscriber;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * A subscriber against a publisher that speaks vLLM's ZMQ protocol, over real TCP sockets: batches arrive once and in
 * order across a late start, lost messages, a short replay buffer and an engine restart, and every loss that cannot be
 * repaired is a resync.
 */
class EventSubscriberTest {
    private static final Duration REPLAY_TIMEOUT = Duration.ofSeconds(2);

    /** Records what the subscriber delivers: batch timestamps (each test numbers its batches by ts) and resyncs. */
    static final class Recorder implements EventSubscriber.Listener<KvEventBatch> {
        final List<Double> batches = new CopyOnWriteArrayList<>();
        final List<String> resyncs = new CopyOnWriteArrayList<>();
        volatile long lastSeq = -1;
        volatile long lastDigest;

        @Override
        public void batch(KvEventBatch batch) {
            batches.add(batch.ts());
        }

        @Override
        public void batch(KvEventBatch batch, long seq, long digest) {
            batch(batch);
            lastSeq = seq;
            lastDigest = digest;
        }

        @Override
        public void resync(String why) {
            resyncs.add(why);
            batches.add(-1.0);
        }
    }

    private static byte[] batch(double n) {
        return VllmEventCodec.encode(new KvEventBatch(n, List.of(new KvEvent.AllBlocksCleared()), 0L),
                Layout.ARRAY_V0_23);
    }

    private static void await(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("condition within 10 s").isLessThan(deadline);
            Thread.sleep(10);
        }
    }

    private static EventSubscriber<KvEventBatch> subscribe(EventPublisher pub, boolean replay, Recorder recorder) {
        return new EventSubscriber<>("e1", "tcp://127.0.0.1:" + pub.port(),
                replay ? "tcp://127.0.0.1:" + pub.replayPort() : null, "kv@", REPLAY_TIMEOUT, VllmEventCodec::decode, false, recorder).start();
    }

    @Test
    void aLateSubscriberReplaysTheEnginesBufferThenFollowsLive() throws Exception {
        Recorder r = new Recorder();
        try (EventPublisher pub = new EventPublisher("tcp://127.0.0.1:0", "tcp://127.0.0.1:0", 
                "kv@e1@m", true, 100, null)) {
            for (int i = 0; i < 5; i++) {
                pub.publish(batch(i));
            }
            try (EventSubscriber<KvEventBatch> sub = subscribe(pub, true, r)) {
                // A SUB socket sees nothing sent before it joined: publish until the first live batch arrives.
                double n = 5;
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (r.batches.size() < 6) { // 0..4 replayed on start, then the first live one
                    assertThat(System.nanoTime()).as("the subscriber joins within 10 s").isLessThan(deadline);
                    pub.publish(batch(n++));
                    Thread.sleep(20);
                }
                double last = n - 1;
                await(() -> r.batches.contains(last));
                assertThat(r.batches).containsExactly(java.util.stream.DoubleStream.iterate(0, x -> x <= last, x -> x + 1)
                        .boxed().toArray(Double[]::new));
                assertThat(r.resyncs).isEmpty();
                assertThat(sub.stats().replayed()).isGreaterThanOrEqualTo(5);
            }
        }
    }

    @Test
    void lostMessagesAreReplayedWhereTheEngineKeepsThem() throws Exception {
        Recorder r = new Recorder();
        try (EventPublisher pub = new EventPublisher("tcp://127.0.0.1:0", "tcp://127.0.0.1:0", 
                "kv@e1@m", false, 100, null);
                EventSubscriber<KvEventBatch> sub = subscribe(pub, true, r)) {
            double n = connect(pub, r);
            int before = r.batches.size();
            pub.drop(batch(100));
            pub.drop(batch(101));
            pub.publish(batch(102));
            await(() -> r.batches.contains(102.0));
            assertThat(r.resyncs).isEmpty();
            assertThat(r.batches.subList(before, r.batches.size())).containsExactly(100.0, 101.0, 102.0);
            assertThat(sub.stats().replayed()).isGreaterThanOrEqualTo(2);
        }
    }

    @Test
    void aLossNoReplayCanRepairIsAResync() throws Exception {
        Recorder r = new Recorder();
        // No replay endpoint at all.
        try (EventPublisher pub = new EventPublisher("tcp://127.0.0.1:0", null, "kv@e1@m", false, 100, null);
                EventSubscriber<KvEventBatch> sub = subscribe(pub, false, r)) {
            connect(pub, r);
            int before = r.batches.size();
            pub.drop(batch(100));
            pub.publish(batch(101));
            await(() -> r.batches.contains(101.0));
            assertThat(r.batches.subList(before, r.batches.size())).containsExactly(-1.0, 101.0);
            assertThat(r.resyncs).singleElement().asString().contains("no replay endpoint");
        }
        // A replay buffer of 2 batches, 3 lost: the 2 it still has are the run before the live one, so they apply.
        Recorder s = new Recorder();
        try (EventPublisher pub = new EventPublisher("tcp://127.0.0.1:0", "tcp://127.0.0.1:0", 
                "kv@e1@m", false, 2, null);
                EventSubscriber<KvEventBatch> sub = subscribe(pub, true, s)) {
            connect(pub, s);
            int before = s.batches.size();
            pub.drop(batch(100));
            pub.drop(batch(101));
            pub.drop(batch(102));
            pub.publish(batch(103));
            await(() -> s.batches.contains(103.0));
            assertThat(s.batches.subList(before, s.batches.size())).containsExactly(-1.0, 102.0, 103.0);
            assertThat(s.resyncs).singleElement().asString().contains("the engine's buffer holds");
        }
    }

    @Test
    void anEngineThatRestartsCountsFromZeroAgainAndIsResynced() throws Exception {
        Recorder r = new Recorder();
        int port;
        int replayPort;
        try (EventPublisher pub = new EventPublisher("tcp://127.0.0.1:0", "tcp://127.0.0.1:0", 
                "kv@e1@m", true, 100, null)) {
            port = pub.port();
            replayPort = pub.replayPort();
            try (EventSubscriber<KvEventBatch> sub = new EventSubscriber<>("e1", "tcp://127.0.0.1:" + port,
                    "tcp://127.0.0.1:" + replayPort, "", REPLAY_TIMEOUT, VllmEventCodec::decode, false, r).start()) {
                double n = connect(pub, r);
                for (int i = 0; i < 5; i++) {
                    pub.publish(batch(200 + i));
                }
                await(() -> r.batches.contains(204.0));
                // Counted before the close: the subscriber may see the connection drop (and resync) at once.
                int before = r.batches.size();
                pub.close();
                try (EventPublisher again = new EventPublisher("tcp://127.0.0.1:" + port, 
                        "tcp://127.0.0.1:" + replayPort, "kv@e1@m", true, 100, null)) {
                    // The subscriber reconnects by itself; the new process's first batches arrive once it has. It
                    // resyncs on the sequence going back, on the connection's drop, or on both (in either order: ZMQ
                    // reports the drop when its I/O thread sees it, which may come after the new process's first
                    // batch). Publish until a batch arrived after the last resync and none came for 300 ms.
                    double m = 300;
                    long deadline = System.nanoTime() + 10_000_000_000L;
                    int resyncs = 0;
                    long quietSince = System.nanoTime();
                    while (true) {
                        assertThat(System.nanoTime()).as("the restart is seen within 10 s").isLessThan(deadline);
                        again.publish(batch(m++));
                        Thread.sleep(20);
                        if (r.resyncs.size() != resyncs) {
                            resyncs = r.resyncs.size();
                            quietSince = System.nanoTime();
                        }
                        List<Double> seen = List.copyOf(r.batches);
                        if (resyncs > 0 && System.nanoTime() - quietSince > 300_000_000L
                                && seen.lastIndexOf(-1.0) < seen.indexOf(m - 1)) {
                            break;
                        }
                    }
                    assertThat(r.resyncs).hasSizeBetween(1, 2)
                            .allSatisfy(why -> assertThat(why).asString().contains("restarted"));
                    double last = m - 1;
                    List<Double> after = List.copyOf(r.batches.subList(before, r.batches.size()));
                    assertThat(after.get(0)).isEqualTo(-1.0);
                    // After the last resync, the rest of the new process's stream, in order (its start replayed or
                    // not).
                    List<Double> stream = after.subList(after.lastIndexOf(-1.0) + 1, after.size());
                    assertThat(stream).isNotEmpty().isSorted().doesNotHaveDuplicates().endsWith(last);
                }
            }
        }
    }

    @Test
    void seqFramesCarryingAPublisherIdAndIdleHeartbeatsAreFollowedAndANewIdIsARestart() throws Exception {
        Recorder r = new Recorder();
        byte[] first = java.nio.ByteBuffer.allocate(16).putLong(1).putLong(2).array();
        try (EventPublisher pub = new EventPublisher("tcp://127.0.0.1:0", "tcp://127.0.0.1:0",
                "kv@e1@m", true, 100, null);
                EventSubscriber<KvEventBatch> sub = subscribe(pub, true, r)) {
            pub.publisherId(first); // 24-byte seq frames, live and replayed (vLLM PR 57789)
            double n = connect(pub, r);
            int before = r.batches.size();
            pub.heartbeat();
            pub.heartbeat();
            pub.publish(batch(100));
            await(() -> r.batches.contains(100.0));
            pub.heartbeat();
            pub.publish(batch(101));
            await(() -> r.batches.contains(101.0));
            assertThat(r.batches.subList(before, r.batches.size())).containsExactly(100.0, 101.0);
            assertThat(r.resyncs).isEmpty();
            assertThat(sub.stats().malformed()).isZero();
            assertThat(sub.stats().heartbeats()).isEqualTo(3);
            // Another process under the same seq count: only its id tells.
            pub.publisherId(java.nio.ByteBuffer.allocate(16).putLong(3).putLong(4).array());
            pub.publish(batch(102));
            await(() -> r.batches.contains(102.0));
            assertThat(r.resyncs).singleElement().asString().contains("id changed");
            assertThat(sub.stats().malformed()).isZero();
        }
    }

    @Test
    void aSavedStateResumesOnlyWhereTheEnginesBufferStillHoldsItsLastBatch() throws Exception {
        Recorder r = new Recorder();
        try (EventPublisher pub = new EventPublisher("tcp://127.0.0.1:0", "tcp://127.0.0.1:0",
                "kv@e1@m", true, 100, null)) {
            try (EventSubscriber<KvEventBatch> sub = subscribe(pub, true, r)) {
                connect(pub, r);
            }
            long seq = r.lastSeq;
            long digest = r.lastDigest;
            for (int i = 0; i < 5; i++) {
                pub.publish(batch(300 + i)); // while no router listens
            }
            Recorder resumed = new Recorder();
            try (EventSubscriber<KvEventBatch> sub = new EventSubscriber<>("e1", "tcp://127.0.0.1:" + pub.port(),
                    "tcp://127.0.0.1:" + pub.replayPort(), "kv@", REPLAY_TIMEOUT, VllmEventCodec::decode, false,
                    resumed).resume(seq, digest).start()) {
                await(() -> resumed.batches.contains(304.0));
                assertThat(resumed.batches).containsExactly(300.0, 301.0, 302.0, 303.0, 304.0);
                assertThat(resumed.resyncs).isEmpty();
            }
            // The same seq with another payload: another process published it; the saved state goes.
            Recorder wrong = new Recorder();
            try (EventSubscriber<KvEventBatch> sub = new EventSubscriber<>("e1", "tcp://127.0.0.1:" + pub.port(),
                    "tcp://127.0.0.1:" + pub.replayPort(), "kv@", REPLAY_TIMEOUT, VllmEventCodec::decode, false,
                    wrong).resume(seq, digest ^ 1).start()) {
                await(() -> wrong.batches.contains(304.0));
                assertThat(wrong.resyncs).singleElement().asString().contains("is another");
                assertThat(wrong.batches.get(0)).isEqualTo(-1.0);
                assertThat(wrong.batches.get(1)).isEqualTo(0.0); // the whole buffer, from its start
            }
        }
    }

    @Test
    void aBoundSubscriberTakesTheBatchesOfAPublisherThatConnectsToIt() throws Exception {
        Recorder r = new Recorder();
        int port = io.kvtier.testkit.LocalPorts.free();
        try (EventSubscriber<KvEventBatch> sub = new EventSubscriber<>("e1", "tcp://127.0.0.1:" + port, null, "kv@",
                REPLAY_TIMEOUT, VllmEventCodec::decode, false, r).bind(true).start();
                org.zeromq.ZContext context = new org.zeromq.ZContext(1);
                org.zeromq.ZMQ.Socket pub = context.createSocket(org.zeromq.SocketType.PUB)) {
            pub.connect("tcp://127.0.0.1:" + port); // vLLM's publisher connects where its endpoint names a host
            long seq = 0;
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (r.batches.size() < 3) {
                assertThat(System.nanoTime()).as("batches arrive within 10 s").isLessThan(deadline);
                pub.sendMore("kv@e1@m");
                pub.sendMore(java.nio.ByteBuffer.allocate(8).putLong(seq).array());
                pub.send(batch(seq));
                seq++;
                Thread.sleep(20);
            }
            // Joined mid-stream without a replay endpoint: one resync at the first gap, then every batch in order.
            List<Double> after = r.batches.subList(r.batches.lastIndexOf(-1.0) + 1, r.batches.size());
            assertThat(after).isNotEmpty().isSorted().doesNotHaveDuplicates();
            assertThat(sub.stats().malformed()).isZero();
        }
    }

    @Test
    void twoPublishersSharingABoundPortAreFollowedEachUnderItsTopicAndARestartOfOneResyncsOnlyIt() throws Exception {
        Recorder a = new Recorder();
        Recorder b = new Recorder();
        int port = io.kvtier.testkit.LocalPorts.free();
        String endpoint = "tcp://127.0.0.1:" + port;
        try (io.kvtier.events.SharedEventPort shared = io.kvtier.events.SharedEventPort.bind(endpoint);
                EventSubscriber<KvEventBatch> subA = new EventSubscriber<>("a", endpoint, null, "kv@10.0.0.5@",
                        REPLAY_TIMEOUT, VllmEventCodec::decode, false, a).fedBy(shared).start();
                EventSubscriber<KvEventBatch> subB = new EventSubscriber<>("b", endpoint, null, "kv@10.0.0.55@",
                        REPLAY_TIMEOUT, VllmEventCodec::decode, false, b).fedBy(shared).start();
                org.zeromq.ZContext context = new org.zeromq.ZContext(1);
                org.zeromq.ZMQ.Socket pubA = context.createSocket(org.zeromq.SocketType.PUB);
                org.zeromq.ZMQ.Socket pubB = context.createSocket(org.zeromq.SocketType.PUB)) {
            pubA.connect(endpoint);
            pubB.connect(endpoint);
            long seq = 0;
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (a.batches.size() < 5 || b.batches.size() < 5) {
                assertThat(System.nanoTime()).as("batches arrive within 10 s").isLessThan(deadline);
                send(pubA, "kv@10.0.0.5@m", seq, seq);
                send(pubB, "kv@10.0.0.55@m", seq, 1000 + seq);
                seq++;
                Thread.sleep(20);
            }
            // each joined mid-stream (no replay endpoint): at most one resync each at its first gap, then its own
            // batches only, in order
            List<Double> ofA = a.batches.subList(a.batches.lastIndexOf(-1.0) + 1, a.batches.size());
            List<Double> ofB = b.batches.subList(b.batches.lastIndexOf(-1.0) + 1, b.batches.size());
            assertThat(ofA).isNotEmpty().isSorted().doesNotHaveDuplicates().allMatch(n -> n < 1000);
            assertThat(ofB).isNotEmpty().isSorted().doesNotHaveDuplicates().allMatch(n -> n >= 1000);
            int resyncsOfB = b.resyncs.size();
            long next = seq;
            send(pubA, "kv@10.0.0.5@m", 0, 5000); // A restarted: its count begins again
            send(pubB, "kv@10.0.0.55@m", next, 1000 + next);
            await(() -> a.batches.contains(5000.0) && b.batches.contains(1000.0 + next));
            assertThat(a.resyncs).last().asString().contains("went back");
            assertThat(b.resyncs).hasSize(resyncsOfB);
            assertThat(subA.stats().malformed() + subB.stats().malformed()).isZero();
        }
    }

    private static void send(org.zeromq.ZMQ.Socket pub, String topic, long seq, double batch) {
        pub.sendMore(topic);
        pub.sendMore(java.nio.ByteBuffer.allocate(8).putLong(seq).array());
        pub.send(batch(batch));
    }

    /** Publishes until the subscriber has joined; returns the next batch number. */
    private static double connect(EventPublisher pub, Recorder r) throws InterruptedException {
        double n = 0;
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (r.batches.isEmpty()) {
            assertThat(System.nanoTime()).as("the subscriber joins within 10 s").isLessThan(deadline);
            pub.publish(batch(n++));
            Thread.sleep(20);
        }
        double last = n - 1;
        await(() -> r.batches.contains(last));
        return n;
    }
}
