package io.kvtier.events;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.testkit.LocalPorts;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/** One bound port, publishers connecting to it under topics of their own (llm-d's centralized mode), over real TCP. */
class SharedEventPortTest {
    @Test
    void aTopicTakesItselfAndWhatFollowsItsAtSign() {
        assertThat(SharedEventPort.takes("kv@10.0.0.5@", "kv@10.0.0.5@Qwen/Qwen3-32B")).isTrue();
        assertThat(SharedEventPort.takes("kv@10.0.0.5@", "kv@10.0.0.55@Qwen/Qwen3-32B")).isFalse();
        assertThat(SharedEventPort.takes("kv@10.0.0.5", "kv@10.0.0.55@m")).as("no @: the whole topic only").isFalse();
        assertThat(SharedEventPort.takes("kv@10.0.0.5", "kv@10.0.0.5")).isTrue();
        assertThat(SharedEventPort.takes("", "anything")).isTrue();
    }

    private static void drain(SharedEventPort.Inbox inbox) throws InterruptedException {
        while (inbox.poll(0) != null) {
            // dropped
        }
    }

    @Test
    void anInboxHoldsAtMostItsBytes() throws InterruptedException {
        SharedEventPort.Inbox inbox = new SharedEventPort.Inbox();
        byte[] big = new byte[40 << 20];
        assertThat(inbox.offer(List.of(new byte[0], new byte[8], big))).isTrue();
        assertThat(inbox.offer(List.of(new byte[0], new byte[8], big))).as("80 MiB > 64 MiB").isFalse();
        assertThat(inbox.poll(0)).isNotNull();
        assertThat(inbox.offer(List.of(new byte[0], new byte[8], big))).as("room again once taken").isTrue();
    }

    private static void send(ZMQ.Socket pub, String topic, long seq) {
        pub.sendMore(topic);
        pub.sendMore(ByteBuffer.allocate(8).putLong(seq).array());
        pub.send(("batch " + seq).getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void eachPublishersMessagesGoToTheSubscriberOfItsTopicAndOthersAreCounted() throws Exception {
        int port = LocalPorts.free();
        try (SharedEventPort shared = SharedEventPort.bind("tcp://127.0.0.1:" + port);
                ZContext context = new ZContext(1);
                ZMQ.Socket five = context.createSocket(SocketType.PUB);
                ZMQ.Socket fiftyFive = context.createSocket(SocketType.PUB);
                ZMQ.Socket stranger = context.createSocket(SocketType.PUB)) {
            SharedEventPort.Inbox a = shared.register("kv@10.0.0.5@");
            SharedEventPort.Inbox b = shared.register("kv@10.0.0.55@");
            for (ZMQ.Socket pub : List.of(five, fiftyFive, stranger)) {
                pub.connect("tcp://127.0.0.1:" + port); // as vLLM's publisher does where its endpoint names a host
            }
            long deadline = System.nanoTime() + 10_000_000_000L;
            long seq = 0;
            while (a.size() == 0 || b.size() == 0 || shared.stats().unmatched() == 0) { // until all three are connected
                assertThat(System.nanoTime()).as("all three connect within 10 s").isLessThan(deadline);
                send(five, "kv@10.0.0.5@m", seq);
                send(fiftyFive, "kv@10.0.0.55@m", seq);
                send(stranger, "kv@10.0.0.9@m", seq);
                seq++;
                Thread.sleep(20);
            }
            drain(a);
            drain(b);
            for (long s = 100; s < 110; s++) {
                send(five, "kv@10.0.0.5@m", s);
                send(fiftyFive, "kv@10.0.0.55@m", s + 1000);
            }
            for (long s = 100; s < 110; s++) {
                List<byte[]> m = a.poll(5_000);
                assertThat(m).isNotNull().hasSize(3);
                assertThat(new String(m.get(0), StandardCharsets.UTF_8)).isEqualTo("kv@10.0.0.5@m");
                assertThat(ByteBuffer.wrap(m.get(1)).getLong()).isEqualTo(s);
                List<byte[]> n = b.poll(5_000);
                assertThat(n).isNotNull();
                assertThat(ByteBuffer.wrap(n.get(1)).getLong()).isEqualTo(s + 1000);
            }
            SharedEventPort.Stats stats = shared.stats();
            assertThat(stats.unmatched()).isPositive(); // kv@10.0.0.9@ is no subscriber's
            assertThat(stats.dropped()).isZero();

            // a subscriber that goes stops getting its messages; one registered again takes them over
            shared.unregister("kv@10.0.0.5@", a);
            long unmatched = shared.stats().unmatched();
            send(five, "kv@10.0.0.5@m", 200);
            while (shared.stats().unmatched() == unmatched) {
                assertThat(System.nanoTime()).isLessThan(deadline + 10_000_000_000L);
                Thread.sleep(10);
            }
            assertThat(a.size()).isZero();
            SharedEventPort.Inbox again = shared.register("kv@10.0.0.5@");
            send(five, "kv@10.0.0.5@m", 201);
            assertThat(again.poll(5_000)).isNotNull();
        }
    }

    @Test
    void aFullInboxDropsWhatFollowsAndCountsIt() throws Exception {
        int port = LocalPorts.free();
        try (SharedEventPort shared = SharedEventPort.bind("tcp://127.0.0.1:" + port);
                ZContext context = new ZContext(1);
                ZMQ.Socket pub = context.createSocket(SocketType.PUB)) {
            SharedEventPort.Inbox inbox = shared.register("");
            pub.connect("tcp://127.0.0.1:" + port);
            long deadline = System.nanoTime() + 20_000_000_000L;
            long seq = 0;
            while (shared.stats().dropped() == 0) { // nobody reads the inbox
                assertThat(System.nanoTime()).as("the inbox fills within 20 s").isLessThan(deadline);
                send(pub, "", seq++);
                if (seq % 1000 == 0) {
                    Thread.sleep(5);
                }
            }
            assertThat(inbox.size()).isEqualTo(SharedEventPort.INBOX);
        }
    }
}
