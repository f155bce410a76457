package io.kvtier.store.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The flat ghost queue against the reference it replaced: a HashSet and an ArrayDeque of boxed fingerprints. */
class GhostSetTest {
    /**
     * The former implementation, kept here as the model, but for one corner: it made room after adding, so when the
     * oldest place held a stale copy of the fingerprint being added, it forgot that new ghost at once; now room is
     * made first.
     */
    private static final class Model {
        final ArrayDeque<Long> order = new ArrayDeque<>();
        final HashSet<Long> set = new HashSet<>();
        final int max;

        Model(int max) {
            this.max = max;
        }

        boolean add(long fp) {
            if (set.contains(fp)) {
                return false;
            }
            if (order.size() == max) {
                set.remove(order.pollFirst());
            }
            set.add(fp);
            order.addLast(fp);
            return true;
        }

        boolean remove(long fp) {
            return set.remove(fp);
        }
    }

    @Test
    void agreesWithTheBoxedModelOverRandomAddsAdmissionsAndEvictions() {
        for (int max : new int[] {1, 7, 64, 1000}) {
            Random random = new Random(max);
            GhostSet ghosts = new GhostSet(max);
            Model model = new Model(max);
            int universe = max * 3 + 5; // few distinct keys: lots of repeats, removals of absent ones, stale places
            for (int op = 0; op < 200_000; op++) {
                long fp = 1 + random.nextInt(universe) * 0x9E3779B97F4A7C15L; // spread like real fingerprints
                if (random.nextInt(3) == 0) {
                    assertThat(ghosts.remove(fp)).as("remove, op %d, max %d", op, max).isEqualTo(model.remove(fp));
                } else {
                    assertThat(ghosts.add(fp)).as("add, op %d, max %d", op, max).isEqualTo(model.add(fp));
                }
                assertThat(ghosts.size()).isEqualTo(model.set.size()).isLessThanOrEqualTo(max);
            }
            for (int k = 0; k < universe; k++) {
                long fp = 1 + k * 0x9E3779B97F4A7C15L;
                assertThat(ghosts.contains(fp)).isEqualTo(model.set.contains(fp));
            }
        }
    }

    @Test
    void holdsAMillionGhostsWithoutAnObjectEachAndForgetsTheOldestFirst() {
        int max = 1 << 20;
        GhostSet ghosts = new GhostSet(max);
        for (long i = 0; i < max + 10; i++) {
            ghosts.add(i * 0x9E3779B97F4A7C15L + 3);
        }
        assertThat(ghosts.size()).isEqualTo(max);
        for (long i = 0; i < 10; i++) {
            assertThat(ghosts.contains(i * 0x9E3779B97F4A7C15L + 3)).as("oldest %d", i).isFalse();
        }
        assertThat(ghosts.contains(10 * 0x9E3779B97F4A7C15L + 3)).isTrue();
        assertThat(ghosts.toString()).contains("ring " + max + "/" + max).contains("slots " + (2 * max));
        assertThat(ghosts.add(0)).isTrue(); // fingerprint 0 is a ghost like any other
        assertThat(ghosts.contains(0)).isTrue();
        assertThat(ghosts.remove(0)).isTrue();
    }
}
