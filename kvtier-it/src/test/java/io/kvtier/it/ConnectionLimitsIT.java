package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Issue 10, item 9, against real processes: at the open-file limit extra clients are told "max number of clients
 * reached" while the others go on; CLIENT LIST stays bounded whatever names 300 clients try to set; {@code /metrics}
 * asks for the password and keeps answering beside half-sent requests.
 */
class ConnectionLimitsIT {
    private static final int FD_LIMIT = 256;
    private static final String PING = "*1\r\n$4\r\nPING\r\n";

    @TempDir
    Path tmp;

    @Test
    void refusesClientsAtTheOpenFileLimitWithRedisErrorWhileOthersGoOn() throws Exception {
        int port = KvtierProcess.freePortForTests();
        List<Socket> held = new ArrayList<>();
        try (KvtierProcess node = KvtierProcess.startAt("127.0.0.1", port,
                List.of("prlimit", "--nofile=" + FD_LIMIT + ":" + FD_LIMIT), tmp.resolve("fd"), "--memory", "32m",
                "--disk", "64m");
             Jedis admin = node.jedis(10_000)) {
            int max = Integer.parseInt(admin.configGet("maxclients").get("maxclients"));
            System.out.printf("open-file limit %d: maxclients %d%n", FD_LIMIT, max);
            assertThat(max).isBetween(32, FD_LIMIT - 64);
            assertThat(admin.info("clients")).contains("maxclients:" + max + "\r\n");
            assertThat(node.logText()).contains("--max-clients 10000 lowered to " + max);
            awaitAlone(admin);
            try {
                for (int i = 1; i < max; i++) {
                    held.add(pinged(node));
                }
                for (int extra = 0; extra < 5; extra++) {
                    try (Socket refused = new Socket("127.0.0.1", node.port())) {
                        refused.setSoTimeout(10_000);
                        assertThat(new String(refused.getInputStream().readAllBytes(), StandardCharsets.US_ASCII))
                                .isEqualTo("-ERR max number of clients reached\r\n");
                    }
                }
                for (Socket s : held) {
                    assertThat(ping(s)).as("a client admitted before the limit").isEqualTo("+PONG\r\n");
                }
                long open = openDescriptors(node);
                System.out.printf("%d clients admitted, 5 refused; the node holds %d descriptors%n", max, open);
                assertThat(open).isLessThan(FD_LIMIT);
                assertThat(admin.info("stats")).containsPattern("rejected_connections:[5-9]");
            } finally {
                for (Socket s : held) {
                    s.close();
                }
            }
        }
    }

    @Test
    void clientListStaysBoundedWhen300ClientsTryMegabyteNames() throws Exception {
        String megabyte = "n".repeat(1 << 20);
        try (KvtierProcess node = KvtierProcess.start(tmp.resolve("names"), "--memory", "64m", "--disk", "128m");
             Jedis admin = node.jedis(30_000)) {
            long rssBefore = node.anonymousRss();
            List<Jedis> clients = new ArrayList<>();
            try {
                for (int i = 0; i < 300; i++) {
                    Jedis c = node.jedis(30_000);
                    clients.add(c);
                    assertThatThrownBy(() -> c.clientSetname(megabyte)).isInstanceOf(JedisDataException.class)
                            .hasMessage("ERR Client names longer than 256 bytes are not supported (got 1048576)");
                    assertThat(c.clientSetname(String.format("%03d", i) + "n".repeat(253))).isEqualTo("OK");
                }
                String list = admin.clientList();
                long rssAfter = node.anonymousRss();
                System.out.printf("CLIENT LIST of 301 clients with 256-byte names: %d bytes; anonymous RSS %d MiB"
                        + " before, %d MiB after%n", list.length(), rssBefore >> 20, rssAfter >> 20);
                assertThat(list.lines().count()).isEqualTo(301);
                assertThat(list.length()).as("at most 600 + 3 x 256 bytes a client").isLessThan(301 * (600 + 3 * 256));
                assertThat(list).contains(" name=299" + "n".repeat(253) + " ");
                assertThat(rssAfter - rssBefore).as("RSS growth").isLessThan(256L << 20);
                assertThat(admin.ping()).isEqualTo("PONG");
            } finally {
                clients.forEach(Jedis::close);
            }
        }
    }

    @Test
    void metricsAskForThePasswordAndAnswerBesideHalfSentRequests() throws Exception {
        int metricsPort = KvtierProcess.freePortForTests();
        try (KvtierProcess node = KvtierProcess.start(tmp.resolve("metrics"), "--memory", "32m", "--requirepass",
                "s3cret", "--metrics-port", Integer.toString(metricsPort))) {
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            URI uri = URI.create("http://127.0.0.1:" + metricsPort + "/metrics");
            assertThat(http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(401);
            HttpRequest authorized = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).header("Authorization",
                    "Basic " + Base64.getEncoder().encodeToString("default:s3cret".getBytes(StandardCharsets.UTF_8)))
                    .build();
            List<Socket> halfSent = new ArrayList<>();
            try {
                for (int i = 0; i < 10; i++) {
                    Socket s = new Socket("127.0.0.1", metricsPort);
                    halfSent.add(s);
                    s.getOutputStream().write("GET /metrics HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
                }
                for (int i = 0; i < 5; i++) {
                    long start = System.nanoTime();
                    HttpResponse<String> r = http.send(authorized, HttpResponse.BodyHandlers.ofString());
                    long millis = (System.nanoTime() - start) / 1_000_000;
                    System.out.printf("scrape %d beside 10 half-sent requests: %d ms%n", i, millis);
                    assertThat(r.statusCode()).isEqualTo(200);
                    assertThat(r.body()).contains("kvtier_keys ");
                    assertThat(millis).isLessThan(2000);
                }
                for (Socket s : halfSent) {
                    s.setSoTimeout(30_000);
                    assertThat(s.getInputStream().read()).as("closed after the request timeout").isEqualTo(-1);
                }
            } finally {
                for (Socket s : halfSent) {
                    s.close();
                }
            }
        }
    }

    private static void awaitAlone(Jedis admin) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L; // the harness's readiness probe may not be closed yet
        while (!admin.info("clients").contains("connected_clients:1\r\n") && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
    }

    private static Socket pinged(KvtierProcess node) throws Exception {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", node.port()), 10_000);
        s.setSoTimeout(10_000);
        assertThat(ping(s)).isEqualTo("+PONG\r\n");
        return s;
    }

    private static String ping(Socket s) throws Exception {
        OutputStream out = s.getOutputStream();
        out.write(PING.getBytes(StandardCharsets.US_ASCII));
        out.flush();
        InputStream in = s.getInputStream();
        return new String(in.readNBytes(7), StandardCharsets.US_ASCII);
    }

    private static long openDescriptors(KvtierProcess node) throws Exception {
        try (var fds = Files.list(Path.of("/proc", Long.toString(node.javaPid()), "fd"))) {
            return fds.count();
        }
    }
}
