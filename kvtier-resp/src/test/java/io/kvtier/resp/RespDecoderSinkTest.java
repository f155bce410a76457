package io.kvtier.resp;

import static io.kvtier.resp.Decoding.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Large payloads: streamed into sinks as they arrive, backpressure when none is available, ownership of sinks. */
class RespDecoderSinkTest {
    private static final RespDecoder.Limits LIMITS = new RespDecoder.Limits(1 << 20, 100, 1024, 8);

    private final ByteBuf buf = Unpooled.buffer();

    @AfterEach
    void releaseBuffer() {
        buf.release();
    }

    private RespCommand feed(RespDecoder decoder, String chunk) {
        buf.writeBytes(bytes(chunk));
        return decoder.decode(buf);
    }

    @Test
    void streamsALargePayloadIntoASinkFragmentByFragmentAsItArrives() {
        RecordingSinkFactory sinks = new RecordingSinkFactory();
        RespDecoder decoder = new RespDecoder(LIMITS, sinks);

        assertThat(feed(decoder, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$20\r\n0123")).isNull();
        HeapBulkSink sink = sinks.opened.getFirst();
        assertThat(sink.argIndex).isEqualTo(2);
        assertThat(sink.length()).isEqualTo(20);
        assertThat(sink.filledBytes()).isEqualTo(bytes("0123"));
        assertThat(buf.isReadable()).isFalse();
        assertThat(feed(decoder, "456789abcdef")).isNull();
        RespCommand command = feed(decoder, "ghij\r\n");

        assertThat(sink.writes).containsExactly(4, 12, 4);
        assertThat(command.isSink(2)).isTrue();
        assertThat(command.isSink(1)).isFalse();
        assertThat(command.takeSink(2)).isSameAs(sink);
        assertThat(sink.toBytes()).isEqualTo(bytes("0123456789abcdefghij"));
    }

    @Test
    void sendsPayloadsFromTheThresholdOnToSinksAndShorterOnesToTheHeap() {
        RecordingSinkFactory sinks = new RecordingSinkFactory();
        RespDecoder decoder = new RespDecoder(LIMITS, sinks);

        RespCommand command = feed(decoder, "*2\r\n$7\r\n1234567\r\n$8\r\n12345678\r\n");

        assertThat(command.isSink(0)).isFalse();
        assertThat(command.isSink(1)).isTrue();
        assertThat(command.length(1)).isEqualTo(8);
        assertThat(command.bytes(1)).isEqualTo(bytes("12345678"));
        assertThat(sinks.opened).hasSize(1);
    }

    @Test
    void waitsWithoutConsumingWhenTheFactoryHasNoSinkAndResumesWhenItHasOne() {
        RecordingSinkFactory sinks = new RecordingSinkFactory(2);
        RespDecoder decoder = new RespDecoder(LIMITS, sinks);

        assertThat(feed(decoder, "*1\r\n$10\r\n01234")).isNull();
        assertThat(decoder.isWaitingForSink()).isTrue();
        int waitingAt = buf.readerIndex();
        assertThat(feed(decoder, "56789\r\n")).isNull();
        assertThat(decoder.isWaitingForSink()).isTrue();
        assertThat(buf.readerIndex()).isEqualTo(waitingAt);
        RespCommand command = decoder.decode(buf);

        assertThat(sinks.refusals).isEqualTo(2);
        assertThat(decoder.isWaitingForSink()).isFalse();
        assertThat(command.bytes(0)).isEqualTo(bytes("0123456789"));
        assertThat(sinks.opened.getFirst().writes).containsExactly(10);
    }

    @Test
    void abortsAnInProgressSinkOnClose() {
        RecordingSinkFactory sinks = new RecordingSinkFactory();
        RespDecoder decoder = new RespDecoder(LIMITS, sinks);
        feed(decoder, "*2\r\n$8\r\nfirst---\r\n$8\r\nsec");

        decoder.close();
        decoder.close();

        assertThat(sinks.opened).hasSize(2).allMatch(HeapBulkSink::isAborted);
        assertThatThrownBy(() -> decoder.decode(buf)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void leavesTheSinksOfAHandedOutCommandToItsConsumerOnClose() {
        RecordingSinkFactory sinks = new RecordingSinkFactory();
        RespDecoder decoder = new RespDecoder(LIMITS, sinks);
        RespCommand command = feed(decoder, "*1\r\n$8\r\n12345678\r\n");

        decoder.close();

        assertThat(sinks.opened.getFirst().isAborted()).isFalse();
        command.release();
        assertThat(sinks.opened.getFirst().isAborted()).isTrue();
    }

    @Test
    void stopsWaitingForASinkOnClose() {
        RespDecoder decoder = new RespDecoder(LIMITS, new RecordingSinkFactory(1));
        feed(decoder, "*1\r\n$8\r\n");
        assertThat(decoder.isWaitingForSink()).isTrue();

        decoder.close();

        assertThat(decoder.isWaitingForSink()).isFalse();
    }

    @Test
    void failsLoudlyWhenASinkDoesNotConsumeWhatItWasGiven() {
        AtomicBoolean aborted = new AtomicBoolean();
        BulkSink lazy = new BulkSink() {
            @Override
            public long length() {
                return 8;
            }

            @Override
            public void write(ByteBuf src, int length) {
            }

            @Override
            public byte[] toBytes() {
                throw new UnsupportedOperationException();
            }

            @Override
            public void abort() {
                aborted.set(true);
            }
        };
        RespDecoder decoder = new RespDecoder(LIMITS, (argIndex, length) -> lazy);

        assertThatThrownBy(() -> feed(decoder, "*1\r\n$8\r\n1234")).isInstanceOf(IllegalStateException.class);
        assertThat(aborted).isTrue();
        assertThatThrownBy(() -> decoder.decode(buf)).isInstanceOf(IllegalStateException.class);
    }
}
