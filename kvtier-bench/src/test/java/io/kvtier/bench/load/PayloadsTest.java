package io.kvtier.bench.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class PayloadsTest {
    private static final byte[] KEY = "kvtier-bench:setget:1048576:7".getBytes(StandardCharsets.UTF_8);

    @Test
    void aVerifiedValueChecksCleanAtEverySize() {
        try (Payloads payloads = new Payloads(true, 1)) {
            for (int size : new int[] {16, 17, 23, 24, 28, 1000, 65_536}) {
                ByteBuf value = payloads.value(KEY, 42, size);
                try {
                    assertThat(value.readableBytes()).isEqualTo(size);
                    assertThat(payloads.wrongBytes(KEY, size, value)).as("size %d", size).isZero();
                } finally {
                    value.release();
                }
            }
        }
    }

    @Test
    void everyFlippedByteIsCountedOnceWhereverItIs() {
        try (Payloads payloads = new Payloads(true, 1)) {
            ByteBuf value = payloads.value(KEY, 3, 1003);
            try {
                for (int at : new int[] {0, 7, 8, 15, 16, 500, 1002}) {
                    value.setByte(at, value.getByte(at) ^ 0x40);
                }
                assertThat(payloads.wrongBytes(KEY, 1003, value)).isGreaterThanOrEqualTo(7);
                value.setByte(8, value.getByte(8) ^ 0x40);
                value.setByte(15, value.getByte(15) ^ 0x40);
                assertThat(payloads.wrongBytes(KEY, 1003, value)).isEqualTo(5);
            } finally {
                value.release();
            }
        }
    }

    @Test
    void anyVersionOfTheRightKeyIsRightButAnotherKeysValueIsWrong() {
        byte[] other = "kvtier-bench:setget:1048576:8".getBytes(StandardCharsets.UTF_8);
        try (Payloads payloads = new Payloads(true, 1)) {
            ByteBuf old = payloads.value(KEY, 1, 4096);
            ByteBuf foreign = payloads.value(other, 1, 4096);
            try {
                assertThat(payloads.wrongBytes(KEY, 4096, old)).isZero();
                assertThat(payloads.wrongBytes(KEY, 4096, foreign)).isGreaterThan(4000);
            } finally {
                old.release();
                foreign.release();
            }
        }
    }

    @Test
    void truncatedAndOverlongRepliesCountTheMissingOrExtraBytes() {
        try (Payloads payloads = new Payloads(true, 1)) {
            ByteBuf value = payloads.value(KEY, 9, 1000);
            try {
                assertThat(payloads.wrongBytes(KEY, 1000, value.slice(0, 900))).isEqualTo(100);
                assertThat(payloads.wrongBytes(KEY, 900, value)).isEqualTo(100);
                assertThat(payloads.wrongBytes(KEY, 1000, value.slice(0, 10))).isEqualTo(1000);
            } finally {
                value.release();
            }
        }
    }

    @Test
    void checkingDoesNotConsumeTheReply() {
        try (Payloads payloads = new Payloads(true, 1)) {
            ByteBuf value = payloads.value(KEY, 9, 100);
            payloads.wrongBytes(KEY, 100, value);
            assertThat(value.readableBytes()).isEqualTo(100);
            value.release();
        }
    }

    @Test
    void withoutVerificationEverySetSharesOneBufferAndOnlyLengthsAreChecked() {
        Payloads payloads = new Payloads(false, 1);
        ByteBuf a = payloads.value(KEY, 1, 4096);
        ByteBuf b = payloads.value("other".getBytes(StandardCharsets.UTF_8), 2, 4096);
        assertThat(a.isDirect()).isTrue();
        // Same memory, not the same wrapper: Netty's leak detector wraps a sampled buffer (1 in 128 by default,
        // every one at "paranoid") and each duplicate of it, so unwrap() is not stable across two duplicates.
        assertThat(a.hasMemoryAddress()).isTrue();
        assertThat(a.memoryAddress()).isEqualTo(b.memoryAddress());
        assertThat(payloads.wrongBytes(KEY, 4096, Unpooled.wrappedBuffer(new byte[4096]))).isZero();
        assertThat(payloads.wrongBytes(KEY, 4096, Unpooled.wrappedBuffer(new byte[4000]))).isEqualTo(96);
        ByteBuf shared = a.unwrap();
        a.release();
        b.release();
        payloads.close();
        assertThat(shared.refCnt()).isZero();
    }

    @Test
    void aVerifiedValueNeedsRoomForItsHeader() {
        try (Payloads payloads = new Payloads(true, 1)) {
            assertThatThrownBy(() -> payloads.value(KEY, 1, 15)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("at least 16 bytes");
        }
    }
}
