package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.server.config.ClientLimits;
import io.kvtier.server.config.ServerOptions;
import io.kvtier.server.config.TlsSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class ServerCommandTest {
    @TempDir
    Path tmp;

    private static ServerOptions parse(String... args) throws Exception {
        ServerCommand cmd = new ServerCommand();
        new CommandLine(cmd).parseArgs(args);
        return cmd.options();
    }

    @Test
    void defaultsMatchTheReadme() throws Exception {
        ServerOptions o = parse();
        assertThat(o.bind()).isEqualTo("127.0.0.1");
        assertThat(o.port()).isEqualTo(6379);
        assertThat(o.dir()).isEqualTo(Path.of("kvtier-data"));
        assertThat(o.memoryBytes()).isEqualTo(1L << 30);
        assertThat(o.diskBytes()).isEqualTo(8L << 30);
        assertThat(o.maxValueBytes()).isEqualTo(512L << 20);
        assertThat(o.requirePass()).isNull();
        assertThat(o.protectedMode()).isTrue();
        assertThat(o.metricsPort()).isZero();
    }

    @Test
    void theIndexBudgetDefaultsToAnEighthOfMemoryAndDiskAndSizesTheHeap() throws Exception {
        ServerOptions o = parse("--memory", "1g", "--disk", "7g");
        assertThat(o.indexBytes()).isEqualTo(1L << 30);
        assertThat(o.heapBytes()).isEqualTo((768L << 20) + (1L << 30) + (256L << 20));
        assertThat(HeapSize.flag("--memory", "1g", "--disk", "7g")).isEqualTo("-Xmx2048m");
        assertThat(parse("--memory", "16m", "--disk", "64m").indexBytes()).isEqualTo(64L << 20); // the least default
    }

    @Test
    void theLauncherSizesTheHeapFromTheIndexBudgetInFlagsOrConfigFile() throws Exception {
        assertThat(HeapSize.flag("--index-memory", "2g")).isEqualTo("-Xmx" + (768 + 2048 + 512) + "m");
        Path conf = tmp.resolve("k.conf");
        Files.writeString(conf, "index-memory 400m\n");
        assertThat(HeapSize.flag("--config", conf.toString())).isEqualTo("-Xmx" + (768 + 400 + 100) + "m");
        assertThatThrownBy(() -> parse("--index-memory", "512k")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--index-memory 524288 is below the minimum");
    }

    @Test
    void theDiskWriteLimitIsASizePerSecondInFlagsOrConfigFileAndReachesTheStore() throws Exception {
        assertThat(parse().diskWriteLimit()).isZero();
        assertThat(parse("--disk-write-limit", "1g").storeOptions().diskWriteLimit()).isEqualTo(1L << 30);
        Path conf = tmp.resolve("w.conf");
        Files.writeString(conf, "disk-write-limit 500m\n");
        assertThat(parse("--config", conf.toString()).diskWriteLimit()).isEqualTo(500L << 20);
        assertThatThrownBy(() -> parse("--disk-write-limit", "fast")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--disk-write-limit");
    }

    @Test
    void sharedMemoryIsOffUnlessAskedFor() throws Exception {
        assertThat(parse().sharedMemory()).isFalse();
        assertThat(parse("--shm", "yes").storeOptions().sharedMemory()).isTrue();
        assertThatThrownBy(() -> parse("--shm", "maybe")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--shm");
    }

    @Test
    void mapsEveryFlag() throws Exception {
        ServerOptions o = parse("--port", "7000", "--bind", "127.0.0.1 ::1", "--dir", "/tmp/x", "--memory", "64m",
                "--disk", "2g", "--requirepass", "pw", "--max-value", "16m", "--metrics-port", "9100",
                "--protected-mode", "no", "--max-clients", "5", "--disk-threads", "2", "--io-threads", "3",
                "--pin-share", "0.1", "--client-query-buffer-limit", "64m", "--maxmemory-clients", "32m",
                "--timeout", "300", "--read-timeout", "5");
        assertThat(o).isEqualTo(new ServerOptions("127.0.0.1 ::1", 7000, Path.of("/tmp/x"), 64L << 20, 2L << 30,
                16L << 20, "pw", false, 9100, 5, 2, 3, ServerOptions.DEFAULT_DISK_READ_BUFFER, 0.1, 0, null,
                new ClientLimits(64L << 20, 32L << 20, 300, 5), null, 0));
    }

    @Test
    void flagsWinOverTheConfigFileWhichWinsOverDefaults() throws Exception {
        Path conf = tmp.resolve("k.conf");
        Files.writeString(conf, "# comment\n\nmemory 32m\nport 7001\nrequirepass \"a b\"\n");
        ServerOptions o = parse("--config", conf.toString(), "--port", "7002");
        assertThat(o.memoryBytes()).isEqualTo(32L << 20);
        assertThat(o.port()).isEqualTo(7002);
        assertThat(o.requirePass()).isEqualTo("a b");
    }

    @Test
    void rejectsUnknownSettingsAndBadValuesNamingThem() throws Exception {
        Path conf = tmp.resolve("bad.conf");
        Files.writeString(conf, "memory 32m\nmaxmemory 1g\n");
        assertThatThrownBy(() -> parse("--config", conf.toString()))
                .hasMessageContaining("bad.conf:2: unknown setting 'maxmemory'");
        assertThatThrownBy(() -> parse("--port", "seventy")).hasMessage("--port: 'seventy' is not a whole number");
        assertThatThrownBy(() -> parse("--port", "70000")).hasMessageContaining("--port 70000 is outside 0..65535");
        assertThatThrownBy(() -> parse("--protected-mode", "maybe")).hasMessageContaining("is not yes or no");
        assertThatThrownBy(() -> parse("--disk", "1m")).hasMessageContaining("--disk 1048576 is below the minimum");
        assertThatThrownBy(() -> parse("--io-threads", "0")).hasMessageContaining("--io-threads 0 is outside 1..1024");
    }

    @Test
    void protectedModeRefusesAnOpenBindWithoutPassword() throws Exception {
        assertThatThrownBy(() -> parse("--bind", "0.0.0.0")).hasMessageContaining("refusing to listen on 0.0.0.0");
        assertThat(parse("--bind", "0.0.0.0", "--requirepass", "x").bind()).isEqualTo("0.0.0.0");
        assertThat(parse("--bind", "0.0.0.0", "--protected-mode", "no").protectedMode()).isFalse();
    }

    @Test
    void tlsFlagsHaveRedissNamesAndDefaults() throws Exception {
        ServerOptions o = parse("--tls-port", "6380", "--tls-cert-file", "s.crt", "--tls-key-file", "s.key",
                "--tls-ca-cert-file", "ca.crt");
        assertThat(o.tls()).isEqualTo(new TlsSettings(6380, Path.of("s.crt"), Path.of("s.key"), Path.of("ca.crt"),
                TlsSettings.AuthClients.YES, false));
        assertThat(o.plainListener()).isTrue();
        assertThat(parse().tls()).as("no TLS port: no TLS").isNull();
        Path conf = tmp.resolve("tls.conf");
        Files.writeString(conf, "tls-port 0\ntls-cert-file s.crt\n");
        assertThat(parse("--config", conf.toString()).tls()).as("tls-port 0 is off, as Redis").isNull();
        assertThat(parse("--port", "0", "--tls-port", "6380", "--tls-cert-file", "s.crt", "--tls-key-file", "s.key",
                "--tls-ca-cert-file", "ca.crt", "--tls-auth-clients", "optional").plainListener())
                .as("--port 0 with a TLS port: TLS only").isFalse();
        assertThat(parse("--port", "0").plainListener()).as("--port 0 alone: a free port").isTrue();
    }

    @Test
    void tlsMistakesAreNamed() {
        assertThatThrownBy(() -> parse("--tls-cert-file", "s.crt")).hasMessage("--tls-cert-file needs --tls-port");
        assertThatThrownBy(() -> parse("--tls-port", "6380", "--tls-cert-file", "s.crt"))
                .hasMessage("--tls-port needs --tls-cert-file and --tls-key-file");
        assertThatThrownBy(() -> parse("--tls-port", "6380", "--tls-cert-file", "s.crt", "--tls-key-file", "s.key"))
                .hasMessageStartingWith("--tls-port needs --tls-ca-cert-file");
        assertThatThrownBy(() -> parse("--tls-port", "6380", "--tls-cert-file", "s.crt", "--tls-key-file", "s.key",
                "--tls-ca-cert-file", "ca.crt", "--tls-auth-clients", "maybe"))
                .hasMessage("--tls-auth-clients: 'maybe' is not yes, no or optional");
        assertThatThrownBy(() -> parse("--tls-port", "70000")).hasMessageContaining("outside 0..65535");
        assertThatThrownBy(() -> parse("--tls-port", "6380", "--tls-cert-file", "s.crt", "--tls-key-file", "s.key",
                "--tls-ca-cert-file", "ca.crt", "--tls-cluster", "yes"))
                .hasMessage("--tls-cluster yes needs --seeds or --dns-query (cluster mode)");
        assertThatThrownBy(() -> parse("--port", "0", "--tls-port", "6380", "--tls-cert-file", "s.crt",
                "--tls-key-file", "s.key", "--tls-ca-cert-file", "ca.crt", "--seeds", "127.0.0.1:16380"))
                .hasMessageStartingWith("--port 0 (TLS only) in a cluster needs --tls-cluster yes");
    }

    @Test
    void aTlsClusterNodeIsKnownByItsTlsPort() throws Exception {
        ServerOptions o = parse("--port", "7000", "--tls-port", "7100", "--tls-cert-file", "s.crt", "--tls-key-file",
                "s.key", "--tls-ca-cert-file", "ca.crt", "--tls-cluster", "yes", "--seeds", "127.0.0.1:17000");
        assertThat(o.cluster().membership().nodeId()).isEqualTo("127.0.0.1:7100");
        assertThat(o.cluster().membership().clusterPort()).as("cluster port: RESP port + 10000").isEqualTo(17000);
        ServerOptions tlsOnly = parse("--port", "0", "--tls-port", "7100", "--tls-cert-file", "s.crt",
                "--tls-key-file", "s.key", "--tls-ca-cert-file", "ca.crt", "--tls-cluster", "yes", "--seeds",
                "127.0.0.1:17100");
        assertThat(tlsOnly.cluster().membership().clusterPort()).as("no plain port: TLS port + 10000").isEqualTo(17100);
    }
}
