package io.kvtier.bench.compare;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CompareOptionsTest {
    @TempDir
    Path dir;
    Path launcher;

    @BeforeEach
    void makeLauncher() throws Exception {
        launcher = Files.writeString(dir.resolve("kvtier"), "#!/bin/sh\n");
        Files.setPosixFilePermissions(launcher, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private CompareOptions options(long memory, int rounds, List<String> workloads, List<Integer> connections,
            double factor, boolean sweep, Path launcher) {
        return new CompareOptions(memory, 8L << 30, rounds, Duration.ofSeconds(5), Duration.ofSeconds(10), workloads,
                List.of(1 << 20), List.of(100), 1000, connections, factor, sweep, false, dir, launcher, 1);
    }

    private CompareOptions valid() {
        return options(1L << 30, 2, List.of("setget", "overflow"), List.of(4, 16), 4, true, launcher);
    }

    @Test
    void sweepsOverflowFactorsUpToTheConfiguredOne() {
        assertThat(valid().overflowFactors()).containsExactly(0.5, 1.0, 2.0, 4.0);
        assertThat(options(1L << 30, 2, List.of("overflow"), List.of(4), 1.5, true, launcher).overflowFactors())
                .containsExactly(0.5, 1.0, 1.5);
        assertThat(options(1L << 30, 2, List.of("overflow"), List.of(4), 4, false, launcher).overflowFactors())
                .containsExactly(4.0);
    }

    @Test
    void keepsTheSetGetWorkingSetWithinHalfTheMemoryCap() {
        assertThat(valid().setGetKeys(1 << 20)).isEqualTo(512);
        assertThat(valid().setGetKeys(1 << 30)).isEqualTo(1);
    }

    @Test
    void rejectsBadValuesNamingTheFlag() {
        assertThatThrownBy(() -> new CompareOptions(1L << 30, 8L << 30, 1, Duration.ofSeconds(5),
                Duration.ofSeconds(-1), List.of("setget"), List.of(1 << 20), List.of(100), 1000, List.of(4), 4, true, false, dir,
                launcher, 1)).hasMessageStartingWith("--server-warmup -1000ms is outside 0 or 2ms..24h");
        assertThatThrownBy(() -> new CompareOptions(1L << 30, 8L << 30, 1, Duration.ofSeconds(5),
                Duration.ofMillis(1), List.of("setget"), List.of(1 << 20), List.of(100), 1000, List.of(4), 4, true, false, dir,
                launcher, 1)).hasMessageStartingWith("--server-warmup 1ms is outside");
        assertThatThrownBy(() -> options(1L << 30, 0, List.of("setget"), List.of(4), 4, true, launcher))
                .hasMessage("--rounds 0 is below the minimum 1");
        assertThatThrownBy(() -> options(1L << 30, 1, List.of("setget", "ycsb"), List.of(4), 4, true, launcher))
                .hasMessageContaining("--workloads ycsb is not one of");
        assertThatThrownBy(() -> options(1L << 30, 1, List.of("setget"), List.of(), 4, true, launcher))
                .hasMessageContaining("--connections");
        assertThatThrownBy(() -> options(1024, 1, List.of("setget"), List.of(4), 4, true, launcher))
                .hasMessageContaining("--memory");
        assertThatThrownBy(() -> options(4L << 30, 1, List.of("overflow"), List.of(4), 4, true, launcher))
                .hasMessageContaining("does not fit kvtier's --disk");
        assertThatThrownBy(() -> options(1L << 30, 1, List.of("setget"), List.of(4), 4, true, dir.resolve("nope")))
                .hasMessageContaining("--kvtier-launcher");
    }
}
