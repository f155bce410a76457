package io.kvtier.store.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class MemoryTierTest {
    private static final int PAGE = MemoryTier.PAGE_SIZE;

    private MemoryTier tier;

    @AfterEach
    void closeTier() {
        if (tier != null) {
            tier.close();
        }
    }

    @Test
    void largeValueSpansScatteredPagesAndReadsBackExactlyAcrossPageBoundaries() {
        tier = new MemoryTier(32L * PAGE);
        // Free every other single-page value so the free list holds non-adjacent pages.
        List<MemoryValue> fillers = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            fillers.add(tier.allocate(PAGE));
        }
        for (int i = 0; i < fillers.size(); i += 2) {
            fillers.get(i).release();
        }
        long length = 5L * PAGE + 12345;
        MemoryValue value = tier.allocate(length);

        assertThat(value.pages()).hasSize(6);
        assertThat(isContiguous(value.pages())).as("pages %s", Arrays.toString(value.pages())).isFalse();
        byte[] bytes = randomBytes(7, (int) length);
        writeInFragments(value, bytes, new Random(8));
        assertThat(value.written()).isEqualTo(length);
        assertThat(value.toArray()).isEqualTo(bytes);
        assertThat(concat(value.buffers())).isEqualTo(bytes);
        assertThat(value.footprint()).isEqualTo(6L * PAGE);
    }

    @Test
    void theChargeOfAValueIsWhatItsAllocationsHold() {
        assertThat(MemoryTier.chargeOf(0)).isZero();
        assertThat(MemoryTier.chargeOf(1)).isEqualTo(16);
        assertThat(MemoryTier.chargeOf(16 * 1024)).isEqualTo(16 * 1024);
        assertThat(MemoryTier.chargeOf(MemoryTier.MAX_SMALL + 1)).isEqualTo(PAGE);
        assertThat(MemoryTier.chargeOf(3L * PAGE + 1)).isEqualTo(4L * PAGE);
        tier = new MemoryTier(64L * PAGE);
        for (int length : new int[] {1, 100, 1000, 10_000, 16 * 1024, 20_000, MemoryTier.MAX_SMALL}) {
            long before = tier.usedBytes();
            List<MemoryValue> values = new ArrayList<>();
            long charged = 0;
            while (charged + MemoryTier.chargeOf(length) <= 4L * PAGE) {
                values.add(tier.allocate(length));
                charged += MemoryTier.chargeOf(length);
            }
            // What the values hold in pages is their charges, plus at most one partly used page of their class.
            assertThat(tier.usedBytes() - before).as("length %d", length).isBetween(charged, charged + PAGE);
            values.forEach(MemoryValue::release);
        }
    }

    @Test
    void smallValuesShareAPageOfTheirSizeClass() {
        tier = new MemoryTier(16L * PAGE);
        List<MemoryValue> values = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            MemoryValue v = tier.allocate(100);
            v.write(filled(100, i));
            values.add(v);
        }
        assertThat(tier.usedBytes()).isEqualTo(PAGE);
        assertThat(tier.valueBytes()).isEqualTo(100 * 100);
        for (int i = 0; i < values.size(); i++) {
            assertThat(values.get(i).toArray()).isEqualTo(filled(100, i));
            assertThat(values.get(i).footprint()).isEqualTo(112);
        }
        MemoryValue other = tier.allocate(1000);
        assertThat(tier.usedBytes()).as("another size class takes its own page").isEqualTo(2L * PAGE);
        other.release();
        values.forEach(MemoryValue::release);
        assertThat(tier.usedBytes()).isZero();
    }

    @Test
    void sizeClassesRoundUpByAtMostAQuarter() {
        tier = new MemoryTier(16L * PAGE);
        for (int length = 1; length <= MemoryTier.MAX_SMALL; length++) {
            MemoryValue v = tier.allocate(length);
            assertThat(v.footprint()).as("footprint of %d", length)
                    .isGreaterThanOrEqualTo(length)
                    .isLessThanOrEqualTo(Math.max(length + 15, length * 5L / 4));
            v.release();
        }
        assertThat(tier.usedBytes()).isZero();
    }

    @Test
    void budgetIsHardAndRoomReturnsAfterRelease() {
        tier = new MemoryTier(16L * PAGE);
        List<MemoryValue> values = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            values.add(tier.allocate(PAGE));
        }
        assertThat(tier.usedBytes()).isEqualTo(tier.budget());
        assertThat(tier.allocate(1)).as("small value when no page is free").isNull();
        assertThat(tier.allocate(PAGE + 1)).isNull();
        assertThat(tier.allocate(17L * PAGE)).as("larger than the budget").isNull();

        values.removeFirst().release();
        MemoryValue small = tier.allocate(1);
        assertThat(small).isNotNull();
        assertThat(tier.allocate(PAGE)).as("the freed page now holds a small-value page").isNull();
        small.release();
        MemoryValue large = tier.allocate(PAGE);
        assertThat(large).isNotNull();
        large.release();
        values.forEach(MemoryValue::release);
        assertThat(tier.usedBytes()).isZero();
        assertThat(tier.valueBytes()).isZero();
    }

    @Test
    void bytesStayUntilTheLastReferenceIsReleased() {
        tier = new MemoryTier(16L * PAGE);
        MemoryValue value = tier.allocate(16L * PAGE);
        byte[] bytes = randomBytes(1, 16 * PAGE);
        value.write(bytes);
        assertThat(value.tryRetain()).isTrue();

        value.release();
        assertThat(value.refCount()).isOne();
        assertThat(tier.allocate(1)).as("pages still owned by the reader").isNull();
        assertThat(value.toArray()).isEqualTo(bytes);

        value.release();
        assertThat(value.refCount()).isZero();
        assertThat(tier.usedBytes()).isZero();
        assertThat(value.tryRetain()).as("retain after the final release").isFalse();
        assertThatThrownBy(value::release).isInstanceOf(IllegalStateException.class);
        MemoryValue reuse = tier.allocate(PAGE);
        assertThat(reuse).isNotNull();
        reuse.release();
    }

    @Test
    void windowsLendTheRestOfEachPageForFillingInPlace() {
        tier = new MemoryTier(32L * PAGE);
        long length = 2L * PAGE + 100;
        MemoryValue value = tier.allocate(length);
        byte[] bytes = randomBytes(9, (int) length);
        value.write(ByteBuffer.wrap(bytes, 0, 1000));

        List<Integer> windows = new ArrayList<>();
        while (value.written() < length) {
            ByteBuffer window = value.window(Integer.MAX_VALUE);
            windows.add(window.remaining());
            window.put(bytes, (int) value.written(), window.remaining());
            value.advance(windows.getLast());
        }

        assertThat(windows).containsExactly(PAGE - 1000, PAGE, 100);
        assertThat(value.toArray()).isEqualTo(bytes);
        assertThat(value.window(1)).isNull();
        value.release();
    }

    @Test
    void windowsAreCappedAndAdvancePastTheEndIsRefused() {
        tier = new MemoryTier(16L * PAGE);
        MemoryValue value = tier.allocate(3L * PAGE);
        assertThat(value.window(10).remaining()).isEqualTo(10);
        value.advance(10);
        assertThatThrownBy(() -> value.advance((int) (3L * PAGE))).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> value.window(0)).isInstanceOf(IllegalArgumentException.class);
        assertThat(value.written()).isEqualTo(10);
        value.release();
    }

    @Test
    void slabsAreMappedOnLinuxAndUnmappedWithTheTier() {
        assertThat(SlabSource.mapsSlabs()).isEqualTo(System.getProperty("os.name").startsWith("Linux"));
        tier = new MemoryTier(2L * 64 * 1024 * 1024 + PAGE); // three slabs, the last one a single page
        List<MemoryValue> values = new ArrayList<>();
        for (long length : new long[] {64L << 20, 64L << 20, PAGE}) {
            MemoryValue v = tier.allocate(length);
            byte[] bytes = randomBytes(length, (int) Math.min(length, 1 << 20));
            v.write(bytes);
            if (v.written() < length) {
                assertThat(v.window(1).get(0)).as("fresh mapped pages read as zeros").isZero();
            }
            assertThat(Arrays.copyOf(v.toArray(), bytes.length)).isEqualTo(bytes);
            values.add(v);
        }
        assertThat(tier.usedBytes()).isEqualTo(tier.budget());
        values.forEach(MemoryValue::release);
    }

    @Test
    void writePastTheEndIsRefused() {
        tier = new MemoryTier(16L * PAGE);
        MemoryValue value = tier.allocate(10);
        value.write(new byte[6]);
        assertThatThrownBy(() -> value.write(new byte[5])).isInstanceOf(IllegalStateException.class);
        assertThat(value.written()).isEqualTo(6);
        value.release();
    }

    @Test
    void emptyValueTakesNoMemory() {
        tier = new MemoryTier(16L * PAGE);
        MemoryValue empty = tier.allocate(0);
        assertThat(empty.toArray()).isEmpty();
        assertThat(empty.buffers()).isEmpty();
        assertThat(tier.usedBytes()).isZero();
        empty.release();
        assertThat(tier.usedBytes()).isZero();
    }

    @Test
    void closedTierRefusesAllocation() {
        tier = new MemoryTier(16L * PAGE);
        tier.close();
        assertThatThrownBy(() -> tier.allocate(1)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void randomAllocFreeCyclesLeakNoPagesAndNeverOverlap() {
        tier = new MemoryTier(64L * PAGE);
        Random random = new Random(20240601);
        List<MemoryValue> live = new ArrayList<>();
        List<Integer> tags = new ArrayList<>();
        int refused = 0;
        for (int step = 0; step < 5_000; step++) {
            if (!live.isEmpty() && (random.nextInt(100) < 45 || tier.usedBytes() == tier.budget())) {
                int i = random.nextInt(live.size());
                MemoryValue v = live.remove(i);
                int tag = tags.remove(i);
                assertThat(v.toArray()).as("value %d intact at step %d", tag, step)
                        .isEqualTo(filled((int) v.length(), tag));
                v.release();
            } else {
                int length = random.nextInt(100) < 70 ? random.nextInt(MemoryTier.MAX_SMALL + 1)
                        : MemoryTier.MAX_SMALL + 1 + random.nextInt(6 * PAGE);
                MemoryValue v = tier.allocate(length);
                if (v == null) {
                    refused++;
                    continue;
                }
                v.write(filled(length, step));
                live.add(v);
                tags.add(step);
            }
            assertThat(tier.usedBytes()).isLessThanOrEqualTo(tier.budget());
        }
        assertThat(refused).as("the budget was reached").isPositive();
        for (int i = 0; i < live.size(); i++) {
            assertThat(live.get(i).toArray()).isEqualTo(filled((int) live.get(i).length(), tags.get(i)));
            live.get(i).release();
        }
        assertThat(tier.usedBytes()).isZero();
        assertThat(tier.valueBytes()).isZero();
        MemoryValue everything = tier.allocate(tier.budget());
        assertThat(everything).as("every page is free again").isNotNull();
        everything.release();
    }

    static byte[] randomBytes(long seed, int length) {
        byte[] bytes = new byte[length];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    /** A pattern that differs per tag and per position (an int offset every 8 bytes), so overlaps show. */
    static byte[] filled(int length, int tag) {
        ByteBuffer b = ByteBuffer.allocate(length);
        for (int off = 0; off + 4 <= length; off += 4) {
            b.putInt(off % 8 == 0 ? off : tag);
        }
        while (b.hasRemaining()) {
            b.put((byte) tag);
        }
        return b.array();
    }

    private static void writeInFragments(MemoryValue value, byte[] bytes, Random random) {
        int pos = 0;
        while (pos < bytes.length) {
            int n = Math.min(bytes.length - pos, 1 + random.nextInt(3 * PAGE / 2));
            value.write(ByteBuffer.wrap(bytes, pos, n));
            pos += n;
        }
    }

    private static byte[] concat(ByteBuffer[] buffers) {
        ByteBuffer all = ByteBuffer.allocate(Arrays.stream(buffers).mapToInt(ByteBuffer::remaining).sum());
        for (ByteBuffer b : buffers) {
            all.put(b.duplicate());
        }
        return all.array();
    }

    private static boolean isContiguous(int[] pages) {
        for (int i = 1; i < pages.length; i++) {
            if (pages[i] != pages[i - 1] + 1) {
                return false;
            }
        }
        return true;
    }
}
