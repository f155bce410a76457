package io.kvtier.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.bench.compare.CompareOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class CompareCommandTest {
    @TempDir
    Path dir;

    @Test
    void defaultsMatchTheDocumentedComparison() throws Exception {
        Path launcher = Files.writeString(dir.resolve("kvtier"), "#!/bin/sh\n");
        Files.setPosixFilePermissions(launcher, PosixFilePermissions.fromString("rwxr-xr-x"));
        CompareCommand command = new CompareCommand();
        new CommandLine(command).parseArgs("--kvtier-launcher", launcher.toString());

        CompareOptions o = command.options();

        assertThat(o.memory()).isEqualTo(1L << 30);
        assertThat(o.disk()).isEqualTo(8L << 30);
        assertThat(o.rounds()).isEqualTo(2);
        assertThat(o.duration()).isEqualTo(Duration.ofSeconds(5));
        assertThat(o.workloads()).containsExactly("setget", "overflow");
        assertThat(o.valueSizes()).containsExactly(256 << 10, 1 << 20, 4 << 20, 32 << 20);
        assertThat(o.connections()).containsExactly(4, 16);
        assertThat(o.overflowFactors()).containsExactly(0.5, 1.0, 2.0, 4.0);
        assertThat(o.outputDir()).isEqualTo(Path.of("bench-results/compare"));
    }

    @Test
    void isRegisteredUnderBench() {
        assertThat(new CommandLine(new BenchCommand()).getSubcommands()).containsKey("compare");
    }
}
