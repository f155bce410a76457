package io.kvtier.server.reply;

import static io.kvtier.server.net.ConnectionHandlerTest.command;
import static io.kvtier.server.net.ConnectionHandlerTest.send;
import static io.kvtier.server.net.ConnectionHandlerTest.written;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.server.TestNode;
import io.kvtier.server.net.ConnectionHandler;
import io.kvtier.store.ValueRef;
import io.kvtier.testkit.NettyLeakCheck;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every reply {@link Reply} writes, in RESP2 and RESP3, on an {@link EmbeddedChannel}: the bytes on the wire, and that
 * buffers and value references it takes over are released (Netty's paranoid leak detector fails the class if not).
 * kvtier sends no RESP3 double, boolean or big number from {@link Reply}.
 */
@ExtendWith(NettyLeakCheck.class)
class ReplyTest {
    @TempDir
    Path dir;
    private TestNode node;
    private EmbeddedChannel ch;
    private Reply reply;

    @BeforeEach
    void open() throws Exception {
        node = TestNode.open(dir, null, 10);
        ch = new EmbeddedChannel(new ChannelInboundHandlerAdapter());
        reply = new Reply(ch.pipeline().firstContext(), node.context.metrics().errors(),
                node.context.netOutputBytes);
    }

    @AfterEach
    void close() throws Exception {
        reply.discard();
        ch.finishAndReleaseAll();
        node.close();
    }

    private String sent() {
        reply.flush();
        return written(ch);
    }

    @Test
    void writesSimpleErrorIntegerAndBulkReplies() {
        reply.ok();
        reply.simple("PONG");
        reply.error("ERR line\r\nbreak");
        reply.integer(0);
        reply.integer(-42);
        reply.integer(Long.MAX_VALUE);
        reply.bulk("héllo");
        reply.bulk(new byte[0]);
        assertThat(sent()).isEqualTo("+OK\r\n+PONG\r\n-ERR line  break\r\n:0\r\n:-42\r\n:9223372036854775807\r\n"
                + "$6\r\nhéllo\r\n$0\r\n\r\n");
    }

    @Test
    void writesNullsAggregatesAndVerbatimTextInResp2() {
        reply.nil();
        reply.nullArray();
        reply.array(2);
        reply.map(1);
        reply.set(3);
        reply.verbatim("a b\n");
        assertThat(sent()).isEqualTo("$-1\r\n*-1\r\n*2\r\n*2\r\n*3\r\n$4\r\na b\n\r\n");
    }

    @Test
    void writesNullsAggregatesAndVerbatimTextInResp3() {
        reply.protocol(3);
        reply.nil();
        reply.nullArray();
        reply.array(0);
        reply.map(1);
        reply.set(3);
        reply.verbatim("a b\n");
        assertThat(sent()).isEqualTo("_\r\n_\r\n*0\r\n%1\r\n~3\r\n=8\r\ntxt:a b\n\r\n");
    }

    @Test
    void writesMemoryResidentValuesSmallByCopyAndLargeAsAViewOfTheirPages() {
        EmbeddedChannel client = new EmbeddedChannel(new ConnectionHandler(node.context));
        String large = "L".repeat(100_000);
        assertThat(send(client, command("SET", "small", "tiny") + command("SET", "large", large)))
                .isEqualTo("+OK\r\n+OK\r\n");
        client.finishAndReleaseAll();
        ValueRef small = node.context.store().get("small".getBytes(StandardCharsets.US_ASCII));
        ValueRef big = node.context.store().get("large".getBytes(StandardCharsets.US_ASCII));
        assertThat(big.inMemory()).isTrue();
        reply.value(small);
        reply.value(big);
        assertThat(sent()).isEqualTo("$4\r\ntiny\r\n$100000\r\n" + large + "\r\n");
    }

    @Test
    void writesAValueFromABufferAndRunsItsCallbackOnceWritten() {
        AtomicInteger done = new AtomicInteger();
        ByteBuf payload = ch.alloc().directBuffer().writeBytes("from disk".getBytes(StandardCharsets.US_ASCII));
        reply.value(payload, done::incrementAndGet);
        assertThat(sent()).isEqualTo("$9\r\nfrom disk\r\n");
        assertThat(done).hasValue(1);
        assertThat(payload.refCnt()).isZero();
    }

    @Test
    void relaysBulkBuffersSmallByCopyAndLargeAsThemselves() {
        ByteBuf small = ch.alloc().buffer().writeBytes("relayed".getBytes(StandardCharsets.US_ASCII));
        ByteBuf large = ch.alloc().buffer().writeBytes(new byte[20_000]);
        reply.bulk(small);
        reply.bulk(large);
        String out = sent();
        assertThat(out).startsWith("$7\r\nrelayed\r\n$20000\r\n").endsWith("\r\n").hasSize(13 + 8 + 20_000 + 2);
        assertThat(small.refCnt()).isZero();
        assertThat(large.refCnt()).isZero();
    }

    @Test
    void heldRepliesGoOutInOrderOnlyWhenReleased() {
        reply.simple("before");
        reply.hold();
        ByteBuf payload = Unpooled.copiedBuffer("held", StandardCharsets.US_ASCII);
        reply.value(payload, () -> { });
        reply.ok();
        assertThat(reply.holding()).isTrue();
        assertThat(sent()).isEqualTo("+before\r\n");
        reply.releaseHeld();
        assertThat(sent()).isEqualTo("$4\r\nheld\r\n+OK\r\n");
    }

    @Test
    void droppedRepliesAreReleasedAndTheirCallbacksRun() {
        reply.hold();
        AtomicInteger done = new AtomicInteger();
        ByteBuf payload = ch.alloc().buffer().writeBytes(new byte[30_000]);
        reply.value(payload, done::incrementAndGet);
        reply.ok();
        reply.dropHeld();
        reply.error("ERR the write failed");
        assertThat(sent()).isEqualTo("-ERR the write failed\r\n");
        assertThat(done).hasValue(1);
        assertThat(payload.refCnt()).isZero();
    }

    @Test
    void discardDropsUnsentRepliesWithoutLeaking() {
        reply.simple("never sent");
        reply.discard();
        assertThat(sent()).isEmpty();
    }
}
