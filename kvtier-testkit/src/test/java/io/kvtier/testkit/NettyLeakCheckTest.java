package io.kvtier.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBufAllocator;
import org.junit.jupiter.api.Test;

/** The leak check itself: an unreleased buffer is reported. */
class NettyLeakCheckTest {
    @Test
    void reportsABufferThatWasNeverReleased() throws InterruptedException {
        new NettyLeakCheck().beforeAll(null);
        leakOneBuffer();

        assertThat(NettyLeakCheck.collectLeaks()).anySatisfy(leak -> assertThat(leak).contains("leakOneBuffer"));
    }

    @Test
    void reportsNothingWhenEveryBufferIsReleased() throws InterruptedException {
        NettyLeakCheck.collectLeaks();
        ByteBufAllocator.DEFAULT.directBuffer(64).writeLong(1).release();

        assertThat(NettyLeakCheck.collectLeaks()).isEmpty();
    }

    private static void leakOneBuffer() {
        ByteBufAllocator.DEFAULT.directBuffer(64).writeLong(42);
    }
}
