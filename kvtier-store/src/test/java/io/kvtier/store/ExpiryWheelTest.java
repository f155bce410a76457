package io.kvtier.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ExpiryWheelTest {
    private static final long T0 = 1_700_000_000_000L;

    private static Entry entry(int i, long expireAt) {
        return new Entry(new Key(("k" + i).getBytes(StandardCharsets.UTF_8)), i, 1, expireAt, EntryState.MEMORY);
    }

    private static List<Entry> advance(ExpiryWheel wheel, long now) {
        List<Entry> due = new ArrayList<>();
        wheel.advance(now, due::add);
        return due;
    }

    @Test
    void handsOverEachEntryOnceWithinOneTickAfterItsDeadline() {
        ExpiryWheel wheel = new ExpiryWheel(T0);
        Random random = new Random(7);
        List<Entry> entries = new ArrayList<>();
        for (int i = 0; i < 20_000; i++) {
            // deadlines from now to ~60 days: every level, the overflow bucket included
            long delay = i % 4 == 0 ? random.nextInt(5_000)
                    : (long) (Math.pow(random.nextDouble(), 4) * 60 * 86_400_000L);
            Entry e = entry(i, T0 + 1 + delay);
            entries.add(e);
            wheel.schedule(e);
        }
        assertThat(wheel.size()).isEqualTo(20_000);
        Set<Entry> seen = new HashSet<>();
        long now = T0;
        while (seen.size() < entries.size()) {
            now += 100 + random.nextInt(2_000_000); // irregular steps, mostly far beyond one tick
            for (Entry e : advance(wheel, now)) {
                assertThat(e.expireAt).as("never before its deadline").isLessThanOrEqualTo(now);
                assertThat(seen.add(e)).as("handed over once").isTrue();
            }
            assertThat(now).as("all due within 61 days").isLessThan(T0 + 61 * 86_400_000L);
        }
        assertThat(wheel.size()).isZero();
    }

    @Test
    void expiresWithinATickWhenAdvancedEveryQuarterSecond() {
        ExpiryWheel wheel = new ExpiryWheel(T0);
        List<Entry> entries = new ArrayList<>();
        for (int i = 0; i < 2_000; i++) {
            Entry e = entry(i, T0 + 1 + i * 997L); // up to ~33 minutes: levels 0, 1 and 2
            entries.add(e);
            wheel.schedule(e);
        }
        for (long now = T0 + 250; now < T0 + 2_000 * 997L + 1_000; now += 250) {
            for (Entry e : advance(wheel, now)) {
                assertThat(now - e.expireAt).as("lateness").isBetween(0L, 512L);
            }
        }
        assertThat(wheel.size()).isZero();
    }

    @Test
    void anIdleAdvanceDoesNoWorkForFarDeadlines() {
        ExpiryWheel wheel = new ExpiryWheel(T0);
        for (int i = 0; i < 100_000; i++) {
            wheel.schedule(entry(i, T0 + 3_600_000L + i));
        }
        assertThat(advance(wheel, T0 + 250)).isEmpty();
        assertThat(advance(wheel, T0 + 500)).isEmpty();
        assertThat(wheel.size()).isEqualTo(100_000);
    }

    @Test
    void rescheduledUnscheduledAndPersistedEntriesFollowTheirLatestDeadline() {
        ExpiryWheel wheel = new ExpiryWheel(T0);
        Entry moved = entry(1, T0 + 1_000);
        Entry removed = entry(2, T0 + 1_000);
        Entry persisted = entry(3, T0 + 1_000);
        Entry retired = entry(4, T0 + 1_000);
        for (Entry e : List.of(moved, removed, persisted, retired)) {
            wheel.schedule(e);
        }
        moved.expireAt = T0 + 100_000;
        wheel.schedule(moved);
        wheel.unschedule(removed);
        persisted.expireAt = 0;
        wheel.schedule(persisted);
        synchronized (retired) {
            retired.moveTo(EntryState.DELETED, new StoreCounters());
        }
        retired.expireAt = T0 + 50_000;
        wheel.schedule(retired); // a late schedule of a retired version is ignored
        assertThat(wheel.size()).isEqualTo(1);
        assertThat(advance(wheel, T0 + 2_000)).isEmpty();
        assertThat(advance(wheel, T0 + 99_999)).isEmpty();
        assertThat(advance(wheel, T0 + 100_300)).containsExactly(moved);
    }

    @Test
    void aDeadlineAlreadyPastIsDueAtTheNextTick() {
        ExpiryWheel wheel = new ExpiryWheel(T0);
        advance(wheel, T0 + 10_000);
        Entry late = entry(1, T0 + 5);
        wheel.schedule(late);
        assertThat(advance(wheel, T0 + 10_300)).containsExactly(late);
    }
}
