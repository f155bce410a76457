package io.kvtier.store.policy;

/**
 * S3-FIFO's ghost queue: the fingerprints of the last {@code max} keys evicted from probation, in FIFO order, with a
 * membership test. Flat: a ring of the fingerprints in arrival order and an open-addressing set of them (linear
 * probing, deletion by backward shift), both arrays of longs grown by doubling, so a ghost costs 19-37 bytes and no
 * object (a {@code HashSet<Long>} and an {@code ArrayDeque<Long>} took about 80 bytes and three objects a ghost: at
 * the default million ghosts, 80 MB of heap outside the index's budget, issue 34). Not thread-safe.
 *
 * <p>As before, a fingerprint forgotten by {@link #remove} stays in the ring; if it is added again before its old
 * place reaches the head, that old place forgets it then, a little early. Fingerprint 0 is kept as 1 (the set's
 * empty slot is 0): two keys share a ghost about once in 2^63 pairs.
 */
final class GhostSet {
    private static final int MIN_CAPACITY = 16;

    private final int max;
    private long[] ring = new long[MIN_CAPACITY];
    private int head;   // index of the oldest fingerprint in the ring
    private int count;  // fingerprints in the ring
    private long[] slots = new long[MIN_CAPACITY];
    private int members;

    GhostSet(int max) {
        if (max < 1) {
            throw new IllegalArgumentException("ghost capacity " + max);
        }
        this.max = max;
    }

    private static long norm(long fingerprint) {
        return fingerprint == 0 ? 1 : fingerprint;
    }

    private static int home(long fp, int mask) {
        long h = fp * 0x9E3779B97F4A7C15L;
        return (int) (h >>> 32) & mask;
    }

    /** Whether {@code fingerprint} is a ghost now. */
    boolean contains(long fingerprint) {
        return find(norm(fingerprint)) >= 0;
    }

    /** Remembers {@code fingerprint} (forgetting the oldest beyond the capacity); false if it was a ghost already. */
    boolean add(long fingerprint) {
        long fp = norm(fingerprint);
        if (find(fp) >= 0) {
            return false;
        }
        if (count == max) { // the oldest place goes first, so the ring never holds more than max
            long oldest = ring[head];
            head = (head + 1) & (ring.length - 1);
            count--;
            remove(oldest);
        }
        insert(fp);
        push(fp);
        return true;
    }

    /** Forgets {@code fingerprint}; returns whether it was a ghost. */
    boolean remove(long fingerprint) {
        long fp = norm(fingerprint);
        int i = find(fp);
        if (i < 0) {
            return false;
        }
        int mask = slots.length - 1;
        // Backward shift: move later members of the probe run into the hole when their home allows it.
        int hole = i;
        for (int j = (hole + 1) & mask; slots[j] != 0; j = (j + 1) & mask) {
            int h = home(slots[j], mask);
            if (((j - h) & mask) >= ((j - hole) & mask)) {
                slots[hole] = slots[j];
                hole = j;
            }
        }
        slots[hole] = 0;
        members--;
        return true;
    }

    /** Ghosts now. */
    int size() {
        return members;
    }

    private int find(long fp) {
        int mask = slots.length - 1;
        for (int i = home(fp, mask); ; i = (i + 1) & mask) {
            long s = slots[i];
            if (s == fp) {
                return i;
            }
            if (s == 0) {
                return -1;
            }
        }
    }

    private void insert(long fp) {
        if ((members + 1) * 4L > slots.length * 3L) {
            long[] old = slots;
            slots = new long[old.length * 2];
            for (long s : old) {
                if (s != 0) {
                    place(s);
                }
            }
        }
        place(fp);
        members++;
    }

    private void place(long fp) {
        int mask = slots.length - 1;
        int i = home(fp, mask);
        while (slots[i] != 0) {
            i = (i + 1) & mask;
        }
        slots[i] = fp;
    }

    private void push(long fp) {
        if (count == ring.length) {
            long[] grown = new long[ring.length * 2];
            for (int k = 0; k < count; k++) {
                grown[k] = ring[(head + k) & (ring.length - 1)];
            }
            ring = grown;
            head = 0;
        }
        ring[(head + count) & (ring.length - 1)] = fp;
        count++;
    }

    @Override
    public String toString() {
        return "GhostSet[" + members + " of " + max + ", ring " + count + "/" + ring.length + ", slots "
                + slots.length + "]";
    }
}
