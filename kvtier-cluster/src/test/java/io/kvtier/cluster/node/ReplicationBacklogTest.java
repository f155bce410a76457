package io.kvtier.cluster.node;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ReplicationBacklogTest {
    @Test
    void countsWritesCallsAndBytesUntilTheyEnd() {
        ReplicationBacklog b = new ReplicationBacklog();
        int w = b.writeStarted(System.nanoTime());
        b.callsStarted(2, 2_000);
        b.callsStarted(1, 10);
        assertThat(b.writes()).isEqualTo(1);
        assertThat(b.calls()).isEqualTo(3);
        assertThat(b.bytes()).isEqualTo(2_010);
        b.callsEnded(2, 2_000);
        assertThat(b.calls()).isEqualTo(1);
        assertThat(b.bytes()).isEqualTo(10);
        b.callsEnded(1, 10);
        b.writeEnded(w);
        assertThat(b.writes()).isZero();
        assertThat(b.calls()).isZero();
        assertThat(b.bytes()).isZero();
        assertThat(b.oldestAgeMillis()).isZero();
    }

    @Test
    void reportsTheAgeOfTheOldestWriteStillInFlight() {
        ReplicationBacklog b = new ReplicationBacklog();
        long now = System.nanoTime();
        int old = b.writeStarted(now - TimeUnit.MILLISECONDS.toNanos(900));
        int young = b.writeStarted(now - TimeUnit.MILLISECONDS.toNanos(100));
        assertThat(b.oldestAgeMillis()).isBetween(900L, 5_000L);
        b.writeEnded(old);
        assertThat(b.oldestAgeMillis()).isBetween(100L, 900L);
        b.writeEnded(young);
        assertThat(b.oldestAgeMillis()).isZero();
    }

    @Test
    void writesBeyondTheTimedTableAreCountedButNotTimed() {
        ReplicationBacklog b = new ReplicationBacklog();
        List<Integer> handles = new ArrayList<>();
        for (int i = 0; i < 2 * ReplicationBacklog.CELLS; i++) {
            handles.add(b.writeStarted(System.nanoTime()));
        }
        assertThat(b.writes()).isEqualTo(2L * ReplicationBacklog.CELLS);
        assertThat(b.untimed()).isGreaterThanOrEqualTo(ReplicationBacklog.CELLS);
        assertThat(handles).contains(ReplicationBacklog.UNTIMED);
        handles.forEach(b::writeEnded);
        assertThat(b.writes()).isZero();
        assertThat(b.oldestAgeMillis()).isZero();
    }

    @Test
    void concurrentWritersLeaveNothingBehind() throws Exception {
        ReplicationBacklog b = new ReplicationBacklog();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            threads.add(Thread.ofPlatform().start(() -> {
                for (int i = 0; i < 20_000; i++) {
                    int h = b.writeStarted(System.nanoTime());
                    b.callsStarted(1, 100);
                    b.callsEnded(1, 100);
                    b.writeEnded(h);
                }
            }));
        }
        for (Thread t : threads) {
            t.join(30_000);
        }
        assertThat(b.writes()).isZero();
        assertThat(b.calls()).isZero();
        assertThat(b.bytes()).isZero();
        assertThat(b.oldestAgeMillis()).isZero();
    }
}
