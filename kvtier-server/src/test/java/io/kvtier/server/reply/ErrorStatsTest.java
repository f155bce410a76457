package io.kvtier.server.reply;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Error replies by code: the first word, at most 128 codes tracked (Redis's bound), every error in the total. */
class ErrorStatsTest {
    @Test
    void countsByFirstWordWithinABoundedNumberOfCodes() {
        ErrorStats stats = new ErrorStats();
        stats.record("MOVED 3999 127.0.0.1:6381");
        stats.record("MOVED 12 127.0.0.1:6380");
        stats.record("NOSPACE"); // a code alone
        for (int i = 0; i < 200; i++) {
            stats.record("CODE" + i + " made up");
        }
        assertThat(stats.total()).isEqualTo(203);
        assertThat(stats.byCode()).hasSize(ErrorStats.MAX_CODES).containsEntry("MOVED", 2L)
                .containsEntry("NOSPACE", 1L).doesNotContainKey("CODE199");
        stats.record("MOVED 1 127.0.0.1:6380"); // a known code still counts once the table is full
        assertThat(stats.byCode()).containsEntry("MOVED", 3L);
        stats.reset();
        assertThat(stats.total()).isZero();
        assertThat(stats.byCode()).isEmpty();
    }
}
