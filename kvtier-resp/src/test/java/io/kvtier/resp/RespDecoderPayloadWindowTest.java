package io.kvtier.resp;

import static io.kvtier.resp.Decoding.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Payload bytes put in place by the caller (a socket read into the sink's memory) instead of copied from input. */
class RespDecoderPayloadWindowTest {
    private static final RespDecoder.Limits LIMITS = new RespDecoder.Limits(1 << 20, 100, 1024, 8);

    private final ByteBuf buf = Unpooled.buffer();

    @AfterEach
    void releaseBuffer() {
        buf.release();
    }

    /** A heap sink that lends its memory in windows ending at every multiple of {@code page} bytes. */
    private static final class PagedSink implements BulkSink {
        private final byte[] data;
        private final int page;
        private int filled;
        private boolean aborted;

        PagedSink(long length, int page) {
            this.data = new byte[Math.toIntExact(length)];
            this.page = page;
        }

        @Override
        public long length() {
            return data.length;
        }

        @Override
        public void write(ByteBuf src, int length) {
            src.readBytes(data, filled, length);
            filled += length;
        }

        @Override
        public ByteBuffer window(int max) {
            int end = Math.min(data.length, (filled / page + 1) * page);
            return ByteBuffer.wrap(data, filled, Math.min(max, end - filled)).slice();
        }

        @Override
        public void advance(int n) {
            filled += n;
        }

        @Override
        public byte[] toBytes() {
            return data.clone();
        }

        @Override
        public void abort() {
            aborted = true;
        }
    }

    private RespCommand feed(RespDecoder decoder, String chunk) {
        buf.writeBytes(bytes(chunk));
        return decoder.decode(buf);
    }

    private static void fill(ByteBuffer window, String text) {
        assertThat(window.remaining()).isEqualTo(text.length());
        window.put(text.getBytes(StandardCharsets.US_ASCII));
    }

    @Test
    void lendsTheSinksMemoryPageByPageAndCountsWhatWasPutThere() {
        PagedSink[] sink = new PagedSink[1];
        RespDecoder decoder = new RespDecoder(LIMITS, (arg, length) -> sink[0] = new PagedSink(length, 8));

        assertThat(feed(decoder, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$20\r\n012")).isNull();
        fill(decoder.payloadWindow(5), "34567");           // the rest of the first page
        decoder.payloadReceived(5);
        fill(decoder.payloadWindow(5), "89abcdef");        // a whole page
        decoder.payloadReceived(8);
        assertThat(decoder.payloadWindow(5)).as("the last 4 bytes come with what follows them").isNull();
        RespCommand command = feed(decoder, "ghij\r\n");

        assertThat(command.takeSink(2).toBytes()).isEqualTo(bytes("0123456789abcdefghij"));
        assertThat(sink[0].aborted).isFalse();
    }

    @Test
    void lendsATailAtLeastMinTailLongAndGoesOnToTheCrlf() {
        PagedSink[] sink = new PagedSink[1];
        RespDecoder decoder = new RespDecoder(LIMITS, (arg, length) -> sink[0] = new PagedSink(length, 64));

        assertThat(feed(decoder, "*2\r\n$3\r\nPUT\r\n$10\r\n")).isNull();
        fill(decoder.payloadWindow(10), "0123456789");
        decoder.payloadReceived(10);
        assertThat(decoder.payloadWindow(1)).as("no payload left").isNull();
        RespCommand command = feed(decoder, "\r\n");

        assertThat(command.takeSink(1).toBytes()).isEqualTo(bytes("0123456789"));
    }

    @Test
    void lendsNothingOutsideASinkPayloadOrForSinksWithoutMemory() {
        RespDecoder heapOnly = new RespDecoder(LIMITS, (arg, length) -> new PagedSink(length, 8));
        assertThat(heapOnly.payloadWindow(0)).as("before any command").isNull();
        assertThat(feed(heapOnly, "*2\r\n$3\r\nGET\r\n$4\r\nke")).isNull();
        assertThat(heapOnly.payloadWindow(0)).as("a payload below the sink threshold").isNull();
        buf.clear();

        RecordingSinkFactory plain = new RecordingSinkFactory();
        RespDecoder decoder = new RespDecoder(LIMITS, plain);
        assertThat(feed(decoder, "*2\r\n$3\r\nPUT\r\n$10\r\n01")).isNull();
        assertThat(decoder.payloadWindow(0)).as("a sink that lends no memory").isNull();
        assertThatThrownBy(() -> decoder.payloadReceived(1)).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void refusesToCountMoreThanThePayloadHasLeft() {
        RespDecoder decoder = new RespDecoder(LIMITS, (arg, length) -> new PagedSink(length, 64));
        assertThat(feed(decoder, "*2\r\n$3\r\nPUT\r\n$10\r\n0123")).isNull();

        assertThatThrownBy(() -> decoder.payloadReceived(7)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("6 payload bytes to go");
    }
}
