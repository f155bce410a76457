package io.kvtier.server.net;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.server.config.ClientLimits;
import io.kvtier.server.net.ClientTimeouts.Verdict;
import org.junit.jupiter.api.Test;

/** The idle and read timeouts as decided from bytes read, commands finished and one-second ticks. */
class ClientTimeoutsTest {
    private static final long SECOND = 1_000_000_000L;
    private static final long MIB = 1 << 20;

    private static ClientTimeouts timeouts(int idleSeconds, int readSeconds) {
        return new ClientTimeouts(new ClientLimits(1L << 30, 16L << 20, idleSeconds, readSeconds), SECOND);
    }

    @Test
    void closesARequestThatBringsOneByteASecondAfterOneWindow() {
        ClientTimeouts t = timeouts(0, 3);
        Verdict last = Verdict.OK;
        long s;
        for (s = 2; s < 10 && last == Verdict.OK; s++) {
            t.read(1, s * SECOND);
            last = t.check(s * SECOND, true, false);
        }

        assertThat(last).isEqualTo(Verdict.TOO_SLOW);
        assertThat(s - 1).isEqualTo(5); // the window opened at the first tick (2 s) and ran 3 s
        assertThat(t.tooSlowError()).startsWith("ERR request timed out: 3 bytes in 3 s");
    }

    @Test
    void neverClosesARequestThatBringsAMebibytePerWindowHoweverLarge() {
        ClientTimeouts t = timeouts(0, 3);
        for (long s = 2; s < 1000; s++) {
            t.read((int) (MIB / 3 + 1), s * SECOND);
            assertThat(t.check(s * SECOND, true, false)).as("at %d s", s).isEqualTo(Verdict.OK);
        }
    }

    @Test
    void doesNotCountTimeTheServerItselfStoppedReading() {
        ClientTimeouts t = timeouts(0, 3);
        t.check(2 * SECOND, true, false);
        for (long s = 3; s < 60; s++) {
            assertThat(t.check(s * SECOND, false, true)).isEqualTo(Verdict.OK);
        }
        assertThat(t.check(60 * SECOND, true, false)).isEqualTo(Verdict.OK);
        assertThat(t.check(62 * SECOND, true, false)).isEqualTo(Verdict.OK);
        assertThat(t.check(63 * SECOND, true, false)).isEqualTo(Verdict.TOO_SLOW);
    }

    @Test
    void aFinishedCommandStartsANewWindow() {
        ClientTimeouts t = timeouts(0, 3);
        t.check(2 * SECOND, true, false);
        t.commandDone(4 * SECOND);

        assertThat(t.check(5 * SECOND, true, false)).isEqualTo(Verdict.OK);
        assertThat(t.check(7 * SECOND, true, false)).isEqualTo(Verdict.OK);
        assertThat(t.check(8 * SECOND, true, false)).isEqualTo(Verdict.TOO_SLOW);
    }

    @Test
    void closesAClientIdleLongerThanTheTimeoutButNotOneWaitingForItsReply() {
        ClientTimeouts t = timeouts(5, 0);
        t.read(10, 2 * SECOND);

        assertThat(t.check(7 * SECOND, false, false)).isEqualTo(Verdict.OK);
        assertThat(t.check(8 * SECOND, false, true)).isEqualTo(Verdict.OK);
        assertThat(t.check(8 * SECOND, false, false)).isEqualTo(Verdict.IDLE);
    }

    @Test
    void zeroMeansNever() {
        ClientTimeouts t = timeouts(0, 0);

        assertThat(t.check(1_000_000 * SECOND, true, false)).isEqualTo(Verdict.OK);
    }
}
