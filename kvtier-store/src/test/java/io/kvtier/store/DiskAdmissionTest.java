package io.kvtier.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The disk write limit's admission rule, on crafted sequences of values leaving memory. */
class DiskAdmissionTest {
    private static final long MiB = 1L << 20;
    private static final long SECOND = 1_000_000_000L;

    @Test
    void withoutALimitEveryValueIsWritten() {
        DiskAdmission a = new DiskAdmission(0);
        for (long k = 0; k < 10_000; k++) {
            assertThat(a.admits(k, 64 * MiB, false, 0)).isTrue();
        }
        assertThat(a.limited()).isFalse();
    }

    @Test
    void unreadChunksAreWrittenWhileTheBucketHoldsThem() {
        DiskAdmission a = new DiskAdmission(MiB); // ten seconds of 1 MiB/s is under the 64 MiB floor: 64 MiB
        int admitted = 0;
        for (long k = 0; k < 100; k++) {
            if (a.admits(k, MiB, false, 0)) {
                admitted++;
            }
        }
        assertThat(admitted).isEqualTo(64);
        assertThat(a.admits(1000, MiB, false, 0)).as("empty").isFalse();
        assertThat(a.admits(1001, MiB, false, 3 * SECOND)).as("three seconds later: 3 MiB").isTrue();
        assertThat(a.admits(1002, MiB, false, 3 * SECOND)).isTrue();
        assertThat(a.admits(1003, MiB, false, 3 * SECOND)).isTrue();
        assertThat(a.admits(1004, MiB, false, 3 * SECOND)).isFalse();
    }

    @Test
    void theBucketHoldsTenSecondsOfTheRate() {
        DiskAdmission a = new DiskAdmission(100 * MiB);
        int admitted = 0;
        for (long k = 0; k < 2000; k++) {
            if (a.admits(k, MiB, false, 3600 * SECOND)) { // an hour idle fills it only to ten seconds' worth
                admitted++;
            }
        }
        assertThat(admitted).isEqualTo(1000);
    }

    @Test
    void readValuesAndSmallValuesAreAlwaysWrittenAndChargedToTheBucket() {
        DiskAdmission a = new DiskAdmission(MiB);
        for (long k = 0; k < 64; k++) {
            assertThat(a.admits(k, MiB, false, 0)).isTrue();
        }
        assertThat(a.admits(100, MiB, true, 0)).as("read since written").isTrue();
        assertThat(a.admits(101, 4096, false, 0)).as("smaller than a KV-cache chunk").isTrue();
        assertThat(a.admits(102, MiB, false, 2 * SECOND)).as("2 MiB refilled pay the 1 MiB + 4 KiB of debt first")
                .isFalse();
        assertThat(a.admits(103, MiB, false, 3 * SECOND)).isTrue();
    }

    @Test
    void theDebtIsBoundedByOneBucket() {
        DiskAdmission a = new DiskAdmission(MiB);
        for (long k = 0; k < 10_000; k++) {
            a.admits(k, MiB, true, 0); // 10,000 MiB of read values: far over, but the debt stops at 64 MiB
        }
        assertThat(a.admits(20_000, MiB, false, 64 * SECOND)).as("64 s of 1 MiB/s paid the debt off").isFalse();
        assertThat(a.admits(20_001, MiB, false, 65 * SECOND)).isTrue();
    }

    @Test
    void aDroppedChunkIsWrittenTheNextTimeItLeavesMemoryOnce() {
        DiskAdmission a = new DiskAdmission(MiB);
        for (long k = 0; k < 64; k++) {
            a.admits(k, MiB, false, 0);
        }
        assertThat(a.admits(7_777, MiB, false, 0)).as("dropped: bucket empty").isFalse();
        assertThat(a.admits(8_888, MiB, false, 0)).isFalse();
        assertThat(a.admits(7_777, MiB, false, 0)).as("stored again, leaving again: its second chance").isTrue();
        assertThat(a.admits(7_777, MiB, false, 0)).as("the second chance is given once").isFalse();
        assertThat(a.admits(8_888, MiB, false, 0)).isTrue();
    }

    @Test
    void aNegativeLimitIsRefused() {
        assertThatThrownBy(() -> new DiskAdmission(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be 0 (none) or positive");
    }
}
