package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/** How a node behaves for its operator: metrics, limits, configuration files, start-up refusals, lifecycle logs. */
class OperabilityIT {
    @TempDir
    Path tmp;

    @Test
    void servesPrometheusMetricsPerTierAndPerCommand() throws Exception {
        int metricsPort = KvtierProcess.freePort();
        try (KvtierProcess node = KvtierProcess.start(tmp.resolve("m"), "--memory", "8m", "--metrics-port",
                Integer.toString(metricsPort));
             Jedis jedis = new Jedis("127.0.0.1", node.port(), 30_000)) {
            for (int i = 0; i < 40; i++) {
                jedis.set(("m" + i).getBytes(), new byte[512 << 10]); // 20 MiB through 8 MiB: demotions
            }
            jedis.get("m0");
            jedis.get("absent");
            String body = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + metricsPort + "/metrics")).timeout(Duration.ofSeconds(10))
                    .build(), HttpResponse.BodyHandlers.ofString()).body();
            assertThat(body).contains("kvtier_commands_total{command=\"set\"} 40.0")
                    .contains("kvtier_command_duration_seconds_bucket{command=\"get\"")
                    .contains("kvtier_tier_bytes_used{tier=\"memory\"}")
                    .contains("kvtier_tier_bytes_used{tier=\"disk\"}")
                    .contains("kvtier_tier_hits_total{tier=\"disk\"} 1.0")
                    .contains("kvtier_misses_total 1.0")
                    .containsPattern("kvtier_demotions_total [1-9]");
        }
    }

    @Test
    void aReaderThatNeverReadsCannotGrowTheServer() throws Exception {
        try (KvtierProcess node = KvtierProcess.start(tmp.resolve("slow"), "--memory", "64m");
             Jedis jedis = new Jedis("127.0.0.1", node.port(), 30_000)) {
            jedis.set("big".getBytes(), new byte[4 << 20]);
            long before = node.anonymousRss();
            try (Socket lazy = new Socket()) {
                lazy.setReceiveBufferSize(64 << 10);
                lazy.connect(new InetSocketAddress("127.0.0.1", node.port()));
                OutputStream out = lazy.getOutputStream();
                byte[] get = "*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n".getBytes(StandardCharsets.US_ASCII);
                for (int i = 0; i < 2000; i++) { // asks for 8 GiB of replies and reads none of them
                    out.write(get);
                }
                out.flush();
                Thread.sleep(2000);
                long during = node.anonymousRss();
                System.out.printf("slow reader: anonymous RSS %d MiB before, %d MiB with 8 GiB of replies pending%n",
                        before >> 20, during >> 20);
                assertThat(during - before).isLessThan(128L << 20);
                assertThat(jedis.ping()).as("other clients are served meanwhile").isEqualTo("PONG");
                InputStream in = lazy.getInputStream();
                byte[] header = in.readNBytes(10);
                assertThat(new String(header, StandardCharsets.US_ASCII)).isEqualTo("$4194304\r\n");
            }
        }
    }

    @Test
    void refusesClientsBeyondMaxClientsWithRedisError() throws Exception {
        try (KvtierProcess node = KvtierProcess.start(tmp.resolve("mc"), "--max-clients", "2")) {
            List<Jedis> held = new ArrayList<>();
            try {
                Jedis first = new Jedis("127.0.0.1", node.port(), 10_000);
                held.add(first);
                // The harness's readiness probe may not be closed on the server side yet: wait until we are alone.
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (!first.info("clients").contains("connected_clients:1\r\n") && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                Jedis second = new Jedis("127.0.0.1", node.port(), 10_000);
                second.ping();
                held.add(second);
                try (Socket third = new Socket("127.0.0.1", node.port())) {
                    third.setSoTimeout(10_000);
                    String reply = new String(third.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
                    assertThat(reply).isEqualTo("-ERR max number of clients reached\r\n");
                }
            } finally {
                held.forEach(Jedis::close);
            }
        }
    }

    @Test
    void readsAConfigFileAndFlagsWinOverIt() throws Exception {
        Path conf = tmp.resolve("kvtier.conf");
        Files.writeString(conf, "# test config\nmemory 32m\nrequirepass \"from-file\"\nmax-clients 77\n");
        try (KvtierProcess node = KvtierProcess.start(tmp.resolve("cf"), "--config", conf.toString(),
                "--max-clients", "99");
             Jedis jedis = new Jedis("127.0.0.1", node.port(), 10_000)) {
            jedis.auth("from-file");
            assertThat(jedis.configGet("maxmemory")).containsEntry("maxmemory", Long.toString(32L << 20));
            assertThat(jedis.configGet("maxclients")).containsEntry("maxclients", "99");
        }
    }

    @Test
    void refusesBadStartupsWithOneClearLine() throws Exception {
        String root = KvtierProcess.ROOT.resolve("kvtier").toString();
        Tools.Result nonLoopback = Tools.run(Duration.ofSeconds(60), root, "server", "--bind", "0.0.0.0",
                "--port", "0", "--dir", tmp.resolve("pm").toString());
        assertThat(nonLoopback.exitCode()).isEqualTo(2);
        assertThat(nonLoopback.stderr()).contains("kvtier: refusing to listen on 0.0.0.0 without a password");
        Tools.Result badSize = Tools.run(Duration.ofSeconds(60), root, "server", "--memory", "lots",
                "--dir", tmp.resolve("bs").toString());
        assertThat(badSize.exitCode()).isEqualTo(2);
        assertThat(badSize.stderr()).contains("kvtier: --memory: 'lots' is not a size");
        Tools.Result tooSmall = Tools.run(Duration.ofSeconds(60), root, "server", "--memory", "16k",
                "--dir", tmp.resolve("ts").toString());
        assertThat(tooSmall.exitCode()).isEqualTo(2);
        assertThat(tooSmall.stderr()).contains("kvtier: --memory 16384 is below the minimum 1048576");
        try (KvtierProcess node = KvtierProcess.start(tmp.resolve("locked"))) {
            Tools.Result second = Tools.run(Duration.ofSeconds(60), root, "server", "--port", "0",
                    "--dir", tmp.resolve("locked").toString());
            assertThat(second.exitCode()).isEqualTo(1);
            assertThat(second.stderr()).contains("is in use by another kvtier process");
        }
    }

    @Test
    void logsOneLinePerLifecycleEvent() throws Exception {
        KvtierProcess node = KvtierProcess.start(tmp.resolve("life"));
        try (node) {
            assertThat(node.stop()).isIn(0, 143);
            assertThat(node.logText()).containsPattern("recovered 0 keys").contains("kvtier listening on 127.0.0.1:")
                    .contains("shutting down").contains("store closed").contains("shutdown complete");
        }
    }
}
