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
        assertThat(charged[0]).isEqualTo(2L * (Watches.HEAP_PER_KEY + 2));
        assertThat(w.charged()).isEqualTo(charged[0]);
        assertThatThrownBy(() -> watches.watch(w, new byte[][] {key("k3")}, n -> false))
                .hasMessage(Watches.CLIENT_MEMORY);
        assertThat(w.size()).as("nothing added when the budget refuses").isEqualTo(2);
        assertThat(w.charged()).isEqualTo(charged[0]);
        watches.unwatch(w);
    }
}
