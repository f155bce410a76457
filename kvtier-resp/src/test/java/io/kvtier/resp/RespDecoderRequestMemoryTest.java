package io.kvtier.resp;

import static io.kvtier.resp.Decoding.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Request memory: the declared size against the query buffer limit, and the heap charged to the shared budget. */
class RespDecoderRequestMemoryTest {
    private static final int OVERHEAD = RespDecoder.HEAP_PER_ARG;
    private static final int COMMAND = RespDecoder.HEAP_PER_COMMAND;
    private static final RespDecoder.Limits LIMITS = new RespDecoder.Limits(1 << 20, 100_000, 1024, 256);

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
    void chargesTheArgvSlotsAndEveryHeapArgumentBeforeItsBytesArrive() {
        RequestBudget budget = new RequestBudget(1 << 20);
        RespDecoder decoder = new RespDecoder(LIMITS, new RecordingSinkFactory(), budget.open(() -> { }));

        assertThat(feed(decoder, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\n")).isNull();

        assertThat(decoder.heapBytes()).isEqualTo(COMMAND + 3L * OVERHEAD + 3 + 1 + 5);
        assertThat(budget.used()).isEqualTo(decoder.heapBytes());
        assertThat(decoder.inRequest()).isTrue();
    }

    @Test
    void keepsACommandsChargeUntilItIsReportedFinished() {
        RequestBudget budget = new RequestBudget(1 << 20);
        RespDecoder decoder = new RespDecoder(LIMITS, new RecordingSinkFactory(), budget.open(() -> { }));

        RespCommand command = feed(decoder, "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");

        assertThat(command).isNotNull();
        assertThat(decoder.inRequest()).isFalse();
        assertThat(budget.used()).isEqualTo(COMMAND + 2L * OVERHEAD + 4);
        decoder.commandFinished();
        assertThat(budget.used()).isZero();
    }

    @Test
    void doesNotChargeTheHeapForPayloadsThatGoToSinks() {
        RequestBudget budget = new RequestBudget(1 << 20);
        RespDecoder decoder = new RespDecoder(LIMITS, new RecordingSinkFactory(), budget.open(() -> { }));

        feed(decoder, "*2\r\n$1\r\nk\r\n$300\r\n");

        assertThat(decoder.heapBytes()).isEqualTo(COMMAND + 2L * OVERHEAD + 1);
    }

    @Test
    void refusesARequestWhoseDeclaredSizeExceedsTheQueryBufferLimitAtItsHeader() {
        RespDecoder decoder = new RespDecoder(LIMITS.withMaxRequestBytes(1000), new RecordingSinkFactory());

        assertThat(feed(decoder, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n")).isNull();
        assertThatThrownBy(() -> feed(decoder, "$950\r\n"))
                .isInstanceOf(RespException.class)
                .hasMessage("ERR max query buffer length reached: this request declares more than 1000 bytes"
                        + " (client-query-buffer-limit 1000); closing the connection");
    }

    @Test
    void countsSinkPayloadsAgainstTheQueryBufferLimitToo() {
        RecordingSinkFactory sinks = new RecordingSinkFactory();
        RespDecoder decoder = new RespDecoder(LIMITS.withMaxRequestBytes(1000), sinks);

        assertThatThrownBy(() -> feed(decoder, "*3\r\n$1\r\nk\r\n$500\r\n" + "x".repeat(500) + "\r\n$500\r\n"))
                .isInstanceOf(RespException.class);
        assertThat(sinks.opened).hasSize(1);
        assertThat(sinks.opened.getFirst().isAborted()).isTrue();
    }

    @Test
    void chargesTheArgvArrayForAHugeArgumentCountOnlyAsItGrows() {
        RequestBudget budget = new RequestBudget(1 << 20);
        RespDecoder decoder = new RespDecoder(LIMITS, new RecordingSinkFactory(), budget.open(() -> { }));

        feed(decoder, "*100000\r\n");

        assertThat(budget.used()).isEqualTo(COMMAND + 1024L * OVERHEAD);
        feed(decoder, "$0\r\n\r\n".repeat(1025));
        assertThat(budget.used()).isEqualTo(COMMAND + 2048L * OVERHEAD);
    }

    @Test
    void refusesTheLargestRequestWhenTheSharedBudgetIsFull() {
        RequestBudget budget = new RequestBudget(20_000);
        RespDecoder decoder = new RespDecoder(LIMITS, new RecordingSinkFactory(), budget.open(() -> { }));

        assertThatThrownBy(() -> feed(decoder, "*300\r\n" + ("$70\r\n" + "x".repeat(70) + "\r\n").repeat(300)))
                .isInstanceOf(RespException.class)
                .hasMessageStartingWith("ERR client memory limit reached: requests in progress of all clients would"
                        + " hold more than 20000 bytes");
        assertThat(budget.used()).isZero();
    }

    @Test
    void evictsTheConnectionHoldingTheMostRatherThanRefusingASmallRequest() {
        RequestBudget budget = new RequestBudget(19_500);
        AtomicInteger evictions = new AtomicInteger();
        RespDecoder hog = new RespDecoder(LIMITS, new RecordingSinkFactory(), budget.open(evictions::incrementAndGet));
        RespDecoder honest = new RespDecoder(LIMITS, new RecordingSinkFactory(), budget.open(() -> { }));
        ByteBuf hogInput = Unpooled.wrappedBuffer(bytes("*300\r\n" + ("$70\r\n" + "x".repeat(70) + "\r\n").repeat(105)));
        hog.decode(hogInput);
        hogInput.release();

        RespCommand set = feed(honest, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$7\r\n1234567\r\n");

        assertThat(set).isNotNull();
        assertThat(evictions).hasValue(1);
        assertThat(budget.used()).isEqualTo(honest.heapBytes());
        ByteBuf more = Unpooled.wrappedBuffer(bytes("$1\r\nx\r\n"));
        assertThatThrownBy(() -> hog.decode(more)).isInstanceOf(RespException.class)
                .hasMessageStartingWith("ERR client memory limit reached");
        more.release();
        hog.close();
        assertThat(budget.used()).isEqualTo(honest.heapBytes());
    }

    @Test
    void givesBackEverythingOnClose() {
        RequestBudget budget = new RequestBudget(1 << 20);
        RespDecoder decoder = new RespDecoder(LIMITS, new RecordingSinkFactory(), budget.open(() -> { }));
        feed(decoder, "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*2\r\n$3\r\nGET\r\n");

        decoder.close();

        assertThat(budget.used()).isZero();
    }

    @Test
    void chargesTheSameWhateverTheFragmentation() {
        String request = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$7\r\n1234567\r\n";
        RequestBudget whole = new RequestBudget(1 << 20);
        RespDecoder once = new RespDecoder(LIMITS, new RecordingSinkFactory(), whole.open(() -> { }));
        feed(once, request);
        RequestBudget split = new RequestBudget(1 << 20);
        RespDecoder bytewise = new RespDecoder(LIMITS, new RecordingSinkFactory(), split.open(() -> { }));
        RespCommand command = null;
        for (char c : request.toCharArray()) {
            command = feed(bytewise, String.valueOf(c));
        }

        assertThat(command).isNotNull();
        assertThat(split.used()).isEqualTo(whole.used()).isEqualTo(COMMAND + 3L * OVERHEAD + 11);
    }

    @Test
    void chargesInlineCommandsToo() {
        RequestBudget budget = new RequestBudget(1 << 20);
        RespDecoder decoder = new RespDecoder(LIMITS, new RecordingSinkFactory(), budget.open(() -> { }));

        RespCommand command = feed(decoder, "SET k v\r\n");

        assertThat(command).isNotNull();
        assertThat(budget.used()).isEqualTo(COMMAND + 3L * OVERHEAD + "SET k v".length());
        decoder.commandFinished();
        assertThat(budget.used()).isZero();
    }

    @Test
    void inlineCommandsOverTheBudgetAreRefused() {
        RequestBudget budget = new RequestBudget(10_000);
        RespDecoder decoder = new RespDecoder(LIMITS, new RecordingSinkFactory(), budget.open(() -> { }));
        int queued = 0;
        try {
            while (queued < 1_000) {
                assertThat(feed(decoder, "SET k v\r\n")).isNotNull(); // held, as queued in MULTI: never finished
                queued++;
            }
        } catch (RespException e) {
            assertThat(e.getMessage()).contains("maxmemory-clients");
        }
        assertThat(queued).isEqualTo((int) (10_000 / (COMMAND + 3L * OVERHEAD + 7)));
    }
}
