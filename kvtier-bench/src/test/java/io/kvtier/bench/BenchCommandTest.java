package io.kvtier.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.bench.load.Limit;
import io.kvtier.bench.run.BenchOptions;
import io.kvtier.bench.run.BenchTls;
import io.kvtier.bench.workload.LmcacheSpec;
import io.kvtier.bench.workload.OverflowSpec;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

class BenchCommandTest {

    private static BenchOptions parse(WorkloadCommand command, String... args) {
        new CommandLine(command).parseArgs(args);
        return command.options();
    }

    @Test
    void setgetFlagsMapOntoTheOptions() {
        BenchOptions o = parse(new SetGetCommand(), "--host", "10.0.0.2", "-p", "7000", "-c", "16", "-P", "8",
                "-s", "4k,1m", "-n", "500", "--warmup", "100", "--verify", "--seed", "9", "--rate", "250",
                "--key-space", "50", "--password", "pw", "-o", "/tmp/x");
        assertThat(o.target()).isEqualTo("10.0.0.2:7000");
        assertThat(o.connections()).isEqualTo(16);
        assertThat(o.pipeline()).isEqualTo(8);
        assertThat(o.valueSizes()).containsExactly(4096, 1 << 20);
        assertThat(o.limit()).isEqualTo(new Limit.Requests(500));
        assertThat(o.warmUp()).isEqualTo(new Limit.Requests(100));
        assertThat(o.verify()).isTrue();
        assertThat(o.seed()).isEqualTo(9);
        assertThat(o.rate()).hasValue(250.0);
        assertThat(o.keySpace()).isEqualTo(50);
        assertThat(o.password()).hasValue("pw");
    }

    @Test
    void lmcacheFlagsMapOntoItsSpec() {
        BenchOptions o = parse(new LmcacheCommand(), "--chunk-bytes", "1m", "--chunk-tokens", "128", "--zipf",
                "0.8", "--conversations", "10", "--dtype", "bfloat16", "--duration", "30s");
        LmcacheSpec spec = (LmcacheSpec) o.workload();
        assertThat(spec.chunkBytes()).isEqualTo(1 << 20);
        assertThat(spec.chunkTokens()).isEqualTo(128);
        assertThat(spec.zipfExponent()).isEqualTo(0.8);
        assertThat(spec.dtype()).isEqualTo("bfloat16");
        assertThat(spec.probeSuffix()).isEqualTo("metadata");
        assertThat(o.limit()).isEqualTo(new Limit.Timed(Duration.ofSeconds(30)));
    }

    @Test
    void overflowWritesItsWholeWorkingSet() {
        BenchOptions o = parse(new OverflowCommand(), "--memory-budget", "64m", "-k", "4");
        assertThat(((OverflowSpec) o.workload()).memoryBudget()).isEqualTo(64L << 20);
        assertThat(o.limit()).isEqualTo(new Limit.Requests(256));
    }

    @Test
    void badValuesAreReportedWithTheFlag() {
        assertThatThrownBy(() -> parse(new SetGetCommand(), "-c", "0")).hasMessage("--connections 0 is below the minimum 1");
        assertThatThrownBy(() -> parse(new SetGetCommand(), "-s", "1g"))
                .hasMessage("--value-sizes 1 GiB is above the maximum 512 MiB");
        assertThatThrownBy(() -> parse(new SetGetCommand(), "-s", "12q"))
                .hasMessageContaining("'12q' is not a size");
        assertThatThrownBy(() -> parse(new SetGetCommand(), "-n", "5", "--duration", "2s"))
                .hasMessage("--duration 2s and --requests 5 exclude each other; give one");
        assertThatThrownBy(() -> parse(new SetGetCommand(), "-n", "0")).hasMessage("--requests 0 is below the minimum 1");
        assertThatThrownBy(() -> parse(new OverflowCommand())).hasMessageContaining("--memory-budget");
    }

    @Test
    void tlsFlagsAreRedisClisAndChecked() {
        BenchOptions o = parse(new SetGetCommand(), "--tls", "--cacert", "ca.crt", "--cert", "c.crt", "--key", "c.key");
        assertThat(o.tls()).contains(new BenchTls(java.util.Optional.of(java.nio.file.Path.of("ca.crt")),
                java.util.Optional.of(java.nio.file.Path.of("c.crt")), java.util.Optional.of(java.nio.file.Path.of("c.key"))));
        assertThat(parse(new SetGetCommand()).tls()).isEmpty();
        assertThatThrownBy(() -> parse(new SetGetCommand(), "--cacert", "ca.crt"))
                .hasMessage("--cacert, --cert and --key need --tls");
        assertThatThrownBy(() -> parse(new SetGetCommand(), "--tls", "--cert", "c.crt"))
                .hasMessage("--cert and --key go together");
        assertThatThrownBy(() -> parse(new SetGetCommand(), "--tls", "--cluster"))
                .hasMessage("--tls is not supported with --cluster");
    }

    @Test
    void everyOptionSaysItsDefault() {
        CommandLine bench = new CommandLine(new BenchCommand());
        for (String name : List.of("setget", "lmcache", "overflow")) {
            for (OptionSpec option : bench.getSubcommands().get(name).getCommandSpec().options()) {
                if (option.usageHelp() || option.versionHelp()) {
                    continue;
                }
                assertThat(String.join(" ", option.description())).as("%s %s", name, option.longestName())
                        .containsAnyOf("(default: ", "(required");
            }
        }
    }

    @Test
    void benchAloneListsItsWorkloads() {
        StringWriter out = new StringWriter();
        CommandLine bench = new CommandLine(new BenchCommand()).setOut(new PrintWriter(out));
        assertThat(bench.execute()).isZero();
        assertThat(out.toString()).contains("setget", "lmcache", "overflow");
    }
}
