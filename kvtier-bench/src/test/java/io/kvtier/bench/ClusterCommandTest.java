package io.kvtier.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.bench.cluster.ClusterBenchOptions;
import io.kvtier.bench.run.BenchOptions;
import io.kvtier.client.cluster.ClusterClientOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class ClusterCommandTest {
    @TempDir
    Path dir;

    private Path launcher;

    @BeforeEach
    void fakeLauncher() throws Exception {
        launcher = Files.writeString(dir.resolve("kvtier"), "#!/bin/sh\n");
        Files.setPosixFilePermissions(launcher, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private ClusterBenchOptions parse(String... args) {
        ClusterCommand command = new ClusterCommand();
        String[] all = new String[args.length + 2];
        all[0] = "--kvtier-launcher";
        all[1] = launcher.toString();
        System.arraycopy(args, 0, all, 2, args.length);
        new CommandLine(command).parseArgs(all);
        return command.options();
    }

    @Test
    void defaultsAreThreeNodesOneReplicaAndTheDocumentedTimeline() {
        ClusterBenchOptions o = parse();

        assertThat(o.parts()).containsExactly("scaling", "failover");
        assertThat(o.nodes()).isEqualTo(3);
        assertThat(o.node().replicas()).isEqualTo(1);
        assertThat(o.node().failureTimeout()).isEqualTo(Duration.ofSeconds(2));
        assertThat(o.connections()).isEqualTo(16);
        assertThat(o.valueSize()).isEqualTo(1 << 20);
        assertThat(o.duration()).isEqualTo(Duration.ofSeconds(10));
        assertThat(o.killAt()).isEqualTo(Duration.ofSeconds(10));
        assertThat(o.joinAt()).isEqualTo(Duration.ofSeconds(20));
        assertThat(o.timeline()).isEqualTo(Duration.ofSeconds(35));
        assertThat(o.bucket()).isEqualTo(Duration.ofMillis(100));
        assertThat(o.via()).isEqualTo(ClusterClientOptions.Mode.SLOTS);
        assertThat(o.outputDir()).isEqualTo(Path.of("bench-results/cluster"));
        assertThat(o.scalingKeys()).isEqualTo(512);
    }

    @Test
    void flagsMapOntoTheOptions() {
        ClusterBenchOptions o = parse("--parts", "failover", "--nodes", "4", "--replicas", "0", "--failure-timeout",
                "3s", "-c", "8", "--timeline", "12s", "--kill-at", "3s", "--join-at", "6s", "--bucket", "250ms",
                "--timeline-value-size", "16k", "--timeline-keys", "100", "--write-percent", "20", "--via", "proxy",
                "--timeout", "1500ms", "--verify", "--memory", "256m", "-o", "/tmp/c");

        assertThat(o.parts()).containsExactly("failover");
        assertThat(o.nodes()).isEqualTo(4);
        assertThat(o.node().replicas()).isZero();
        assertThat(o.node().memory()).isEqualTo(256L << 20);
        assertThat(o.connections()).isEqualTo(8);
        assertThat(o.bucket()).isEqualTo(Duration.ofMillis(250));
        assertThat(o.timelineValueSize()).isEqualTo(16 << 10);
        assertThat(o.writePercent()).isEqualTo(20);
        assertThat(o.via()).isEqualTo(ClusterClientOptions.Mode.PROXY);
        assertThat(o.timeout()).isEqualTo(Duration.ofMillis(1500));
        assertThat(o.verify()).isTrue();
        assertThat(o.describe()).containsEntry("via", "proxy").containsEntry("killAt", "3000ms");
    }

    @Test
    void badValuesNameTheFlagAndTheLimit() {
        assertThatThrownBy(() -> parse("--join-at", "5s")).hasMessage("--join-at 5000ms must be after --kill-at"
                + " 10000ms");
        assertThatThrownBy(() -> parse("--timeline", "15s")).hasMessageContaining("--timeline 15000ms must be after"
                + " --join-at 20000ms");
        assertThatThrownBy(() -> parse("--via", "carrier-pigeon")).hasMessageContaining("neither cluster nor proxy");
        assertThatThrownBy(() -> parse("--parts", "scaling,chaos")).hasMessageContaining("must name some of");
        assertThatThrownBy(() -> parse("--nodes", "1")).hasMessage("--nodes 1 is below the minimum 2");
        assertThatThrownBy(() -> parse("--timeline-keys", "5000", "--memory", "64m")).hasMessageContaining(
                "--timeline-keys 5000 x --timeline-value-size 64 KiB is above --memory 64 MiB");
        assertThatThrownBy(() -> parse("--write-percent", "101")).hasMessage("--write-percent 101 is above the"
                + " maximum 100");
        assertThatThrownBy(() -> parse("--bucket", "1ms")).hasMessage("--bucket 1ms is below the minimum 10ms");
    }

    @Test
    void isRegisteredUnderBenchNextToCompare() {
        assertThat(new CommandLine(new BenchCommand()).getSubcommands()).containsKeys("compare", "cluster");
    }

    @Test
    void workloadsTakeClusterAndTheHelpSaysHowConnectionsAreCounted() {
        SetGetCommand setget = new SetGetCommand();
        new CommandLine(setget).parseArgs("--cluster", "-p", "7001", "-c", "16");

        BenchOptions o = setget.options();

        assertThat(o.cluster()).isTrue();
        assertThat(o.toString()).contains("cluster 127.0.0.1:7001");
        String help = new CommandLine(new OverflowCommand()).getUsageMessage();
        assertThat(help.replaceAll("\\s+", " ")).contains("--cluster").contains("N in all, spread over the primaries");
        assertThat(new CommandLine(new LmcacheCommand()).getUsageMessage()).contains("--cluster");
    }

    @Test
    void withoutClusterNothingChanges() {
        SetGetCommand setget = new SetGetCommand();
        new CommandLine(setget).parseArgs("-p", "7001");

        assertThat(setget.options().cluster()).isFalse();
    }
}
