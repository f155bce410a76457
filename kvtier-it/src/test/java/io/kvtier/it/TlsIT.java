package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * TLS with real clients: redis-cli {@code --tls}, redis-py {@code ssl=True} and Lettuce with {@link SslOptions} against
 * a node with {@code --tls-port}, certificates made by the openssl CLI for this test (a CA, a server certificate for
 * 127.0.0.1, a client certificate). Client certificates under each {@code --tls-auth-clients}, a TLS-only node
 * ({@code --port 0}), a certificate reload on SIGHUP, unusable certificate files, and a three-node cluster whose links
 * run over TLS ({@code --tls-cluster yes}).
 */
class TlsIT {
    private static final int LARGE = 4 << 20;

    @TempDir
    static Path tmp;
    static Path certs;
    static KvtierProcess node;
    static int tlsPort;

    @BeforeAll
    static void startNode() throws Exception {
        certs = Files.createDirectories(tmp.resolve("certs"));
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
                "-subj", "/CN=kvtier test CA");
        certificate("server", "server");
        certificate("client", "client");
        tlsPort = KvtierProcess.freePortForTests();
        node = KvtierProcess.start(tmp.resolve("node"), tlsFlags(tlsPort, "--memory", "64m"));
    }

    @AfterAll
    static void stopNode() throws InterruptedException {
        if (node != null) {
            assertThat(node.stop()).isIn(0, 143);
        }
    }

    @Test
    void redisCliOverTls() throws Exception {
        assertThat(cli(tlsPort, true, "PING").stdout().strip()).isEqualTo("PONG");
        assertThat(cli(tlsPort, true, "SET", "tls:cli", "hello").stdout().strip()).isEqualTo("OK");
        assertThat(cli(tlsPort, true, "GET", "tls:cli").stdout().strip()).isEqualTo("hello");
        try (Jedis plain = node.jedis(10_000)) {
            assertThat(plain.get("tls:cli")).as("one store behind both ports").isEqualTo("hello");
        }

        byte[] value = text(LARGE); // printable: redis-cli --raw GET prints it as it is
        Tools.Result set = Tools.run(Duration.ofSeconds(60), value, cliCommand(tlsPort, true, "-x", "SET", "tls:large"));
        assertThat(set.stdout().strip()).as(set.stderr()).isEqualTo("OK");
        Tools.Result get = Tools.run(Duration.ofSeconds(60), null, cliCommand(tlsPort, true, "--raw", "GET",
                "tls:large"));
        assertThat(get.stdout()).as("4 MiB back over TLS").isEqualTo(new String(value, StandardCharsets.US_ASCII)
                + "\n");
    }

    @Test
    void clientWithoutCertificateIsRefusedWhenCertificatesAreRequired() throws Exception {
        Tools.Result r = cli(tlsPort, false, "PING");
        assertThat(r.stdout() + r.stderr()).doesNotContain("PONG");
        assertThat(cli(tlsPort, true, "PING").stdout().strip()).as("the node serves on").isEqualTo("PONG");
        Tools.Result plainOnTls = Tools.run(Duration.ofSeconds(20), "redis-cli", "-p", Integer.toString(tlsPort),
                "PING");
        assertThat(plainOnTls.stdout()).as("plain RESP on the TLS port").doesNotContain("PONG");
    }

    @Test
    void aConnectionThatNeverHandshakesIsClosed() throws Exception {
        try (java.net.Socket silent = new java.net.Socket("127.0.0.1", tlsPort)) {
            silent.setSoTimeout(30_000);
            long start = System.nanoTime();
            assertThat(cli(tlsPort, true, "PING").stdout().strip()).as("others are served meanwhile")
                    .isEqualTo("PONG");
            assertThat(silent.getInputStream().read()).as("closed by the node").isEqualTo(-1);
            long seconds = (System.nanoTime() - start) / 1_000_000_000L;
            assertThat(seconds).as("Netty's 10 s handshake limit").isBetween(8L, 15L);
        }
    }

    @Test
    void clientsThatDoNotReadALargeValueHoldLittleCiphertext() throws Exception {
        // In memory (under a quarter of --memory), so that the reply is a view of its pages and holds no staging.
        byte[] value = Payloads.make(21, 1, 100 << 20);
        int port = KvtierProcess.freePortForTests();
        KvtierProcess n = KvtierProcess.start(tmp.resolve("slow-readers"), tlsFlags(port, "--memory", "512m"));
        List<javax.net.ssl.SSLSocket> readers = new ArrayList<>();
        try {
            try (Jedis plain = n.jedis(30_000)) {
                assertThat(plain.set(bytes("tls:huge"), value)).isEqualTo("OK");
            }
            javax.net.ssl.SSLContext ssl = clientSsl();
            long before = n.anonymousRss();
            for (int i = 0; i < 4; i++) {
                javax.net.ssl.SSLSocket s = (javax.net.ssl.SSLSocket) ssl.getSocketFactory().createSocket();
                s.setReceiveBufferSize(64 << 10);
                s.connect(new java.net.InetSocketAddress("127.0.0.1", port), 10_000);
                s.setSoTimeout(30_000);
                s.getOutputStream().write("*2\r\n$3\r\nGET\r\n$8\r\ntls:huge\r\n".getBytes(StandardCharsets.US_ASCII));
                s.getOutputStream().flush();
                readers.add(s);
            }
            Thread.sleep(3_000);
            long grown = n.anonymousRss() - before;
            // Encrypted whole on flush, each reply would hold its 100 MiB of ciphertext until the client read it (RSS
            // grew by 2.9 GiB with 3 such clients of a 200 MiB value).
            assertThat(grown).as("RSS growth with 4 clients not reading a 100 MiB value").isLessThan(200L << 20);
            byte[] header = ("$" + value.length + "\r\n").getBytes(StandardCharsets.US_ASCII);
            for (javax.net.ssl.SSLSocket s : readers) {
                byte[] reply = s.getInputStream().readNBytes(header.length + value.length + 2);
                assertThat(java.util.Arrays.copyOfRange(reply, header.length, header.length + value.length))
                        .as("the value, once read").isEqualTo(value);
            }
        } finally {
            for (javax.net.ssl.SSLSocket s : readers) {
                s.close();
            }
            assertThat(n.stop()).isIn(0, 143);
        }
    }

    @Test
    void redisPyWithSsl() throws Exception {
        String script = """
                import hashlib, os, sys, redis
                r = redis.Redis(host='127.0.0.1', port=int(sys.argv[1]), ssl=True, ssl_certfile=sys.argv[2],
                                ssl_keyfile=sys.argv[3], ssl_ca_certs=sys.argv[4], socket_timeout=30)
                assert r.ping()
                value = os.urandom(int(sys.argv[5]))
                assert r.set('tls:py', value)
                back = r.get('tls:py')
                assert back == value, 'mismatch: %d bytes back' % len(back or b'')
                print('ok', len(back), hashlib.sha256(back).hexdigest()[:12])
                """;
        Tools.Result r = Tools.run(Duration.ofSeconds(60), "/usr/bin/python3", "-c", script,
                Integer.toString(tlsPort), cert("client.crt"), cert("client.key"), cert("ca.crt"),
                Integer.toString(LARGE));
        assertThat(r.exitCode()).as("stdout %s stderr %s", r.stdout(), r.stderr()).isZero();
        assertThat(r.stdout()).startsWith("ok " + LARGE);
    }

    @Test
    void lettuceWithSslOptions() {
        RedisClient client = RedisClient.create();
        try {
            client.setOptions(io.lettuce.core.ClientOptions.builder().sslOptions(SslOptions.builder().jdkSslProvider()
                    .keyManager(certs.resolve("client.crt").toFile(), certs.resolve("client.key").toFile(), null)
                    .trustManager(certs.resolve("ca.crt").toFile()).build()).build());
            RedisURI uri = RedisURI.builder().withHost("127.0.0.1").withPort(tlsPort).withSsl(true)
                    .withTimeout(Duration.ofSeconds(30)).build();
            try (StatefulRedisConnection<byte[], byte[]> c = client.connect(ByteArrayCodec.INSTANCE, uri)) {
                byte[] value = Payloads.make(12, 1, LARGE);
                assertThat(c.sync().set(bytes("tls:lettuce"), value)).isEqualTo("OK");
                assertThat(c.sync().get(bytes("tls:lettuce"))).isEqualTo(value);
                assertThat(new String(c.sync().ping())).isEqualTo("PONG");
            }
        } finally {
            client.shutdown();
        }
    }

    @Test
    void optionalAndNoAcceptClientsWithoutCertificatesOnATlsOnlyNode() throws Exception {
        for (String mode : List.of("optional", "no")) {
            KvtierProcess tlsOnly = KvtierProcess.startTlsOnly(tmp.resolve("tls-only-" + mode), "--memory", "16m",
                    "--tls-cert-file", cert("server.crt"), "--tls-key-file", cert("server.key"), "--tls-ca-cert-file",
                    cert("ca.crt"), "--tls-auth-clients", mode);
            try {
                assertThat(cli(tlsOnly.port(), false, "PING").stdout().strip()).as(mode + ", no client certificate")
                        .isEqualTo("PONG");
                assertThat(cli(tlsOnly.port(), true, "PING").stdout().strip()).as(mode + ", a client certificate")
                        .isEqualTo("PONG");
                assertThat(cli(tlsOnly.port(), false, "CONFIG", "GET", "port").stdout().strip())
                        .as("no plain port").isEqualTo("port\n0");
                assertThat(cli(tlsOnly.port(), false, "CONFIG", "GET", "tls-auth-clients").stdout().strip())
                        .isEqualTo("tls-auth-clients\n" + mode);
            } finally {
                assertThat(tlsOnly.stop()).isIn(0, 143);
            }
        }
    }

    @Test
    void sighupReloadsTheCertificatesForNewConnections() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("reload"));
        Files.copy(certs.resolve("server.crt"), dir.resolve("node.crt"));
        Files.copy(certs.resolve("server.key"), dir.resolve("node.key"));
        int port = KvtierProcess.freePortForTests();
        KvtierProcess n = KvtierProcess.start(tmp.resolve("reload-node"), "--memory", "16m", "--tls-port",
                Integer.toString(port), "--tls-cert-file", dir.resolve("node.crt").toString(), "--tls-key-file",
                dir.resolve("node.key").toString(), "--tls-ca-cert-file", cert("ca.crt"));
        try {
            // A node started with SIGHUP ignored (inherited: a test run under nohup) cannot take it over, says so, and
            // runs on; there is nothing to test then.
            org.junit.jupiter.api.Assumptions.assumeFalse(n.logText().contains("SIGHUP cannot be handled"),
                    "SIGHUP is ignored in this environment (run under nohup?): the node cannot take it over");
            assertThat(peerSubject(port)).contains("CN = server");
            certificate("rotated", "rotated");
            Files.copy(certs.resolve("rotated.crt"), dir.resolve("node.crt"), StandardCopyOption.REPLACE_EXISTING);
            Files.copy(certs.resolve("rotated.key"), dir.resolve("node.key"), StandardCopyOption.REPLACE_EXISTING);
            n.signal("HUP");
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (!n.logText().contains("TLS certificates reloaded") && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertThat(peerSubject(port)).as("new connections get the new certificate").contains("CN = rotated");
            assertThat(cli(port, true, "PING").stdout().strip()).isEqualTo("PONG");

            Files.writeString(dir.resolve("node.key"), "not a key\n");
            n.signal("HUP");
            deadline = System.nanoTime() + 10_000_000_000L;
            while (!n.logText().contains("TLS reload on SIGHUP failed") && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertThat(n.logText()).contains("TLS reload on SIGHUP failed; the certificates in use stay");
            assertThat(peerSubject(port)).as("a failed reload keeps what was in use").contains("CN = rotated");
            assertThat(n.isAlive()).as("SIGHUP does not stop the node").isTrue();
        } finally {
            assertThat(n.stop()).isIn(0, 143);
        }
    }

    @Test
    void unusableCertificateFilesStopTheStartWithAClearError() throws Exception {
        Path garbage = Files.writeString(tmp.resolve("garbage.key"), "-----BEGIN PRIVATE KEY-----\nAAAA\n"
                + "-----END PRIVATE KEY-----\n");
        assertThatThrownBy(() -> KvtierProcess.start(tmp.resolve("bad-key"), "--tls-port",
                Integer.toString(KvtierProcess.freePortForTests()), "--tls-cert-file", cert("server.crt"),
                "--tls-key-file", garbage.toString(), "--tls-ca-cert-file", cert("ca.crt")))
                .hasMessageContaining("kvtier exited with 1").hasMessageContaining("--tls-key-file " + garbage);
        assertThatThrownBy(() -> KvtierProcess.start(tmp.resolve("no-ca"), "--tls-port",
                Integer.toString(KvtierProcess.freePortForTests()), "--tls-cert-file", cert("server.crt"),
                "--tls-key-file", cert("server.key"), "--tls-ca-cert-file", tmp.resolve("missing.crt").toString()))
                .hasMessageContaining("kvtier exited with 1")
                .hasMessageContaining("--tls-ca-cert-file " + tmp.resolve("missing.crt") + ": no such file");
        assertThatThrownBy(() -> KvtierProcess.start(tmp.resolve("no-port"), "--tls-cert-file", cert("server.crt")))
                .hasMessageContaining("kvtier exited with 2").hasMessageContaining("--tls-cert-file needs --tls-port");
    }

    @Test
    void clusterLinksOverTls() throws Exception {
        List<Integer> tlsPorts = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            tlsPorts.add(KvtierProcess.freePortForTests());
        }
        try (TestCluster cluster = TestCluster.startWith(Files.createDirectories(tmp.resolve("cluster")), 3, 0,
                // A peer's first call includes the TLS handshake: room for it on a loaded 2-core machine.
                i -> List.of(tlsFlags(tlsPorts.get(i), "--tls-cluster", "yes", "--peer-timeout", "5s")))) {
            KvtierProcess entry = cluster.nodes.get(0);
            for (int i = 0; i < 30; i++) {
                assertThat(cli(tlsPorts.get(0), true, "SET", "tls:cluster:" + i, "v" + i).stdout().strip())
                        .as("proxied to its primary over TLS and replicated").isEqualTo("OK");
            }
            for (int i = 0; i < 30; i++) {
                assertThat(cli(tlsPorts.get(1), true, "GET", "tls:cluster:" + i).stdout().strip())
                        .isEqualTo("v" + i);
            }
            Map<String, String> info = TestCluster.status(entry);
            assertThat(Long.parseLong(info.get("kvtier_forwarded_total"))).as("writes for other nodes' slots")
                    .isPositive();
            assertThat(info.get("kvtier_forward_failures_total")).isEqualTo("0");
            assertThat(info.get("kvtier_replication_failures_total")).isEqualTo("0");
            String slots = cli(tlsPorts.get(0), true, "CLUSTER", "SLOTS").stdout();
            for (int i = 0; i < 3; i++) {
                assertThat(slots).as("nodes announce their TLS ports").contains(Integer.toString(tlsPorts.get(i)));
            }
            assertThat(cli(tlsPorts.get(0), true, "CLUSTER", "SHARDS").stdout()).as("named as Redis names them")
                    .contains("tls-port\n" + tlsPorts.get(1));
        }
    }

    private static String[] tlsFlags(int port, String... more) {
        List<String> flags = new ArrayList<>(List.of("--tls-port", Integer.toString(port), "--tls-cert-file",
                cert("server.crt"), "--tls-key-file", cert("server.key"), "--tls-ca-cert-file", cert("ca.crt")));
        flags.addAll(List.of(more));
        return flags.toArray(String[]::new);
    }

    /** The subject of the certificate the node shows a new connection, as openssl s_client prints it. */
    private static String peerSubject(int port) throws Exception {
        Tools.Result r = Tools.run(Duration.ofSeconds(20), new byte[0], List.of("openssl", "s_client", "-connect",
                "127.0.0.1:" + port, "-cert", cert("client.crt"), "-key", cert("client.key"), "-CAfile",
                cert("ca.crt"), "-brief"));
        return r.stdout() + r.stderr();
    }

    private static Tools.Result cli(int port, boolean clientCertificate, String... args) throws Exception {
        return Tools.run(Duration.ofSeconds(30), null, cliCommand(port, clientCertificate, args));
    }

    private static List<String> cliCommand(int port, boolean clientCertificate, String... args) {
        List<String> cmd = new ArrayList<>(List.of("redis-cli", "-p", Integer.toString(port), "--tls", "--cacert",
                cert("ca.crt")));
        if (clientCertificate) {
            cmd.addAll(List.of("--cert", cert("client.crt"), "--key", cert("client.key")));
        }
        cmd.addAll(List.of(args));
        return cmd;
    }

    /** A key and a certificate for {@code cn}, signed by the test CA, valid for 127.0.0.1 and localhost. */
    private static void certificate(String name, String cn) throws Exception {
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".csr", "-subj",
                "/CN=" + cn);
        Files.writeString(certs.resolve(name + ".ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
        openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", name + ".crt", "-days", "2", "-extfile", name + ".ext");
    }

    private static void openssl(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("openssl"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(certs.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as("%s: %s", cmd, out).isZero();
    }

    private static String cert(String name) {
        return certs.resolve(name).toString();
    }

    /** {@code size} pseudo-random letters. */
    private static byte[] text(int size) {
        byte[] v = new byte[size];
        java.util.SplittableRandom random = new java.util.SplittableRandom(11);
        for (int i = 0; i < size; i++) {
            v[i] = (byte) ('a' + random.nextInt(26));
        }
        return v;
    }

    /** The JDK's TLS with the test's client certificate, trusting the test CA. */
    private static javax.net.ssl.SSLContext clientSsl() throws Exception {
        java.security.cert.CertificateFactory x509 = java.security.cert.CertificateFactory.getInstance("X.509");
        java.security.cert.Certificate ca;
        java.security.cert.Certificate client;
        try (var in = Files.newInputStream(certs.resolve("ca.crt"))) {
            ca = x509.generateCertificate(in);
        }
        try (var in = Files.newInputStream(certs.resolve("client.crt"))) {
            client = x509.generateCertificate(in);
        }
        String pem = Files.readString(certs.resolve("client.key")).replaceAll("-----[A-Z ]+-----", "")
                .replaceAll("\\s", "");
        java.security.PrivateKey key = java.security.KeyFactory.getInstance("RSA")
                .generatePrivate(new java.security.spec.PKCS8EncodedKeySpec(java.util.Base64.getDecoder().decode(pem)));
        java.security.KeyStore store = java.security.KeyStore.getInstance("PKCS12");
        store.load(null, null);
        store.setCertificateEntry("ca", ca);
        store.setKeyEntry("client", key, new char[0], new java.security.cert.Certificate[] {client});
        javax.net.ssl.KeyManagerFactory keys = javax.net.ssl.KeyManagerFactory.getInstance(
                javax.net.ssl.KeyManagerFactory.getDefaultAlgorithm());
        keys.init(store, new char[0]);
        javax.net.ssl.TrustManagerFactory trust = javax.net.ssl.TrustManagerFactory.getInstance(
                javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
        trust.init(store);
        javax.net.ssl.SSLContext ssl = javax.net.ssl.SSLContext.getInstance("TLS");
        ssl.init(keys.getKeyManagers(), trust.getTrustManagers(), null);
        return ssl;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
