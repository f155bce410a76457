package io.kvtier.it;

import static io.kvtier.it.RawReply.fields;
import static io.kvtier.it.RawReply.text;
import static org.assertj.core.api.Assertions.assertThat;

import glide.api.GlideClient;
import glide.api.GlideClusterClient;
import glide.api.models.commands.scan.ClusterScanCursor;
import glide.api.models.commands.scan.ScanOptions;
import glide.api.models.configuration.AdvancedGlideClusterClientConfiguration;
import glide.api.models.configuration.GlideClientConfiguration;
import glide.api.models.configuration.GlideClusterClientConfiguration;
import glide.api.models.configuration.NodeAddress;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * The cluster as clients see it (docs/adr/0004): a three-node cluster with --replicas 1 holding exactly 300 keys,
 * read as a whole by redis-py's RedisCluster, Lettuce's and valkey-glide's cluster clients and redis-cli --cluster:
 * each must meet every key exactly once (a backup's copies are not its node's keyspace), and CLUSTER SLOTS, SHARDS
 * and NODES must describe one and the same topology, compactly. The tests only read: the 300 keys stay as written.
 */
class ClusterTopologyIT {
    private static final Path PY_SCRIPT = KvtierProcess.ROOT.resolve("kvtier-it/src/test/python/cluster_scan.py");
    private static final Duration TOOL_TIMEOUT = Duration.ofSeconds(60);
    private static final int SLOTS = 16384;
    private static final int KEYS = 300;
    /** CLUSTER SLOTS of a three-node cluster must stay small: clients read it at start and after every MOVED. */
    private static final int MAX_SLOTS_REPLY_BYTES = 16 * 1024;

    @TempDir
    static Path tmp;
    static TestCluster cluster;
    static Set<String> written = new HashSet<>();

    @BeforeAll
    static void startClusterWithKeys() throws Exception {
        cluster = TestCluster.start(tmp, 3, 0);
        try (Jedis plain = cluster.nodes.get(0).jedis(5_000)) { // through the node's proxy
            for (int i = 0; i < KEYS; i++) {
                assertThat(plain.set("scan:" + i, "v" + i)).isEqualTo("OK");
                written.add("scan:" + i);
            }
        }
    }

