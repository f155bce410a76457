package io.kvtier.server.command;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.store.KeyListener.Removal;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class WatchesTest {
    private static byte[] key(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void everyKindOfChangeBreaksAWatchOnThatKeyOnly() {
        Watches watches = new Watches();
        for (Runnable change : new Runnable[] {
                () -> watches.added(key("k"), 1),
                () -> watches.removed(key("k"), 1, Removal.DELETED, 1),
                () -> watches.removed(key("k"), 1, Removal.EXPIRED, 1),
                () -> watches.removed(key("k"), 1, Removal.LOST, 1),
                () -> watches.changed(key("k"))}) {
            Watches.Watch w = watches.watch(null, new byte[][] {key("k"), key("other")}, n -> true);
            watches.added(key("unrelated"), 1);
            assertThat(w.broken()).isFalse();
            change.run();
            assertThat(w.broken()).isTrue();
            watches.unwatch(w);
        }
    }

    @Test
    void aForgottenWatchIsNoLongerTold() {
        Watches watches = new Watches();
        Watches.Watch first = watches.watch(null, new byte[][] {key("k")}, n -> true);
        Watches.Watch second = watches.watch(null, new byte[][] {key("k")}, n -> true);
        watches.unwatch(first);
        watches.added(key("k"), 1);
        assertThat(first.broken()).isFalse();
        assertThat(second.broken()).isTrue();
        watches.unwatch(second);
        watches.unwatch(null); // nothing watched: allowed
    }

    @Test
    void oneConnectionWatchesAtMostItsLimit() {
        Watches watches = new Watches();
        byte[][] many = new byte[Watches.MAX_KEYS_PER_CONNECTION][];
        for (int i = 0; i < many.length; i++) {
            many[i] = key("k" + i);
        }
        Watches.Watch w = watches.watch(null, many, n -> true);
        assertThat(w.size()).isEqualTo(Watches.MAX_KEYS_PER_CONNECTION);
        assertThat(watches.watch(w, new byte[][] {key("k0")}, n -> true).size()).as("a key watched again is not counted twice")
                .isEqualTo(Watches.MAX_KEYS_PER_CONNECTION);
        assertThatThrownBy(() -> watches.watch(w, new byte[][] {key("one-more")}, n -> true))
                .hasMessageContaining("at most " + Watches.MAX_KEYS_PER_CONNECTION + " keys");
        watches.unwatch(w);
    }

    @Test
    void watchedKeysAreChargedToTheClientBudgetBeforeTheyAreAdded() {
        Watches watches = new Watches();
        long[] charged = {0};
        Watches.Watch w = watches.watch(null, new byte[][] {key("k1"), key("k2")}, n -> {
            charged[0] += n;
            return true;
        });
        assertThat(charged[0]).isEqualTo(2L * Watches.HEAP_PER_KEY);
        assertThat(w.charged()).isEqualTo(charged[0]);
        assertThatThrownBy(() -> watches.watch(w, new byte[][] {key("k3")}, n -> false))
                .hasMessage(Watches.CLIENT_MEMORY);
        assertThat(w.size()).as("nothing added when the budget refuses").isEqualTo(2);
        assertThat(w.charged()).isEqualTo(charged[0]);
        watches.unwatch(w);
    }

    /**
     * Many connections watching overlapping keys, forgetting and watching again, against a plain model: a change
     * breaks exactly the watches holding that key, however the key table's probe runs were shifted by removals and
     * its shards grown and shrunk.
     */
    @Test
    void randomWatchesAndChangesBreakExactlyTheWatchesOfTheChangedKey() {
        Watches watches = new Watches();
        java.util.Random random = new java.util.Random(29);
        int connections = 40;
        Watches.Watch[] live = new Watches.Watch[connections];
        java.util.List<java.util.Set<String>> model = new java.util.ArrayList<>();
        for (int c = 0; c < connections; c++) {
            model.add(new java.util.HashSet<>());
        }
        for (int step = 0; step < 20_000; step++) {
            int c = random.nextInt(connections);
            int op = random.nextInt(10);
            if (op < 5) {
                int n = 1 + random.nextInt(op == 0 ? 3_000 : 20);
                byte[][] keys = new byte[n][];
                for (int k = 0; k < n; k++) {
                    String name = "k" + random.nextInt(5_000);
                    keys[k] = key(name);
                    model.get(c).add(name);
                }
                live[c] = watches.watch(live[c], keys, x -> true);
                assertThat(live[c].size()).isEqualTo(model.get(c).size());
            } else if (op < 7) {
                watches.unwatch(live[c]);
                live[c] = null;
                model.get(c).clear();
            } else {
                String name = "k" + random.nextInt(5_000);
                boolean[] before = new boolean[connections];
                for (int x = 0; x < connections; x++) {
                    before[x] = live[x] != null && live[x].broken();
                }
                watches.changed(key(name));
                for (int x = 0; x < connections; x++) {
                    boolean expected = before[x] || model.get(x).contains(name);
                    assertThat(live[x] != null && live[x].broken()).as("step %d, connection %d, key %s", step, x, name)
                            .isEqualTo(expected && live[x] != null);
                }
            }
        }
    }

    @Test
    void aKeyWhoseTtlPassesAfterWatchBreaksTheWatchEvenBeforeTheStoreRemovesIt() {
        Watches watches = new Watches();
        long now = System.currentTimeMillis();
        Watches.Watch later = watches.watch(null, new byte[][] {key("a")}, now + 60_000, n -> true);
        assertThat(later.broken()).isFalse();
        watches.unwatch(later);
        Watches.Watch passed = watches.watch(null, new byte[][] {key("a")}, n -> true);
        assertThat(passed.broken()).isFalse();
        watches.watch(passed, new byte[][] {key("b")}, now - 1, n -> true);
        assertThat(passed.broken()).as("b's deadline passed").isTrue();
        watches.unwatch(passed);
    }
}
