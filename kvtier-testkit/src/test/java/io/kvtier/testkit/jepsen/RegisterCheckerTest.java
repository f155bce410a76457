package io.kvtier.testkit.jepsen;

import static io.kvtier.testkit.jepsen.Op.Outcome.FAIL;
import static io.kvtier.testkit.jepsen.Op.Outcome.INFO;
import static io.kvtier.testkit.jepsen.Op.Outcome.OK;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The WGL checker on hand-made histories (times in ms), linearizable and not, and the lost-write check. */
class RegisterCheckerTest {
    private static final long MS = 1_000_000L;

    private static Op w(String p, String v, long from, long to, Op.Outcome outcome) {
        return Op.write(p, v, from * MS, to * MS, outcome);
    }

    private static Op r(String p, String v, long from, long to) {
        return Op.read(p, v, from * MS, to * MS, OK);
    }

    @Test
    void sequentialHistoryIsLinearizable() {
        assertThat(RegisterChecker.check("k", List.of(r("c1", null, 0, 1), w("c1", "a", 2, 3, OK),
                r("c2", "a", 4, 5), w("c2", "b", 6, 7, OK), r("c1", "b", 8, 9))).linearizable()).isTrue();
    }

    @Test
    void overlappingOperationsMayTakeEffectInEitherOrder() {
        // Two concurrent writes; readers during and after them see the order b then a.
        List<Op> h = List.of(w("c1", "a", 0, 10, OK), w("c2", "b", 1, 9, OK), r("c3", "b", 2, 4),
                r("c3", "a", 5, 8), r("c4", "a", 11, 12));
        assertThat(RegisterChecker.check("k", h).linearizable()).isTrue();
        // A read overlapping a write may see the value before it or after it.
        assertThat(RegisterChecker.check("k", List.of(w("c1", "a", 0, 1, OK), w("c1", "b", 2, 10, OK),
                r("c2", "a", 3, 4), r("c3", "b", 5, 6))).linearizable()).isTrue();
    }

    @Test
    void indeterminateWritesMayTakeEffectLateOrNever() {
        // 'x' timed out at 2 ms and is first seen at 50 ms, after 'b' was acknowledged: it took effect late.
        List<Op> late = List.of(w("c1", "a", 0, 1, OK), w("c2", "x", 2, 3, INFO), w("c1", "b", 10, 11, OK),
                r("c3", "b", 12, 13), r("c3", "x", 50, 51), r("c4", "x", 60, 61));
        assertThat(RegisterChecker.check("k", late).linearizable()).isTrue();
        // 'y' never took effect; a failed write ('z') did not happen.
        List<Op> never = List.of(w("c1", "a", 0, 1, OK), w("c2", "y", 2, 3, INFO), w("c2", "z", 4, 5, FAIL),
                r("c3", "a", 10, 11), r("c3", "a", 20, 21));
        assertThat(RegisterChecker.check("k", never).linearizable()).isTrue();
    }

    @Test
    void staleReadAfterAnAcknowledgedWriteIsNotLinearizable() {
        List<Op> h = List.of(w("c1", "a", 0, 1, OK), w("c1", "b", 2, 3, OK), r("c2", "a", 5, 6));
        RegisterChecker.Result result = RegisterChecker.check("k", h);
        assertThat(result.linearizable()).isFalse();
        assertThat(result.report()).startsWith("key k: not linearizable").contains("> c2 read -> 'a' [5.0, 6.0 ms]")
                .contains("c1 write 'b' [2.0, 3.0 ms] ok");
        assertThat(RegisterHistory.staleReads(h)).isEqualTo(1);
    }

    @Test
    void readingAnOlderValueAfterANewerOneIsNotLinearizable() {
        // a and b overlap, so either order is fine, but not both: c2 saw b, then c3 saw a afterwards.
        List<Op> h = List.of(w("c1", "a", 0, 10, OK), w("c2", "b", 0, 10, OK), r("c3", "a", 11, 12),
                r("c3", "b", 13, 14), r("c4", "a", 15, 16));
        assertThat(RegisterChecker.check("k", h).linearizable()).isFalse();
        // An acknowledged write lost to a read of nil.
        assertThat(RegisterChecker.check("k", List.of(w("c1", "a", 0, 1, OK), r("c2", null, 2, 3)))
                .linearizable()).isFalse();
        // A value nobody wrote successfully: a failed write must not be seen.
        assertThat(RegisterChecker.check("k", List.of(w("c1", "a", 0, 1, FAIL), r("c2", "a", 2, 3)))
                .linearizable()).isFalse();
    }

    @Test
    void lostWriteIsTheFinalReadMissingAnAcknowledgedWrite() {
        List<Op> h = new ArrayList<>(List.of(w("c1", "a", 0, 1, OK), w("c1", "b", 2, 3, OK), w("c2", "x", 4, 5, INFO)));
        assertThat(RegisterHistory.lostWrite(h, r("final", "b", 10, 11))).isNull();
        assertThat(RegisterHistory.lostWrite(h, r("final", "x", 10, 11))).isNull();
        assertThat(RegisterHistory.lostWrite(h, r("final", "a", 10, 11))).contains("after c1 write 'b'");
        assertThat(RegisterHistory.lostWrite(h, r("final", null, 10, 11))).contains("returned nil");
        // An indeterminate write that was seen, then overwritten by an acknowledged one, must not come back.
        List<Op> seen = List.of(w("c1", "x", 0, 1, INFO), r("c2", "x", 2, 3), w("c1", "b", 4, 5, OK));
        assertThat(RegisterHistory.lostWrite(seen, r("final", "x", 10, 11))).contains("after c1 write 'b'");
        assertThat(RegisterChecker.check("k", List.of(seen.get(0), seen.get(1), seen.get(2), r("final", "x", 10, 11)))
                .linearizable()).isFalse();

        RegisterHistory history = new RegisterHistory();
        h.forEach(op -> history.add("k", op));
        history.addFinalRead("k", r("final", "a", 10, 11));
        RegisterHistory.Verdict verdict = history.check();
        assertThat(verdict.clean()).isFalse();
        assertThat(verdict.nonLinearizable()).isEqualTo(1);
        assertThat(verdict.lost()).hasSize(1);
    }

    @Test
    void manyConcurrentClientsOnASerialRegisterStayFast() {
        // 8 clients, 300 operations with overlapping intervals and some timeouts, produced by a real register.
        Random random = new Random(7);
        List<Op> h = new ArrayList<>();
        String value = null;
        long t = 0;
        for (int i = 0; i < 300; i++) {
            t += 1 + random.nextInt(3);
            long invoke = t - random.nextInt(5);
            long complete = t + random.nextInt(5);
            String p = "c" + random.nextInt(8);
            if (random.nextBoolean()) {
                value = p + ":" + i;
                h.add(w(p, value, invoke, complete, random.nextInt(10) == 0 ? INFO : OK));
            } else {
                h.add(r(p, value, invoke, complete));
            }
        }
        long start = System.nanoTime();
        assertThat(RegisterChecker.check("k", h).linearizable()).isTrue();
        assertThat((System.nanoTime() - start) / MS).isLessThan(5_000);
    }
}
