package io.kvtier.store;

import static io.kvtier.store.TestStore.KiB;
import static io.kvtier.store.TestStore.MiB;
import static io.kvtier.store.TestStore.key;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Pinned keys stay in memory under pressure, within their budget; pins end on unpin, deadline and delete. */
class TieredStorePinTest {
    @TempDir
    Path dir;

    @Test
    void pinnedKeyStaysInMemoryWhileFillersPushEverythingElseToDisk() throws IOException {
        try (TestStore s = TestStore.open(dir, 8 * MiB, 64 * MiB)) {
            byte[] prompt = Values.of("prompt", 1, (int) (512 * KiB));
            s.put("prompt", prompt);
            s.put("other", Values.of("other", 1, (int) (512 * KiB)));
            assertThat(s.store.pin(key("prompt"), 0)).isEqualTo(PinOutcome.IN_MEMORY);

            s.pushToDisk("other");
            for (int i = 0; i < 300; i++) {
                s.put("filler-" + i, Values.of("filler", i, (int) (128 * KiB)));
            }

            assertThat(s.state("prompt")).isEqualTo(EntryState.MEMORY);
            assertThat(s.store.residence(key("prompt"))).isEqualTo(Residence.MEMORY);
            assertThat(s.store.residence(key("other"))).isEqualTo(Residence.DISK);
            assertThat(s.read("prompt")).isEqualTo(prompt);
            assertThat(s.stats().pinnedKeys()).isEqualTo(1);
            assertThat(s.stats().pinnedBytes()).isEqualTo(512 * KiB);
        }
    }

    @Test
    void unpinnedKeyIsDemotedAgain() throws IOException {
        try (TestStore s = TestStore.open(dir, 8 * MiB, 64 * MiB)) {
            s.put("prompt", Values.of("prompt", 1, (int) (256 * KiB)));
            s.store.pin(key("prompt"), 0);
            assertThat(s.store.unpin(key("prompt"))).isTrue();
            assertThat(s.store.unpin(key("prompt"))).isFalse();

            s.pushToDisk("prompt");
            assertThat(s.stats().pinnedBytes()).isZero();
        }
    }

    @Test
    void pinOfADiskResidentKeyPromotesItOnTheFirstRead() throws IOException {
        try (TestStore s = TestStore.open(dir, 8 * MiB, 64 * MiB)) {
            byte[] value = Values.of("cold", 1, (int) (256 * KiB));
            s.put("cold", value);
            s.pushToDisk("cold");

            assertThat(s.store.pin(key("cold"), 0)).isEqualTo(PinOutcome.ON_DISK);
            assertThat(s.read("cold")).isEqualTo(value);

            TestStore.await("cold is back in memory", () -> s.store.residence(key("cold")) == Residence.MEMORY);
            for (int i = 0; i < 300; i++) {
                s.put("filler-" + i, Values.of("filler", i, (int) (128 * KiB)));
            }
            assertThat(s.store.residence(key("cold"))).isEqualTo(Residence.MEMORY);
        }
    }

    @Test
    void pinsBeyondTheBudgetAreRefusedAndNothingChanges() throws IOException {
        try (TestStore s = TestStore.open(dir, 8 * MiB, 64 * MiB)) { // pin budget: 2 MiB
            s.put("a", Values.of("a", 1, (int) (1536 * KiB)));
            s.put("b", Values.of("b", 1, (int) (1 * MiB)));
            s.store.pin(key("a"), 0);

            assertThatThrownBy(() -> s.store.pin(key("b"), 0)).isInstanceOf(PinBudgetException.class)
                    .hasMessageContaining("1572864 of 2097152 bytes pinned");
            assertThat(s.store.isPinned(key("b"))).isFalse();
            assertThat(s.store.pin(key("a"), 0)).as("renewing a pin costs nothing").isEqualTo(PinOutcome.IN_MEMORY);
            assertThat(s.store.pin(key("missing"), 0)).isEqualTo(PinOutcome.NO_KEY);
        }
    }

    @Test
    void pinSurvivesAnOverwriteButNotADeleteOrItsDeadline() throws IOException {
        try (TestStore s = TestStore.open(dir, 8 * MiB, 64 * MiB)) {
            s.put("k", Values.of("k", 1, (int) (100 * KiB)));
            s.store.pin(key("k"), 0);
            s.put("k", Values.of("k", 2, (int) (200 * KiB)));
            assertThat(s.store.isPinned(key("k"))).isTrue();
            assertThat(s.stats().pinnedBytes()).isEqualTo(200 * KiB);

            s.remove("k");
            assertThat(s.store.isPinned(key("k"))).isFalse();
            assertThat(s.stats().pinnedBytes()).isZero();

            s.put("t", Values.of("t", 1, (int) (10 * KiB)));
            s.store.pin(key("t"), System.currentTimeMillis() + 200);
            TestStore.await("the pin's deadline ends it", () -> !s.store.isPinned(key("t")));
            assertThat(s.read("t")).as("the key itself stays").isNotNull();
        }
    }

    @Test
    void listenerHearsWritesOverwritesDeletesAndRecovery() throws IOException {
        RecordingListener heard = new RecordingListener();
        StoreOptions options = new StoreOptions(dir, 8 * MiB, 64 * MiB, 64 * MiB, 10_000, 2 * MiB);
        try (TestStore s = new TestStore(TieredStore.open(options, heard))) {
            s.put("a", new byte[10]);
            s.put("a", new byte[20]);
            s.put("b", new byte[30]);
            s.remove("b");
        }
        assertThat(heard.events).containsExactly("+a 10", "+a 20", "-a 10 REPLACED", "+b 30", "-b 30 DELETED");

        RecordingListener recovered = new RecordingListener();
        try (TestStore s = new TestStore(TieredStore.open(options, recovered))) {
            assertThat(recovered.events).containsExactly("+a 20");
        }
    }

    @Test
    void pinnedValuesOnlyInMemoryAreWrittenOnShutdown() throws IOException {
        byte[] value = Values.of("prompt", 1, (int) (300 * KiB));
        try (TestStore s = TestStore.open(dir, 8 * MiB, 64 * MiB)) {
            s.put("prompt", value);
            s.store.pin(key("prompt"), 0);
        }
        try (TestStore s = TestStore.open(dir, 8 * MiB, 64 * MiB)) {
            assertThat(s.read("prompt")).isEqualTo(value);
            assertThat(s.store.isPinned(key("prompt"))).as("pins are not kept across restarts").isFalse();
        }
    }

    @Test
    void removeIfOlderSparesVersionsWrittenAfterItsSequenceNumber() throws IOException {
        try (TestStore s = TestStore.open(dir, 8 * MiB, 64 * MiB)) {
            s.put("k", new byte[] {1});
            long decidedAt = s.store.sequence();
            s.put("k", new byte[] {2});

            assertThat(TestStore.join(s.store.removeIfOlder(key("k"), decidedAt)).existed()).isFalse();
            assertThat(s.read("k")).containsExactly(2);
            assertThat(TestStore.join(s.store.removeIfOlder(key("k"), s.store.sequence() + 1)).existed()).isTrue();
            assertThat(s.read("k")).isNull();
        }
    }

    private static final class RecordingListener implements KeyListener {
        final java.util.List<String> events = java.util.Collections.synchronizedList(new java.util.ArrayList<>());

        @Override
        public void added(byte[] key, long length) {
            events.add("+" + new String(key) + " " + length);
        }

        @Override
        public void removed(byte[] key, long length, Removal why, long seq) {
            events.add("-" + new String(key) + " " + length + " " + why);
        }
    }
}