    @AfterAll
    static void killCluster() throws InterruptedException {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static int port(int node) {
        return cluster.nodes.get(node).port();
    }

    @Test
    void redisPyScansEachKeyOnceAndParsesClusterInfo() throws IOException, InterruptedException {
        Tools.Result r = Tools.run(TOOL_TIMEOUT, "/usr/bin/python3", PY_SCRIPT.toString(), "--port",
                Integer.toString(port(1)), "--match", "scan:*");
        String summary = r.stdout().strip();
        assertThat(r.exitCode()).as("exit code; stdout %s; stderr %s", summary, r.stderr()).isZero();

        assertThat(field(summary, "nodes")).isEqualTo(3);
        assertThat(field(summary, "primaries")).as("every node a primary").isEqualTo(3);
        assertThat(field(summary, "replicas")).isZero();
        assertThat(field(summary, "scanned")).isEqualTo(KEYS);
        assertThat(field(summary, "scanned_distinct")).isEqualTo(KEYS);
        assertThat(field(summary, "keys")).isEqualTo(KEYS);
        assertThat(field(summary, "keys_distinct")).isEqualTo(KEYS);
        assertThat(field(summary, "dbsize")).isEqualTo(KEYS);
        assertThat(summary).contains("\"randomkey_found\": true", "\"cluster_state\": \"ok\"",
                "\"cluster_known_nodes\": \"3\"");
    }

    @Test
    void lettuceScansEachKeyOnceAndCountsThemOnce() {
        ClientResources resources = DefaultClientResources.builder().ioThreadPoolSize(2)
                .computationThreadPoolSize(2).build();
        RedisClusterClient client = RedisClusterClient.create(resources,
                io.lettuce.core.RedisURI.create("127.0.0.1", port(2)));
        client.setDefaultTimeout(Duration.ofSeconds(5));
        try (StatefulRedisClusterConnection<String, String> conn = client.connect()) {
            RedisAdvancedClusterCommands<String, String> sync = conn.sync();
            List<String> scanned = new ArrayList<>();
            ScanCursor cursor = ScanCursor.INITIAL;
            do { // Lettuce's cluster SCAN walks one primary after another, its cursor naming the node
                KeyScanCursor<String> page = sync.scan(cursor, ScanArgs.Builder.matches("scan:*").limit(50));
                scanned.addAll(page.getKeys());
                cursor = page;
            } while (!cursor.isFinished());
            assertThat(scanned).hasSize(KEYS).doesNotHaveDuplicates();
            assertThat(new HashSet<>(scanned)).isEqualTo(written);
            assertThat(sync.dbsize()).as("DBSIZE summed over the primaries").isEqualTo(KEYS);
            assertThat(sync.keys("scan:*")).hasSize(KEYS).doesNotHaveDuplicates();
            assertThat(client.getPartitions().size()).isEqualTo(3);
            assertThat(client.getPartitions().stream().filter(n -> n.is(
                    io.lettuce.core.cluster.models.partitions.RedisClusterNode.NodeFlag.UPSTREAM)).count())
                    .isEqualTo(3);
        } finally {
            client.shutdown(0, 5, TimeUnit.SECONDS);
            resources.shutdown(0, 5, TimeUnit.SECONDS);
        }
    }

    @Test
    void glideClusterScanReturnsEachKeyOnce() throws Exception {
        try (GlideClusterClient glide = GlideClusterClient.createClient(GlideClusterClientConfiguration.builder()
                .addresses(cluster.nodes.stream().map(n -> NodeAddress.builder().host("127.0.0.1").port(n.port())
                        .build()).toList())
                .advancedConfiguration(AdvancedGlideClusterClientConfiguration.builder().connectionTimeout(10_000)
                        .build())
                .requestTimeout(10_000).build()).get(60, TimeUnit.SECONDS)) {
            List<String> scanned = new ArrayList<>();
            ClusterScanCursor cursor = ClusterScanCursor.initialCursor();
            ScanOptions options = ScanOptions.builder().matchPattern("scan:*").count(50L).build();
            while (!cursor.isFinished()) {
                Object[] page = glide.scan(cursor, options).get(30, TimeUnit.SECONDS);
                cursor.releaseCursorHandle();
                cursor = (ClusterScanCursor) page[0];
                for (Object key : (Object[]) page[1]) {
                    scanned.add(key.toString());
                }
            }
            assertThat(scanned).hasSize(KEYS).doesNotHaveDuplicates();
            assertThat(new HashSet<>(scanned)).isEqualTo(written);
        }
    }

    /**
     * A cluster-unaware client (LMCache's {@code valkey://} standalone adapter) against one node of the cluster: HELLO
     * says {@code mode cluster}, and every key is served through the node's proxy all the same.
     */
    @Test
    void glideStandaloneClientReadsEveryKeyThroughOneNode() throws Exception {
        try (GlideClient glide = GlideClient.createClient(GlideClientConfiguration.builder()
                .address(NodeAddress.builder().host("127.0.0.1").port(port(0)).build())
                .requestTimeout(10_000).build()).get(60, TimeUnit.SECONDS)) {
            for (int i = 0; i < KEYS; i++) {
                assertThat(glide.get("scan:" + i).get(10, TimeUnit.SECONDS)).isEqualTo("v" + i);
            }
        }
    }

    @Test
    void redisCliClusterCheckCountsEachKeyOnce() throws IOException, InterruptedException {
        Tools.Result r = Tools.run(TOOL_TIMEOUT, "redis-cli", "--cluster", "check", "127.0.0.1:" + port(0));
        assertThat(r.stdout()).as(r.stderr()).contains("[OK] " + KEYS + " keys in 3 masters.",
                "[OK] All 16384 slots covered.");
        assertThat(r.exitCode()).isZero();
    }

    @Test
    void eachNodesKeyspaceIsItsPrimarySlotsAndTheyPartitionTheKeys() throws IOException {
        int[] primary = slotPrimaries();
        Set<String> union = new HashSet<>();
        long total = 0;
        for (int n = 0; n < 3; n++) {
            try (Jedis node = cluster.nodes.get(n).jedis(5_000)) {
                Set<String> keys = node.keys("*");
                int self = port(n);
                assertThat(keys).allMatch(k -> primary[SlotHash.getSlot(k)] == self, "of its own primary slots");
                assertThat(union.stream().filter(keys::contains)).as("keys two nodes list").isEmpty();
                union.addAll(keys);
                assertThat(node.dbSize()).isEqualTo(keys.size());
                total += node.dbSize();
                String random = node.randomKey();
                assertThat(random).isNotNull().matches(k -> primary[SlotHash.getSlot(k)] == self);
            }
        }
        assertThat(total).isEqualTo(KEYS);
        assertThat(union).isEqualTo(written);
    }

    @Test
    void slotsShardsAndNodesDescribeOneCompactTopology() throws IOException {
        try (RawConnection raw = new RawConnection(port(0))) {
            RawReply slots = raw.call("CLUSTER", "SLOTS");
            int bytes = slots.raw().length;
            System.out.printf("CLUSTER SLOTS of 3 nodes: %d ranges, %d bytes%n", slots.children().size(), bytes);
            assertThat(bytes).isLessThan(MAX_SLOTS_REPLY_BYTES);

            // SLOTS: every slot once, one node per range (no replicas), adjacent ranges of one primary merged.
            Map<Integer, List<int[]>> rangesByPort = new HashMap<>();
            int[] covered = new int[SLOTS];
            int lastPort = -1;
            int lastEnd = -2;
            List<int[]> ordered = new ArrayList<>();
            for (RawReply range : slots.children()) {
                List<RawReply> f = range.children();
                assertThat(f).as("start, end and the primary only").hasSize(3);
                int from = (int) f.get(0).integer();
                int to = (int) f.get(1).integer();
                int p = (int) f.get(2).children().get(1).integer();
                IntStream.rangeClosed(from, to).forEach(s -> covered[s]++);
                rangesByPort.computeIfAbsent(p, x -> new ArrayList<>()).add(new int[] {from, to});
                ordered.add(new int[] {from, to, p});
            }
            ordered.sort((a, b) -> Integer.compare(a[0], b[0]));
            for (int[] r : ordered) {
                assertThat(r[2] == lastPort && r[0] == lastEnd + 1).as("range %d-%d not merged with the one before",
                        r[0], r[1]).isFalse();
                lastPort = r[2];
                lastEnd = r[1];
            }
            assertThat(IntStream.of(covered).filter(c -> c != 1).count()).as("slots not listed once").isZero();
            assertThat(rangesByPort.keySet()).containsExactlyInAnyOrder(port(0), port(1), port(2));

            // SHARDS: one shard per node, its only node the master, holding the same ranges SLOTS gives it.
            RawReply shards = raw.call("CLUSTER", "SHARDS");
            assertThat(shards.children()).hasSize(3);
            for (RawReply shard : shards.children()) {
                Map<String, RawReply> fields = fields(shard);
                List<RawReply> nodes = fields.get("nodes").children();
                assertThat(nodes).hasSize(1);
                Map<String, RawReply> node = fields(nodes.get(0));
                assertThat(text(node.get("role"))).isEqualTo("master");
                List<RawReply> bounds = fields.get("slots").children();
                List<int[]> ranges = new ArrayList<>();
                for (int i = 0; i < bounds.size(); i += 2) {
                    ranges.add(new int[] {(int) bounds.get(i).integer(), (int) bounds.get(i + 1).integer()});
                }
                assertThat(ranges).usingElementComparator(ClusterTopologyIT::compareRanges)
                        .containsExactlyInAnyOrderElementsOf(rangesByPort.get((int) node.get("port").integer()));
            }

            // NODES: three masters, none a replica, each with the ranges SLOTS gives it.
            String nodes = new String(raw.call("CLUSTER", "NODES").bulk(), StandardCharsets.UTF_8);
            List<String> lines = nodes.lines().filter(l -> !l.isBlank()).toList();
            assertThat(lines).hasSize(3).allMatch(l -> l.split(" ")[2].endsWith("master"))
                    .noneMatch(l -> l.contains("slave"));
            for (String line : lines) {
                String[] f = line.split(" ");
                int p = Integer.parseInt(f[1].substring(f[1].indexOf(':') + 1, f[1].indexOf('@')));
                List<int[]> ranges = new ArrayList<>();
                for (int i = 8; i < f.length; i++) {
                    String[] range = f[i].split("-");
                    ranges.add(new int[] {Integer.parseInt(range[0]), Integer.parseInt(range[range.length - 1])});
                }
                assertThat(ranges).usingElementComparator(ClusterTopologyIT::compareRanges)
                        .containsExactlyInAnyOrderElementsOf(rangesByPort.get(p));
            }
        }
    }

    @Test
    void helloSaysClusterAndClusterInfoLinesAreNameColonValue() throws IOException {
        try (RawConnection raw = new RawConnection(port(1))) {
            String info = new String(raw.call("CLUSTER", "INFO").bulk(), StandardCharsets.UTF_8);
            assertThat(info.lines().filter(l -> !l.isEmpty()).toList()).isNotEmpty()
                    .allMatch(l -> l.chars().filter(ch -> ch == ':').count() == 1, "exactly one ':' per line");
            assertThat(info).contains("cluster_state:ok", "cluster_known_nodes:3", "cluster_size:3");
            Map<String, RawReply> hello = fields(raw.call("HELLO", "3"));
            assertThat(text(hello.get("mode"))).isEqualTo("cluster");
        }
    }

    /**
     * A node started with an unreachable seed waits for discovery before it forms its cluster (about two seconds):
     * meanwhile its port is open and every keyed command answers -LOADING (clients retry), never a standalone reply.
     */
    @Test
    void aNodeAnswersLoadingUntilItHasJoined() throws Exception {
        int port = KvtierProcess.freePortForTests();
        int clusterPort = KvtierProcess.freePortForTests();
        int deadPort = KvtierProcess.freePortForTests();
        List<String> replies = new CopyOnWriteArrayList<>();
        Thread poller = Thread.ofPlatform().daemon().start(() -> {
            byte[] set = RawConnection.multibulk(List.of("SET".getBytes(), "early".getBytes(), "v".getBytes()));
            while (!Thread.currentThread().isInterrupted()) {
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                    s.setSoTimeout(2_000);
                    s.getOutputStream().write(set);
                    RawReply reply = new RawReplyReader(s.getInputStream()).read();
                    String text = new String(reply.raw(), StandardCharsets.UTF_8).strip();
                    if (replies.isEmpty() || !replies.getLast().equals(text)) {
                        replies.add(text);
                    }
                    if (text.equals("+OK")) {
                        return;
                    }
                } catch (IOException notListening) {
                    // not bound yet
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        try (KvtierProcess node = KvtierProcess.startAt("127.0.0.1", port, List.of(), tmp.resolve("lonely"),
                "--memory", "64m", "--disk", "256m", "--cluster-port", Integer.toString(clusterPort), "--seeds",
                "127.0.0.1:" + clusterPort + ",127.0.0.1:" + deadPort, "--node-id", "lonely", "--voters", "lonely")) {
            poller.join(30_000);
            assertThat(replies).as("replies in order").containsExactly("-LOADING kvtier is joining its cluster",
                    "+OK");
            try (Jedis j = node.jedis(2_000)) {
                assertThat(j.get("early")).isEqualTo("v");
            }
        } finally {
            poller.interrupt();
        }
    }

    /** Slot to the RESP port of its primary, from CLUSTER SLOTS. */
    private static int[] slotPrimaries() throws IOException {
        int[] primary = new int[SLOTS];
        try (RawConnection raw = new RawConnection(port(0))) {
            for (RawReply range : raw.call("CLUSTER", "SLOTS").children()) {
                List<RawReply> f = range.children();
                int p = (int) f.get(2).children().get(1).integer();
                IntStream.rangeClosed((int) f.get(0).integer(), (int) f.get(1).integer()).forEach(s -> primary[s] = p);
            }
        }
        return primary;
    }

    private static int compareRanges(int[] a, int[] b) {
        return a[0] != b[0] ? Integer.compare(a[0], b[0]) : Integer.compare(a[1], b[1]);
    }

    private static long field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\": (\\d+)").matcher(json);
        assertThat(m.find()).as("summary has %s: %s", name, json).isTrue();
        return Long.parseLong(m.group(1));
    }
}
