package io.kvtier.store;

import static io.kvtier.store.TestStore.KiB;
import static io.kvtier.store.TestStore.MiB;
import static io.kvtier.store.TestStore.join;
import static io.kvtier.store.TestStore.key;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TieredStoreExpiryTest {
    private static final long HOUR = 3_600_000;

    @TempDir
    Path dir;

    @Test
    void valueIsGoneAfterItsExpiry() throws Exception {
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            long now = System.currentTimeMillis();
            join(s.putAsync("short", Values.of("short", 1, 100), expiringAt(now + 50)));
            join(s.putAsync("long", Values.of("long", 1, 100), expiringAt(now + HOUR)));
            assertThat(s.store.expireAt(key("long"))).isEqualTo(now + HOUR);

            Thread.sleep(200);

            assertThat(s.read("short")).isNull();
            assertThat(s.store.exists(key("short"))).isFalse();
            assertThat(s.store.expireAt(key("short"))).isEqualTo(-1);
            assertThat(s.read("long")).isEqualTo(Values.of("long", 1, 100));
            assertThat(s.store.size()).isEqualTo(1);
            assertThat(s.stats().expiredKeys()).isEqualTo(1);
            assertThat(s.stats().memoryValueBytes()).as("the expired value was freed").isEqualTo(100);
        }
    }

    @ParameterizedTest(name = "disk-resident: {0}")
    @ValueSource(booleans = {false, true})
    void setExpiryHonoursNxXxGtLt(boolean onDisk) throws IOException {
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            s.put("k", Values.of("k", 1, (int) (64 * KiB)));
            if (onDisk) {
                s.pushToDisk("k");
            }
            long t = System.currentTimeMillis() + HOUR;

            assertThat(setExpiry(s, "k", t, ExpireCondition.XX)).as("XX without expiry").isFalse();
            assertThat(setExpiry(s, "k", t, ExpireCondition.GT)).as("GT: no expiry counts as infinite").isFalse();
            assertThat(s.store.expireAt(key("k"))).isZero();
            assertThat(setExpiry(s, "k", t, ExpireCondition.LT)).as("LT: anything is sooner than never").isTrue();
            assertThat(s.store.expireAt(key("k"))).isEqualTo(t);
            assertThat(setExpiry(s, "k", t + 1000, ExpireCondition.NX)).as("NX with expiry").isFalse();
            assertThat(setExpiry(s, "k", t - 1000, ExpireCondition.GT)).isFalse();
            assertThat(setExpiry(s, "k", t + 1000, ExpireCondition.GT)).isTrue();
            assertThat(s.store.expireAt(key("k"))).isEqualTo(t + 1000);
            assertThat(setExpiry(s, "k", t + 2000, ExpireCondition.LT)).isFalse();
            assertThat(setExpiry(s, "k", t - 1000, ExpireCondition.LT)).isTrue();
            assertThat(s.store.expireAt(key("k"))).isEqualTo(t - 1000);
            assertThat(setExpiry(s, "k", t, ExpireCondition.XX)).isTrue();
            assertThat(s.store.expireAt(key("k"))).isEqualTo(t);

            assertThat(setExpiry(s, "k", 0, ExpireCondition.ALWAYS)).as("PERSIST").isTrue();
            assertThat(s.store.expireAt(key("k"))).isZero();
            assertThat(setExpiry(s, "k", 0, ExpireCondition.ALWAYS)).as("PERSIST without expiry").isFalse();
            assertThat(setExpiry(s, "k", t, ExpireCondition.NX)).isTrue();
            assertThat(setExpiry(s, "missing", t, ExpireCondition.ALWAYS)).isFalse();
            assertThat(s.read("k")).isEqualTo(Values.of("k", 1, (int) (64 * KiB)));

            assertThat(setExpiry(s, "k", System.currentTimeMillis() - 1, ExpireCondition.ALWAYS))
                    .as("an expiry in the past deletes").isTrue();
            assertThat(s.read("k")).isNull();
            assertThat(s.store.exists(key("k"))).isFalse();
        }
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            assertThat(s.read("k")).as("deleted by expiry, also after restart").isNull();
        }
    }

    @Test
    void keepTtlKeepsTheExpiryAndAPlainPutClearsIt() throws IOException {
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            long t = System.currentTimeMillis() + HOUR;
            join(s.putAsync("k", Values.of("k", 1, 100), expiringAt(t)));
            join(s.putAsync("k", Values.of("k", 2, 100), new PutOptions(0, PutOptions.Condition.ALWAYS, true, false)));
            assertThat(s.store.expireAt(key("k"))).isEqualTo(t);
            s.put("k", Values.of("k", 3, 100));
            assertThat(s.store.expireAt(key("k"))).isZero();
        }
    }

    @Test
    void expirySurvivesRestartForDiskResidentKeys() throws Exception {
        long later = System.currentTimeMillis() + HOUR;
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            for (String k : new String[] {"set", "soon", "untouched", "overwritten"}) {
                s.put(k, Values.of(k, 1, 1000));
            }
            join(s.putAsync("persisted", Values.of("persisted", 1, 1000), expiringAt(later)));
        }
        long soon;
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            assertThat(s.state("set")).isEqualTo(EntryState.DISK);
            assertThat(s.store.expireAt(key("persisted"))).isEqualTo(later);
            soon = System.currentTimeMillis() + 300;
            assertThat(setExpiry(s, "set", later, ExpireCondition.ALWAYS)).isTrue();
            assertThat(setExpiry(s, "soon", soon, ExpireCondition.ALWAYS)).isTrue();
            assertThat(setExpiry(s, "persisted", 0, ExpireCondition.ALWAYS)).isTrue();
            assertThat(setExpiry(s, "overwritten", later, ExpireCondition.ALWAYS)).isTrue();
            s.put("overwritten", Values.of("overwritten", 2, 1000));
            s.put("memory-only", Values.of("memory-only", 1, 1000));
            assertThat(setExpiry(s, "memory-only", later + 1, ExpireCondition.ALWAYS)).isTrue();
        }
        while (System.currentTimeMillis() <= soon) {
            Thread.sleep(20);
        }
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            assertThat(s.store.expireAt(key("set"))).isEqualTo(later);
            assertThat(s.read("soon")).as("expired while the store was down").isNull();
            assertThat(s.store.expireAt(key("persisted"))).isZero();
            assertThat(s.store.expireAt(key("untouched"))).isZero();
            assertThat(s.store.expireAt(key("overwritten"))).as("a new version drops the old expiry").isZero();
            assertThat(s.read("overwritten")).isEqualTo(Values.of("overwritten", 2, 1000));
            assertThat(s.store.expireAt(key("memory-only"))).isEqualTo(later + 1);
            assertThat(s.read("set")).isEqualTo(Values.of("set", 1, 1000));
        }
    }

    @Test
    void theTimerRemovesDueKeysWithoutReadsFollowingEveryChangeOfTheirDeadline() throws Exception {
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            long now = System.currentTimeMillis();
            for (int i = 0; i < 1000; i++) {
                join(s.putAsync("due:" + i, Values.of("due:" + i, 1, 10), expiringAt(now + 300 + i % 200)));
            }
            join(s.putAsync("extended", Values.of("extended", 1, 10), expiringAt(now + 300)));
            join(s.putAsync("persisted", Values.of("persisted", 1, 10), expiringAt(now + 300)));
            join(s.putAsync("overwritten", Values.of("overwritten", 1, 10), expiringAt(now + 300)));
            join(s.putAsync("shortened", Values.of("shortened", 1, 10), expiringAt(now + HOUR)));
            assertThat(setExpiry(s, "extended", now + HOUR, ExpireCondition.ALWAYS)).isTrue();
            assertThat(setExpiry(s, "persisted", 0, ExpireCondition.ALWAYS)).isTrue();
            s.put("overwritten", Values.of("overwritten", 2, 10));
            assertThat(setExpiry(s, "shortened", now + 400, ExpireCondition.ALWAYS)).isTrue();
            assertThat(s.store.expiry.size()).as("scheduled: 1000 due, extended, shortened").isEqualTo(1002);

            long deadline = System.currentTimeMillis() + 10_000;
            while (s.stats().expiredKeys() < 1001 && System.currentTimeMillis() < deadline) {
                Thread.sleep(50);
            }
            assertThat(s.stats().expiredKeys()).as("removed by the timer alone").isEqualTo(1001);
            assertThat(s.store.size()).isEqualTo(3);
            assertThat(s.stats().memoryValueBytes()).isEqualTo(30);
            assertThat(s.store.expiry.size()).as("only the extended key stays scheduled").isEqualTo(1);
            assertThat(s.read("overwritten")).isEqualTo(Values.of("overwritten", 2, 10));
        }
    }

    @Test
    void recoveredExpiriesAreScheduledAgain() throws Exception {
        long soon = System.currentTimeMillis() + 1_500;
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            join(s.putAsync("soon", Values.of("soon", 1, 1000), expiringAt(soon)));
            join(s.putAsync("later", Values.of("later", 1, 1000), expiringAt(soon + HOUR)));
            s.put("never", Values.of("never", 1, 1000));
        }
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            assertThat(s.store.expiry.size()).isEqualTo(2);
            long deadline = System.currentTimeMillis() + 10_000;
            while (s.store.size() > 2 && System.currentTimeMillis() < deadline) {
                Thread.sleep(50);
            }
            assertThat(s.store.size()).as("the recovered key left at its deadline without a read").isEqualTo(2);
            assertThat(s.stats().expiredKeys()).isEqualTo(1);
        }
    }

    private static PutOptions expiringAt(long expireAt) {
        return new PutOptions(expireAt, PutOptions.Condition.ALWAYS, false, false);
    }

    private static boolean setExpiry(TestStore s, String k, long expireAt, ExpireCondition condition) {
        return join(s.store.setExpiry(key(k), expireAt, condition));
    }
}
