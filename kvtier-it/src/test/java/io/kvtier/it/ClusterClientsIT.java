package io.kvtier.it;

import static io.kvtier.it.RawReply.fields;
import static io.kvtier.it.RawReply.text;
import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import io.lettuce.core.cluster.models.partitions.Partitions;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisCluster;

/**
 * Cluster-aware clients (redis-cli -c, redis-py's RedisCluster, Lettuce's and Jedis' cluster clients) and
 * cluster-unaware ones (plain Jedis through a node's proxy) against one real three-node cluster, --replicas 1;
 * plus the MOVED redirect a cluster-aware connection gets and the CLUSTER NODES/SHARDS topology. Each test writes
 * its own key prefix, so the tests share the cluster without meeting.
 */
class ClusterClientsIT {
    private static final Path PY_SCRIPT = KvtierProcess.ROOT.resolve("kvtier-it/src/test/python/cluster_client.py");
    private static final Duration TOOL_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(5);
    private static final int SLOTS = 16384;
    private static final Pattern NODE_ID = Pattern.compile("[0-9a-f]{40}");

    @TempDir
    static Path tmp;
    static TestCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = TestCluster.start(tmp, 3, 0);
    }

    @AfterAll
    static void killCluster() throws InterruptedException {
        if (cluster != null) {
            cluster.close(); // kill -9: nothing to keep
        }
    }

    private static int port(int node) {
        return cluster.nodes.get(node).port();
    }

    @Test
    void redisCliFollowsTheClusterAcrossNodes() throws IOException, InterruptedException {
        Map<String, String> values = new LinkedHashMap<>();
        for (int i = 0; i < 50; i++) {
            values.put("cli:" + i, "value-" + i + "-" + Integer.toHexString(i * 7919));
        }
        StringBuilder sets = new StringBuilder();
        values.forEach((k, v) -> sets.append("SET ").append(k).append(' ').append(v).append('\n'));
        assertThat(cliScript(port(0), sets.toString())).isEqualTo("OK\n".repeat(values.size()));

        StringBuilder gets = new StringBuilder();
        values.keySet().forEach(k -> gets.append("GET ").append(k).append('\n'));
        String expected = String.join("\n", values.values()) + "\n";
        assertThat(cliScript(port(1), gets.toString())).isEqualTo(expected);
        assertThat(cliScript(port(2), gets.toString())).isEqualTo(expected);

        assertThat(cli(port(1), "-c", "GET", "cli:7")).isEqualTo(values.get("cli:7") + "\n");
        assertThat(cli(port(2), "CLUSTER", "KEYSLOT", "foo")).isEqualTo("12182\n");
        String userA = cli(port(0), "CLUSTER", "KEYSLOT", "{user}.a");
        assertThat(userA).isEqualTo(cli(port(1), "CLUSTER", "KEYSLOT", "{user}.b"))
                .isEqualTo(SlotHash.getSlot("user") + "\n");
    }

    @Test
    void redisPyClusterClientRoundTripsValuesUpToOneMebibyte() throws IOException, InterruptedException {
        int keys = 200;
        Tools.Result r = Tools.run(TOOL_TIMEOUT, "/usr/bin/python3", PY_SCRIPT.toString(), "--port",
                Integer.toString(port(0)), "--keys", Integer.toString(keys), "--seed", "11");
        String summary = r.stdout().strip();
        assertThat(r.exitCode()).as("exit code; stdout %s; stderr %s", summary, r.stderr()).isZero();

        assertThat(summary).contains("\"errors\": []", "\"mset_ok\": true", "\"mget_equal\": true");
        assertThat(field(summary, "nodes")).isEqualTo(3);
        // Not get_primaries(): redis-py labels a node by its role in the last CLUSTER SLOTS entry naming it, and every
        // kvtier node is a primary for some slots and a backup for others.
        assertThat(field(summary, "key_owners")).as("keys spread over every primary").isEqualTo(3);
        assertThat(field(summary, "sets")).isEqualTo(keys);
        assertThat(field(summary, "mismatches")).isZero();
        assertThat(field(summary, "bytes_read")).isEqualTo(field(summary, "bytes_written"))
                .isGreaterThan(1L << 20);
        assertThat(field(summary, "mget_missing")).isEqualTo(10);
        assertThat(field(summary, "deleted")).isEqualTo(keys + 50);
        assertThat(field(summary, "misses_after_delete")).isEqualTo(keys + 50);
    }

    @Test
    void lettuceClusterClientSeesEverySlotAndRoundTripsKeys() {
        ClientResources resources = DefaultClientResources.builder().ioThreadPoolSize(2)
                .computationThreadPoolSize(2).build();
        RedisClusterClient client = RedisClusterClient.create(resources, RedisURI.create("127.0.0.1", port(0)));
        client.setOptions(ClusterClientOptions.builder().build());
        client.setDefaultTimeout(CLIENT_TIMEOUT);
        try (StatefulRedisClusterConnection<String, String> conn = client.connect()) {
            Partitions partitions = client.getPartitions();
            assertThat(partitions.size()).isEqualTo(3);
            assertThat(partitions.stream().map(n -> n.getUri().getPort()).toList())
                    .containsExactlyInAnyOrder(port(0), port(1), port(2));
            int[] owners = new int[SLOTS];
            for (RedisClusterNode n : partitions) {
                assertThat(n.getNodeId()).matches(NODE_ID);
                n.getSlots().forEach(s -> owners[s]++);
            }
            assertThat(IntStream.of(owners).filter(c -> c != 1).count()).as("slots not owned exactly once")
                    .isZero();

            RedisAdvancedClusterCommands<String, String> sync = conn.sync();
            Set<Integer> primaryPorts = new HashSet<>();
            for (int i = 0; i < 200; i++) {
                assertThat(sync.set("lettuce:" + i, "v" + i)).isEqualTo("OK");
                primaryPorts.add(partitions.getMasterBySlot(SlotHash.getSlot("lettuce:" + i)).getUri().getPort());
            }
            assertThat(primaryPorts).as("keys spread over every primary").hasSize(3);
            for (int i = 0; i < 200; i++) {
                assertThat(sync.get("lettuce:" + i)).isEqualTo("v" + i);
            }
            assertThat(sync.del(IntStream.range(0, 200).mapToObj(i -> "lettuce:" + i).toArray(String[]::new)))
                    .isEqualTo(200);
        } finally {
            client.shutdown(0, 5, TimeUnit.SECONDS);
            resources.shutdown(0, 5, TimeUnit.SECONDS);
        }
    }

    /**
     * Issue 29: a script sent to a node that is not its slot's primary answers -MOVED on every connection (it said
     * "scripts are not proxied" unless that very connection had asked for the topology, which cluster clients do on
     * another one), so cluster clients run scripts on any key; and every node lists itself as myself.
     */
    @Test
    void scriptsAnswerMovedOnEveryConnectionAndClusterClientsRunThem() {
        int moved = 0;
        for (int n = 0; n < 3; n++) {
            try (Jedis topology = new Jedis("127.0.0.1", port(n), (int) CLIENT_TIMEOUT.toMillis());
                    Jedis plain = new Jedis("127.0.0.1", port(n), (int) CLIENT_TIMEOUT.toMillis())) {
                assertThat(topology.clusterNodes().lines().filter(l -> l.contains("myself")).count()).isEqualTo(1);
                for (int i = 0; i < 20; i++) {
                    try {
                        assertThat(plain.eval("return KEYS[1]", 1, "ev:" + i)).isEqualTo("ev:" + i);
                    } catch (redis.clients.jedis.exceptions.JedisMovedDataException e) {
                        moved++;
                    }
                }
            }
        }
        assertThat(moved).as("scripts sent to another slot's node").isGreaterThan(0);
        Set<HostAndPort> seeds = Set.of(new HostAndPort("127.0.0.1", port(0)));
        try (JedisCluster jc = new JedisCluster(seeds, (int) CLIENT_TIMEOUT.toMillis())) {
            for (int i = 0; i < 50; i++) {
                assertThat(jc.eval("redis.call('set', KEYS[1], ARGV[1]) return redis.call('get', KEYS[1])", 1,
                        "ev:" + i, "v" + i)).isEqualTo("v" + i);
            }
        }
    }

    @Test
    void jedisClusterRoundTripsKeys() {
        Set<HostAndPort> seeds = Set.of(new HostAndPort("127.0.0.1", port(0)), new HostAndPort("127.0.0.1", port(1)),
                new HostAndPort("127.0.0.1", port(2)));
        try (JedisCluster jc = new JedisCluster(seeds, (int) CLIENT_TIMEOUT.toMillis())) {
            assertThat(jc.getClusterNodes()).hasSize(3);
            for (int i = 0; i < 100; i++) {
                assertThat(jc.set("jc:" + i, "v" + i)).isEqualTo("OK");
            }
            for (int i = 0; i < 100; i++) {
                assertThat(jc.get("jc:" + i)).isEqualTo("v" + i);
            }
            for (int i = 0; i < 100; i++) {
                assertThat(jc.del("jc:" + i)).isEqualTo(1);
            }
            assertThat(jc.exists("jc:0")).isFalse();
        }
    }

    @Test
    void kvCachePrefixAndLookupAreSplitByOwnerAndMergedInRequestOrder() {
        List<String> chunks = IntStream.range(0, 12).mapToObj(i -> "kvc-model@1@0@" + Integer.toHexString(i * 40503)
                + "@bfloat16").toList();
        try (Jedis plain = new Jedis("127.0.0.1", port(2), (int) CLIENT_TIMEOUT.toMillis())) {
            for (int i = 0; i < chunks.size(); i++) {
                if (i != 8) {
                    assertThat(plain.set(chunks.get(i), "chunk-" + i)).isEqualTo("OK");
                }
            }
            String[] all = chunks.toArray(String[]::new);
            String nodes;
            try (Jedis topology = new Jedis("127.0.0.1", port(0), (int) CLIENT_TIMEOUT.toMillis())) {
                nodes = topology.clusterNodes(); // a connection asking for the topology counts as cluster-aware
            }
            long owners = chunks.stream().map(k -> ownerOf(nodes, SlotHash.getSlot(k))).distinct().count();
            assertThat(owners).as("the chunks live on several primaries").isGreaterThan(1);

            assertThat(plain.sendCommand(() -> "KVC.PREFIX".getBytes(StandardCharsets.UTF_8), all)).isEqualTo(8L);
            assertThat(plain.sendCommand(() -> "KVC.PREFIX".getBytes(StandardCharsets.UTF_8),
                    chunks.subList(9, 12).toArray(String[]::new))).isEqualTo(3L);
            @SuppressWarnings("unchecked")
            List<Object> tiers = (List<Object>) plain.sendCommand(() -> "KVC.LOOKUP".getBytes(StandardCharsets.UTF_8),
                    all);
            for (int i = 0; i < chunks.size(); i++) {
                assertThat(tiers.get(i) == null ? null : new String((byte[]) tiers.get(i), StandardCharsets.UTF_8))
                        .as("tier of chunk " + i).isEqualTo(i == 8 ? null : "memory");
            }
        }
    }

    /** The node id serving {@code slot} as primary, from CLUSTER NODES text. */
    private static String ownerOf(String clusterNodes, int slot) {
        for (String line : clusterNodes.split("\n")) {
            String[] f = line.trim().split(" ");
            for (int i = 8; i < f.length; i++) {
                String[] range = f[i].split("-");
                int lo = Integer.parseInt(range[0]);
                int hi = range.length > 1 ? Integer.parseInt(range[1]) : lo;
                if (slot >= lo && slot <= hi && f[2].contains("master")) {
                    return f[0];
                }
            }
        }
        throw new AssertionError("no primary for slot " + slot);
    }

    @Test
    void clusterUnawareClientIsServedThroughTheProxy() {
        int timeout = (int) CLIENT_TIMEOUT.toMillis();
        try (Jedis two = new Jedis("127.0.0.1", port(1), timeout)) {
            for (int i = 0; i < 100; i++) {
                assertThat(two.set("plain:" + i, "v" + i)).isEqualTo("OK");
            }
            for (int i = 0; i < 100; i++) {
                assertThat(two.get("plain:" + i)).isEqualTo("v" + i);
            }
            List<String> keys = IntStream.range(0, 20).mapToObj(i -> "plain:m:" + i).toList();
            assertThat(keys.stream().map(SlotHash::getSlot).distinct().count()).isEqualTo(20);
            List<String> pairs = new ArrayList<>();
            keys.forEach(k -> pairs.addAll(List.of(k, "m-" + k)));
            assertThat(two.mset(pairs.toArray(String[]::new))).isEqualTo("OK");
            assertThat(two.mget(keys.toArray(String[]::new))).isEqualTo(keys.stream().map(k -> "m-" + k).toList());
            List<String> withMissing = new ArrayList<>(keys);
            withMissing.add(3, "plain:missing");
            assertThat(two.exists(withMissing.toArray(String[]::new))).isEqualTo(20);

            try (Jedis three = new Jedis("127.0.0.1", port(2), timeout)) {
                for (int i = 0; i < 100; i++) {
                    assertThat(three.get("plain:" + i)).isEqualTo("v" + i);
                }
                assertThat(three.mget(keys.toArray(String[]::new)))
                        .isEqualTo(keys.stream().map(k -> "m-" + k).toList());
            }
            assertThat(two.del(keys.toArray(String[]::new))).isEqualTo(20);
            assertThat(two.exists(keys.toArray(String[]::new))).isZero();
            assertThat(two.mget(keys.toArray(String[]::new))).containsOnlyNulls().hasSize(20);
        }
    }

    @Test
    void clusterAwareConnectionIsRedirectedToThePrimary() throws IOException {
        try (RawConnection one = new RawConnection(port(0))) {
            int[] primaryPort = primaryPortsFromClusterSlots(one.call("CLUSTER", "SLOTS"));
            String key = IntStream.range(0, 1000).mapToObj(i -> "moved:" + i)
                    .filter(k -> primaryPort[SlotHash.getSlot(k)] != port(0)).findFirst().orElseThrow();
            int slot = SlotHash.getSlot(key);
            RawReply moved = one.call("GET", key);
            assertThat(moved.isError()).as(moved.escaped()).isTrue();
            assertThat(text(moved)).isEqualTo("MOVED " + slot + " 127.0.0.1:" + primaryPort[slot]);

            String local = IntStream.range(0, 1000).mapToObj(i -> "local:" + i)
                    .filter(k -> primaryPort[SlotHash.getSlot(k)] == port(0)).findFirst().orElseThrow();
            assertThat(text(one.call("SET", local, "here"))).isEqualTo("OK");
            assertThat(one.call("GET", local).bulk()).isEqualTo("here".getBytes(StandardCharsets.UTF_8));

            try (RawConnection readOnly = new RawConnection(port(0))) {
                assertThat(text(readOnly.call("READONLY"))).isEqualTo("OK");
                int[] backupPort = backupPortsFromClusterSlots(one.call("KVT.SLOTS"));
                String elsewhere = IntStream.range(0, 1000).mapToObj(i -> "readonly:" + i)
                        .filter(k -> primaryPort[SlotHash.getSlot(k)] != port(0)
                                && backupPort[SlotHash.getSlot(k)] != port(0)).findFirst().orElseThrow();
                int s = SlotHash.getSlot(elsewhere);
                assertThat(text(readOnly.call("GET", elsewhere))).as("no copy on this node")
                        .isEqualTo("MOVED " + s + " 127.0.0.1:" + primaryPort[s]);
            }
            try (RawConnection plain = new RawConnection(port(0))) {
                assertThat(plain.call("GET", key).bulk()).as("a cluster-unaware connection is proxied").isNull();
                assertThat(plain.call("DEL", local).integer()).isEqualTo(1);
            }
        }
    }

    /**
     * A transaction runs where its slot's primary is: queued there, refused at queue time elsewhere (MOVED, and EXEC
     * then answers EXECABORT), CROSSSLOT when its keys span slots, and its writes reach the backup together.
     */
    @Test
    void transactionsRunOnTheirSlotsPrimaryAndReachTheBackup() throws IOException {
        try (RawConnection one = new RawConnection(port(0))) {
            int[] primaryPort = primaryPortsFromClusterSlots(one.call("CLUSTER", "SLOTS"));
            int[] backupPort = backupPortsFromClusterSlots(one.call("KVT.SLOTS"));
            String tag = IntStream.range(0, 1000).mapToObj(i -> "{tx" + i + "}")
                    .filter(k -> primaryPort[SlotHash.getSlot(k)] == port(0)).findFirst().orElseThrow();
            assertThat(text(one.call("MULTI"))).isEqualTo("OK");
            assertThat(text(one.call("SET", tag + "a", "1"))).isEqualTo("QUEUED");
            assertThat(text(one.call("SET", tag + "b", "2"))).isEqualTo("QUEUED");
            assertThat(text(one.call("DEL", tag + "gone"))).isEqualTo("QUEUED");
            RawReply exec = one.call("EXEC");
            assertThat(exec.escaped()).isEqualTo("*3\\r\\n+OK\\r\\n+OK\\r\\n:0\\r\\n");
            int backup = backupPort[SlotHash.getSlot(tag)];
            try (RawConnection replica = new RawConnection(backup)) {
                assertThat(text(replica.call("READONLY"))).isEqualTo("OK");
                assertThat(replica.call("GET", tag + "a").bulk()).as("replicated before EXEC answered")
                        .isEqualTo("1".getBytes(StandardCharsets.UTF_8));
                assertThat(replica.call("GET", tag + "b").bulk()).isEqualTo("2".getBytes(StandardCharsets.UTF_8));
            }

            String elsewhere = IntStream.range(0, 1000).mapToObj(i -> "txmoved:" + i)
                    .filter(k -> primaryPort[SlotHash.getSlot(k)] != port(0)).findFirst().orElseThrow();
            int slot = SlotHash.getSlot(elsewhere);
            assertThat(text(one.call("MULTI"))).isEqualTo("OK");
            assertThat(text(one.call("SET", elsewhere, "x"))).isEqualTo("MOVED " + slot + " 127.0.0.1:"
                    + primaryPort[slot]);
            assertThat(text(one.call("EXEC"))).startsWith("EXECABORT");
            assertThat(text(one.call("WATCH", elsewhere))).startsWith("MOVED " + slot);

            String[] local = IntStream.range(0, 1000).mapToObj(i -> "txlocal:" + i)
                    .filter(k -> primaryPort[SlotHash.getSlot(k)] == port(0)).limit(2).toArray(String[]::new);
            assertThat(text(one.call("MULTI"))).isEqualTo("OK");
            assertThat(text(one.call("SET", local[0], "x"))).isEqualTo("QUEUED");
            assertThat(text(one.call("SET", local[1], "y"))).isEqualTo("QUEUED");
            assertThat(text(one.call("EXEC"))).isEqualTo("CROSSSLOT Keys in request don't hash to the same slot");
            assertThat(one.call("EXISTS", local[0]).integer()).as("nothing of it ran").isZero();
            assertThat(one.call("DEL", tag + "a", tag + "b").integer()).isEqualTo(2);

            String remoteTag = IntStream.range(0, 1000).mapToObj(i -> "{txr" + i + "}")
                    .filter(k -> primaryPort[SlotHash.getSlot(k)] != port(0)).findFirst().orElseThrow();
            try (RawConnection plain = new RawConnection(port(0))) {
                assertThat(text(plain.call("MULTI"))).isEqualTo("OK");
                assertThat(text(plain.call("SET", remoteTag + "a", "forwarded"))).isEqualTo("QUEUED");
                assertThat(text(plain.call("GET", remoteTag + "a"))).isEqualTo("QUEUED");
                assertThat(plain.call("EXEC").escaped()).as("a cluster-unaware client's transaction is forwarded whole")
                        .isEqualTo("*2\\r\\n+OK\\r\\n$9\\r\\nforwarded\\r\\n");
                try (RawConnection owner = new RawConnection(primaryPort[SlotHash.getSlot(remoteTag)])) {
                    assertThat(owner.call("GET", remoteTag + "a").bulk())
                            .isEqualTo("forwarded".getBytes(StandardCharsets.UTF_8));
                }
                assertThat(text(plain.call("MULTI"))).isEqualTo("OK");
                assertThat(text(plain.call("SET", remoteTag + "a", "x"))).isEqualTo("QUEUED");
                assertThat(text(plain.call("SET", tag + "a", "y"))).isEqualTo("QUEUED");
                assertThat(text(plain.call("EXEC"))).isEqualTo("CROSSSLOT Keys in request don't hash to the same slot");
                assertThat(plain.call("DEL", remoteTag + "a").integer()).isEqualTo(1);
            }
        }
    }

    @Test
    void replicationFromAnOlderSlotTableEpochIsRefused() throws IOException {
        try (RawConnection peer = new RawConnection(port(1))) {
            long epoch = Long.parseLong(TestCluster.status(cluster.nodes.get(1)).get("cluster_current_epoch"));
            RawReply stale = peer.call("KVT.REPL", Long.toString(epoch - 1), "1", "stale:key", "0",
                    "from-an-old-primary");
            assertThat(stale.isError()).as(stale.escaped()).isTrue();
            assertThat(text(stale)).startsWith("STALE epoch " + (epoch - 1) + " is older than this node's " + epoch);
            // The epoch before the current one, not a fixed 1: a cluster whose three founders were included in one
            // table is at epoch 1 (CI saw it), and epoch 1 is then current, not stale.
            RawReply staleDelete = peer.call("KVT.RDEL", Long.toString(epoch - 1), "1", "stale:key");
            assertThat(text(staleDelete)).startsWith("STALE epoch " + (epoch - 1) + " ");
        }
        try (Jedis plain = new Jedis("127.0.0.1", port(1), (int) CLIENT_TIMEOUT.toMillis())) {
            assertThat(plain.get("stale:key")).as("the refused state was not stored").isNull();
        }
    }

    /**
     * A state delivered late, after a newer one of the same key (a TCP segment held up in a partition, a primary
     * retrying an old write), is refused by its version whatever the clocks say, and does not overwrite the newer one.
     */
    @Test
    void anOlderStateVersionIsRefusedAndDoesNotOverwriteANewerOne() throws IOException {
        try (RawConnection peer = new RawConnection(port(1))) {
            long epoch = Long.parseLong(TestCluster.status(cluster.nodes.get(1)).get("cluster_current_epoch"));
            String stamp = epoch + ":" + (System.currentTimeMillis() + 60_000); // well within its deadline
            long newer = (epoch << 32) + 2_000_000_000L;
            assertThat(text(peer.call("KVT.REPL", stamp, Long.toString(newer), "versioned:key", "0", "newer")))
                    .isEqualTo("OK");
            RawReply older = peer.call("KVT.REPL", stamp, Long.toString(newer - 1), "versioned:key", "0", "older");
            assertThat(text(older)).startsWith("STALEVERSION " + newer + " state version " + (newer - 1) + " ");
            RawReply olderDelete = peer.call("KVT.RDEL", stamp, Long.toString(newer - 1), "versioned:key");
            assertThat(text(olderDelete)).startsWith("STALEVERSION " + newer + " ");
            RawReply olderUnit = peer.call("KVT.REPLM", stamp, Long.toString(newer - 1), "versioned:key", "0",
                    "older", "versioned:other", "0", "x");
            assertThat(text(olderUnit)).startsWith("STALEVERSION " + newer + " ");
            RawReply held = peer.call("KVT.PEEK", Long.toString(epoch), "versioned:key");
            assertThat(held.escaped()).as("the state node 2 holds").endsWith("$5\\r\\nnewer\\r\\n");
            assertThat(peer.call("KVT.PEEK", Long.toString(epoch), "versioned:other").escaped())
                    .as("no key of a refused unit was applied").endsWith("$-1\\r\\n");
            assertThat(text(peer.call("KVT.RDEL", stamp, Long.toString(newer + 1), "versioned:key")))
                    .isEqualTo("OK");
        }
    }

    /**
     * A deadline at the bottom of the long range once overflowed the lateness check into "early", and the write ran
     * (found writing PeerStampFuzzTest's oracle; PeerStampTest has the unit case).
     */
    @Test
    void replicationPastItsDeadlineIsRefusedHoweverFarPastAndAMalformedStampIsNotAnInteger() throws IOException {
        try (RawConnection peer = new RawConnection(port(1))) {
            String epoch = TestCluster.status(cluster.nodes.get(1)).get("cluster_current_epoch");
            for (String deadline : new String[] {"1", "-9223372036854775808"}) {
                RawReply late = peer.call("KVT.REPL", epoch + ":" + deadline, "1", "late:key", "0",
                        "given-up-on");
                assertThat(text(late)).as(deadline).startsWith("TRYAGAIN request arrived ");
            }
            RawReply malformed = peer.call("KVT.REPL", epoch + ":1:2", "1", "late:key", "0", "given-up-on");
            assertThat(text(malformed)).isEqualTo("ERR value is not an integer or out of range");
        }
        try (Jedis plain = new Jedis("127.0.0.1", port(1), (int) CLIENT_TIMEOUT.toMillis())) {
            assertThat(plain.get("late:key")).as("the refused state was not stored").isNull();
        }
    }

    @Test
    void clusterNodesAndShardsCoverEverySlotOnce() throws IOException {
        try (Jedis one = new Jedis("127.0.0.1", port(0), (int) CLIENT_TIMEOUT.toMillis())) {
            List<String> lines = one.clusterNodes().lines().filter(l -> !l.isBlank()).toList();
            assertThat(lines).hasSize(3);
            assertThat(lines).filteredOn(l -> l.split(" ")[2].contains("myself")).singleElement()
                    .satisfies(l -> assertThat(l).startsWith(one.clusterMyId() + " ")
                            .contains(" 127.0.0.1:" + port(0) + "@"));
            int[] owners = new int[SLOTS];
            Set<Integer> ports = new HashSet<>();
            for (String line : lines) {
                String[] f = line.split(" ");
                assertThat(f[0]).matches(NODE_ID);
                int resp = Integer.parseInt(f[1].substring(f[1].indexOf(':') + 1, f[1].indexOf('@')));
                ports.add(resp);
                int node = IntStream.range(0, 3).filter(i -> port(i) == resp).findFirst().orElseThrow();
                assertThat(f[1]).as("every node's bus port, peers' too").endsWith("@" + cluster.clusterPort(node));
                for (int i = 8; i < f.length; i++) {
                    String[] range = f[i].split("-");
                    int from = Integer.parseInt(range[0]);
                    int to = Integer.parseInt(range[range.length - 1]);
                    IntStream.rangeClosed(from, to).forEach(s -> owners[s]++);
                }
            }
            assertThat(ports).containsExactlyInAnyOrder(port(0), port(1), port(2));
            assertThat(IntStream.of(owners).filter(c -> c != 1).count()).as("slots not in exactly one node's ranges")
                    .isZero();
        }
        try (RawConnection two = new RawConnection(port(1))) {
            RawReply shards = two.call("CLUSTER", "SHARDS");
            int[] covered = new int[SLOTS];
            Set<Integer> primaries = new HashSet<>();
            for (RawReply shard : shards.children()) {
                Map<String, RawReply> fields = fields(shard);
                List<RawReply> bounds = fields.get("slots").children();
                for (int i = 0; i < bounds.size(); i += 2) {
                    IntStream.rangeClosed((int) bounds.get(i).integer(), (int) bounds.get(i + 1).integer())
                            .forEach(s -> covered[s]++);
                }
                List<Map<String, RawReply>> nodes = fields.get("nodes").children().stream()
                        .map(RawReply::fields).toList();
                assertThat(nodes).extracting(n -> text(n.get("role"))).as("a shard is one primary (docs/adr/0004)")
                        .containsExactly("master");
                primaries.add((int) nodes.get(0).get("port").integer());
            }
            assertThat(shards.children()).hasSize(3);
            assertThat(primaries).containsExactlyInAnyOrder(port(0), port(1), port(2));
            assertThat(IntStream.of(covered).filter(c -> c != 1).count()).as("slots not in exactly one shard")
                    .isZero();
        }
    }

    @Test
    void flushAllFromAPlainConnectionEmptiesEveryNode() throws IOException {
        try (Jedis three = new Jedis("127.0.0.1", port(2), (int) CLIENT_TIMEOUT.toMillis())) {
            for (int i = 0; i < 60; i++) {
                three.set("flush:" + i, "v" + i);
            }
            int slot = SlotHash.getSlot("flush:0");
            int primary;
            try (RawConnection raw = new RawConnection(port(2))) {
                primary = primaryPortsFromClusterSlots(raw.call("CLUSTER", "SLOTS"))[slot];
            }
            try (Jedis owner = new Jedis("127.0.0.1", primary, (int) CLIENT_TIMEOUT.toMillis())) {
                assertThat(owner.clusterCountKeysInSlot(slot)).isEqualTo(1);
                assertThat(owner.clusterGetKeysInSlot(slot, 100)).containsExactly("flush:0");
            }
            assertThat(three.flushAll()).isEqualTo("OK");
            for (int n = 0; n < 3; n++) {
                try (Jedis node = new Jedis("127.0.0.1", port(n), (int) CLIENT_TIMEOUT.toMillis())) {
                    assertThat(node.dbSize()).as("keys left on node %d", n + 1).isZero();
                }
            }
            assertThat(three.get("flush:0")).isNull();
        }
    }

    /** Slot to the RESP port of its primary, from a CLUSTER SLOTS reply. */
    private static int[] primaryPortsFromClusterSlots(RawReply slots) {
        int[] primary = new int[SLOTS];
        for (RawReply range : slots.children()) {
            List<RawReply> f = range.children();
            int port = (int) f.get(2).children().get(1).integer();
            IntStream.rangeClosed((int) f.get(0).integer(), (int) f.get(1).integer()).forEach(s -> primary[s] = port);
        }
        assertThat(Arrays.stream(primary).filter(p -> p == 0).count()).as("slots without a primary").isZero();
        return primary;
    }

    /** Slot to the RESP port of its one backup (--replicas 1), from a KVT.SLOTS reply. */
    private static int[] backupPortsFromClusterSlots(RawReply slots) {
        int[] backup = new int[SLOTS];
        for (RawReply range : slots.children()) {
            List<RawReply> f = range.children();
            assertThat(f).as("slots %s..: primary and one backup", text(f.get(0))).hasSize(4);
            int port = (int) f.get(3).children().get(1).integer();
            IntStream.rangeClosed((int) f.get(0).integer(), (int) f.get(1).integer()).forEach(s -> backup[s] = port);
        }
        return backup;
    }

    private static long field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\": (\\d+)").matcher(json);
        assertThat(m.find()).as("summary has %s: %s", name, json).isTrue();
        return Long.parseLong(m.group(1));
    }

    private static String cli(int port, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("redis-cli", "-p", Integer.toString(port)));
        cmd.addAll(List.of(args));
        Tools.Result r = Tools.run(TOOL_TIMEOUT, null, cmd);
        assertThat(r.exitCode()).as("%s: %s", cmd, r.stderr()).isZero();
        return r.stdout();
    }

    /** Runs one {@code redis-cli -c} over a script of commands on stdin, one per line. */
    private static String cliScript(int port, String commands) throws IOException, InterruptedException {
        List<String> cmd = List.of("redis-cli", "-c", "-p", Integer.toString(port));
        Tools.Result r = Tools.run(TOOL_TIMEOUT, commands.getBytes(StandardCharsets.UTF_8), cmd);
        assertThat(r.exitCode()).as("%s: %s", cmd, r.stderr()).isZero();
        return r.stdout();
    }
}
