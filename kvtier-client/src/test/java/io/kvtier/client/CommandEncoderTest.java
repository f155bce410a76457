package io.kvtier.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.testkit.NettyLeakCheck;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(NettyLeakCheck.class)
class CommandEncoderTest {
    private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;

    private static String text(ByteBuf buf) {
        return buf.toString(StandardCharsets.ISO_8859_1);
    }

    private static ByteBuf buffer(String text) {
        return ALLOC.directBuffer().writeBytes(text.getBytes(StandardCharsets.ISO_8859_1));
    }

    @Test
    void encodesStringsBytesAndSmallByteBufsIntoOneBuffer() {
        ByteBuf small = buffer("v\r\n1");

        ByteBuf[] parts = CommandEncoder.encode(ALLOC, new Object[] {"SET", "ké".getBytes(StandardCharsets.UTF_8),
                small});

        assertThat(parts).hasSize(1);
        assertThat(text(parts[0])).isEqualTo("*3\r\n$3\r\nSET\r\n$3\r\nk\u00c3\u00a9\r\n$4\r\nv\r\n1\r\n");
        assertThat(small.refCnt()).as("small ByteBuf copied and released").isZero();
        parts[0].release();
    }

    @Test
    void passesLargeByteBufsOnWithoutCopying() {
        ByteBuf large = ALLOC.directBuffer(CommandEncoder.ZERO_COPY_THRESHOLD).writeZero(
                CommandEncoder.ZERO_COPY_THRESHOLD);
        ByteBuf duplicate = large.retainedDuplicate();

        ByteBuf[] parts = CommandEncoder.encode(ALLOC, new Object[] {"SET", "k", duplicate, "EX", "10"});

        assertThat(parts).hasSize(3);
        assertThat(text(parts[0])).isEqualTo("*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$16384\r\n");
        assertThat(parts[1]).isSameAs(duplicate);
        assertThat(text(parts[2])).isEqualTo("\r\n$2\r\nEX\r\n$2\r\n10\r\n");
        for (ByteBuf part : parts) {
            part.release();
        }
        assertThat(large.refCnt()).isEqualTo(1);
        large.release();
    }

    @Test
    void encodesTheReadableBytesOfAByteBuf() {
        ByteBuf buf = buffer("xxabc");
        buf.skipBytes(2);

        ByteBuf[] parts = CommandEncoder.encode(ALLOC, new Object[] {"ECHO", buf});

        assertThat(text(parts[0])).isEqualTo("*2\r\n$4\r\nECHO\r\n$3\r\nabc\r\n");
        parts[0].release();
    }

    @Test
    void refusesArgumentsOfOtherTypesAndReleasesEveryByteBuf() {
        ByteBuf before = buffer("a");
        ByteBuf after = Unpooled.wrappedBuffer(new byte[CommandEncoder.ZERO_COPY_THRESHOLD]);

        assertThatThrownBy(() -> CommandEncoder.encode(ALLOC, new Object[] {"SET", before, 42, after}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("argument 2 is a java.lang.Integer; pass a byte[], ByteBuf or String");
        assertThat(before.refCnt()).isZero();
        assertThat(after.refCnt()).isZero();
    }

    @Test
    void refusesNoArgumentsNullAndReleasedByteBufs() {
        ByteBuf released = buffer("x");
        released.release();

        assertThatThrownBy(() -> CommandEncoder.encode(ALLOC, new Object[0]))
                .hasMessage("a command needs at least one argument");
        assertThatThrownBy(() -> CommandEncoder.encode(ALLOC, new Object[] {"GET", null}))
                .hasMessage("argument 1 is null");
        assertThatThrownBy(() -> CommandEncoder.encode(ALLOC, new Object[] {"GET", released}))
                .hasMessage("argument 1 is a released ByteBuf");
    }
}
