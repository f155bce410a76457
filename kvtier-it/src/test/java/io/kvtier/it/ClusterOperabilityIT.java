package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.json.JSONArray;
import org.json.JSONObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * What an operator sees of a running cluster of real processes: {@code ./kvtier cluster status} (table, JSON and
 * {@code --all}), the cluster's Prometheus metrics, and rebalancing progress while a fourth node joins and copies its
 * share at a throttled {@code --rebalance-rate}. (org.json comes with Jedis.)
 */
class ClusterOperabilityIT {
    private static final int SLOTS = 16384;
    private static final int VALUES = 160;
    private static final int VALUE_BYTES = 128 << 10;

    @TempDir
    Path tmp;

    @Test
    void statusMetricsAndProgressDescribeAClusterAndAJoiningNode() throws Exception {
        int[] metricsPorts = new int[4];
        for (int i = 0; i < metricsPorts.length; i++) {
            metricsPorts[i] = KvtierProcess.freePort();
        }
        try (TestCluster c = TestCluster.startWith(tmp, 3, 1, i -> List.of("--metrics-port",
                Integer.toString(metricsPorts[i])))) {
            KvtierProcess n1 = c.nodes.get(0);
            writeValues(n1); // 20 MiB, replicated: something for the joiner to copy
            statusTableDescribesThreeMembers(n1);
            statusJsonAddsUpToEverySlot(n1);
            metricsMatchClusterInfo(n1, metricsPorts[0]);

            KvtierProcess n4 = c.addWith(List.of("--metrics-port", Integer.toString(metricsPorts[3]),
                    "--rebalance-rate", "1m"));
            joinerReportsItsProgressUntilDone(n4, metricsPorts[3]);
            c.awaitAgreement(4, 60_000);
            everyMemberReportsItselfWithAll(n1);
        }
    }

    @Test
    void statusRefusesANodeThatIsNotInAClusterAndItHasNoClusterMetrics() throws Exception {
        int metricsPort = KvtierProcess.freePort();
        try (KvtierProcess single = KvtierProcess.start(tmp.resolve("single"), "--memory", "16m", "--metrics-port",
                Integer.toString(metricsPort))) {
            Tools.Result r = status(single, "--timeout", "2s");
            assertThat(r.exitCode()).isEqualTo(1);
            assertThat(r.stderr().strip()).isEqualTo("kvtier: 127.0.0.1:" + single.port()
                    + " is not a cluster node: ERR This instance has cluster support disabled");
            assertThat(r.stdout()).isEmpty();
            assertThat(scrape(metricsPort)).contains("kvtier_keys ").doesNotContain("kvtier_cluster_");
        }
        Tools.Result closed = status(KvtierProcess.freePort());
        assertThat(closed.exitCode()).isEqualTo(1);
        assertThat(closed.stderr()).contains("cannot reach 127.0.0.1:").contains("connection refused");
    }

    /**
     * Writes the values through {@code node}. A SET answered -UNREPLICATED (its backup, a JVM started seconds ago, did
     * not confirm within the 1 s peer timeout: seen in CI) or -TRYAGAIN is sent again, as a client treating them as a
     * timeout and a refusal would; a few tries at most.
     */
    private static void writeValues(KvtierProcess node) throws InterruptedException {
        try (Jedis j = new Jedis("127.0.0.1", node.port(), 30_000)) {
            for (int i = 0; i < VALUES; i++) {
                String reply = null;
                for (int attempt = 1; reply == null; attempt++) {
                    try {
                        reply = j.set(("op:" + i).getBytes(), Payloads.make(i, 1, VALUE_BYTES));
                    } catch (redis.clients.jedis.exceptions.JedisDataException e) {
                        boolean retriable = e.getMessage().startsWith("UNREPLICATED ")
                                || e.getMessage().startsWith("TRYAGAIN ");
                        if (!retriable || attempt == 5) {
                            throw e;
                        }
                        Thread.sleep(100);
                    }
                }
                assertThat(reply).isEqualTo("OK");
            }
        }
    }

    private static void statusTableDescribesThreeMembers(KvtierProcess n1) throws Exception {
        Tools.Result r = status(n1);
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        Map<String, String> info = TestCluster.status(n1);
        assertThat(r.stdout()).startsWith("kvtier cluster, as node n1 (127.0.0.1:" + n1.port() + ") sees it")
                .contains("  state        ok, serving\n")
                .contains("  epoch        " + info.get("cluster_current_epoch") + "\n")
                .contains("  members      3, 16384 of 16384 slots have a primary\n")
                .contains("  replication  sync, 1 backup per slot\n")
                .contains("  lag          0 writes not yet on every backup (0 calls, 0 B in flight), oldest 0 ms\n")
                .containsPattern("  n1 \\*    127\\.0\\.0\\.1:" + n1.port() + " +\\d+ +"
                        + info.get("kvtier_slots_primary") + " +[\\d.]+% +" + info.get("kvtier_slots_owned"))
                .containsPattern("  total +16384 +100\\.0% +32768 +100\\.0%");
        System.out.println("kvtier cluster status:\n" + r.stdout());
    }

    private static void statusJsonAddsUpToEverySlot(KvtierProcess n1) throws Exception {
        Tools.Result r = status(n1, "--json");
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        JSONObject status = new JSONObject(r.stdout());
        Map<String, String> info = TestCluster.status(n1);
        assertThat(status.getString("node_id")).isEqualTo("n1");
        assertThat(status.getLong("epoch")).isEqualTo(Long.parseLong(info.get("cluster_current_epoch")));
        assertThat(status.getBoolean("serving")).isTrue();
        JSONArray members = status.getJSONArray("members");
        assertThat(members.length()).isEqualTo(3);
        int primaries = 0;
        int owned = 0;
        for (int i = 0; i < members.length(); i++) {
            JSONObject m = members.getJSONObject(i);
            primaries += m.getInt("primary_slots");
            owned += m.getInt("owned_slots");
            assertThat(m.getString("endpoint")).startsWith("127.0.0.1:");
        }
        assertThat(primaries).isEqualTo(SLOTS);
        assertThat(owned).isEqualTo(2 * SLOTS); // --replicas 1: every slot on two nodes
        JSONObject replication = status.getJSONObject("replication");
        assertThat(replication.getString("mode")).isEqualTo("sync");
        assertThat(replication.getLong("inflight_writes")).isZero(); // the writes are over: nothing left behind
        assertThat(replication.getLong("lag_ms")).isZero();
        assertThat(status.getJSONObject("traffic").getLong("replicated")).isPositive();
        assertThat(status.getJSONObject("rebalance").getString("state")).isIn("idle", "done");
        assertThat(status.getJSONObject("info").getString("cluster_known_nodes")).isEqualTo("3");
    }

    private static void metricsMatchClusterInfo(KvtierProcess n1, int metricsPort) throws Exception {
        Map<String, String> info = TestCluster.status(n1);
        Map<String, Double> m = samples(scrape(metricsPort));
        assertThat(m).containsEntry("kvtier_cluster_members", 3.0)
                .containsEntry("kvtier_cluster_serving", 1.0)
                .containsEntry("kvtier_cluster_replicas", 1.0)
                .containsEntry("kvtier_cluster_epoch", Double.parseDouble(info.get("cluster_current_epoch")))
                .containsEntry("kvtier_cluster_slots_primary", Double.parseDouble(info.get("kvtier_slots_primary")))
                .containsEntry("kvtier_cluster_slots_owned", Double.parseDouble(info.get("kvtier_slots_owned")))
                .containsEntry("kvtier_cluster_slots_importing", 0.0)
                .containsEntry("kvtier_cluster_replication_inflight_writes", 0.0)
                .containsEntry("kvtier_cluster_replication_inflight_calls", 0.0)
                .containsEntry("kvtier_cluster_replication_inflight_bytes", 0.0)
                .containsEntry("kvtier_cluster_replication_lag_seconds", 0.0)
                .containsEntry("kvtier_cluster_replication_failures_total", 0.0)
                .containsEntry("kvtier_cluster_rebalance_rate_bytes", (double) (256L << 20))
                .containsEntry("kvtier_cluster_import_progress_ratio", 1.0)
                .containsEntry("kvtier_cluster_import_running", 0.0)
                .containsKeys("kvtier_cluster_moved_total", "kvtier_cluster_forward_failures_total",
                        "kvtier_cluster_refused_writes_total", "kvtier_cluster_imported_keys_total",
                        "kvtier_cluster_imported_bytes_total", "kvtier_cluster_import_keys",
                        "kvtier_cluster_import_bytes", "kvtier_cluster_import_slots",
                        "kvtier_cluster_import_slots_done", "kvtier_cluster_import_elapsed_seconds");
        assertThat(m.get("kvtier_cluster_replicated_total")).isPositive();
        assertThat(m.get("kvtier_cluster_forwarded_total")).isPositive(); // writes to other nodes' slots via n1
        double primaries = 0;
        for (String member : List.of("n1", "n2", "n3")) {
            primaries += m.get("kvtier_cluster_member_slots{member=\"" + member + "\",role=\"primary\"}");
        }
        assertThat(primaries).isEqualTo(SLOTS);
    }

    /** Polls the joiner while it imports: it reports copying with growing counts, then done with all its slots. */
    private static void joinerReportsItsProgressUntilDone(KvtierProcess n4, int metricsPort) throws Exception {
        List<Map<String, String>> copying = new ArrayList<>();
        Map<String, String> last = Map.of();
        boolean statusSawIt = false;
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (System.nanoTime() < deadline) {
            last = TestCluster.status(n4);
            if (last.get("kvtier_rebalance_state").equals("copying")) {
                copying.add(last);
                if (!statusSawIt) { // once, mid-import: the CLI and /metrics say the same
                    JSONObject json = new JSONObject(status(n4, "--json").stdout());
                    statusSawIt = json.getJSONObject("rebalance").getString("state").matches("copying|done");
                    assertThat(samples(scrape(metricsPort))).containsKey("kvtier_cluster_import_running");
                }
            }
            if (last.get("kvtier_rebalance_state").equals("done")
                    && last.get("kvtier_rebalance_epoch").equals(last.get("cluster_current_epoch"))) {
                break;
            }
            Thread.sleep(100);
        }
        assertThat(last.get("kvtier_rebalance_state")).as(last.toString()).isEqualTo("done");
        assertThat(statusSawIt).isTrue();
        assertThat(copying).as("progress readings while copying").hasSizeGreaterThan(3);
        Map<String, String> mid = copying.get(copying.size() / 2);
        assertThat(Long.parseLong(mid.get("kvtier_rebalance_slots"))).isPositive();
        assertThat(Long.parseLong(mid.get("kvtier_rebalance_sources"))).isBetween(1L, 3L);
        assertThat(Long.parseLong(mid.get("kvtier_rebalance_keys")))
                .isLessThanOrEqualTo(Long.parseLong(last.get("kvtier_rebalance_keys")));
        long slots = Long.parseLong(last.get("kvtier_rebalance_slots"));
        assertThat(slots).isEqualTo(Long.parseLong(last.get("kvtier_slots_owned")));
        assertThat(last.get("kvtier_rebalance_slots_done")).isEqualTo(Long.toString(slots));
        assertThat(last.get("kvtier_rebalance_rate")).isEqualTo(Long.toString(1L << 20));
        long keys = Long.parseLong(last.get("kvtier_rebalance_keys"));
        long bytes = Long.parseLong(last.get("kvtier_rebalance_bytes"));
        long elapsed = Long.parseLong(last.get("kvtier_rebalance_elapsed_ms"));
        assertThat(keys).isPositive();
        assertThat(bytes).isEqualTo(keys * VALUE_BYTES);
        long rate = bytes * 1000 / Math.max(1, elapsed);
        System.out.printf("joiner imported %d slots, %d keys, %d bytes in %d ms (%d bytes/s at --rebalance-rate 1m);"
                + " %d readings while copying%n", slots, keys, bytes, elapsed, rate, copying.size());
        assertThat(rate).as("the copy keeps to --rebalance-rate").isLessThan(3L << 19);
        Map<String, Double> m = samples(scrape(metricsPort));
        assertThat(m).containsEntry("kvtier_cluster_import_progress_ratio", 1.0)
                .containsEntry("kvtier_cluster_import_keys", (double) keys)
                .containsEntry("kvtier_cluster_import_slots_done", (double) slots);
    }

    private static void everyMemberReportsItselfWithAll(KvtierProcess n1) throws Exception {
        Tools.Result r = status(n1, "--all");
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        List<String> nodes = r.stdout().lines().dropWhile(l -> !l.startsWith("  NODE")).skip(1).toList();
        assertThat(nodes).hasSize(4);
        String epoch = TestCluster.status(n1).get("cluster_current_epoch");
        for (String line : nodes) {
            assertThat(line).matches("  n[1-4]( \\*)? +" + epoch + "  yes +0  0 writes, 0 ms +(idle|done at).*");
        }
        assertThat(r.stdout()).contains("  members      4, 16384 of 16384 slots have a primary\n");
    }

    private static Tools.Result status(KvtierProcess node, String... flags) throws Exception {
        return status(node.port(), flags);
    }

    private static Tools.Result status(int port, String... flags) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(KvtierProcess.ROOT.resolve("kvtier").toString(), "cluster",
                "status", "--port", Integer.toString(port)));
        cmd.addAll(List.of(flags));
        return Tools.run(Duration.ofSeconds(60), null, cmd);
    }

    private static String scrape(int metricsPort) throws Exception {
        try (HttpClient http = HttpClient.newHttpClient()) {
            return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPort + "/metrics"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body();
        }
    }

    /** Prometheus text format: sample name with labels, as written, to value. */
    private static Map<String, Double> samples(String body) {
        Map<String, Double> out = new HashMap<>();
        Matcher m = Pattern.compile("(?m)^([a-z_]+(?:\\{[^}]*})?) (\\S+)$").matcher(body);
        while (m.find()) {
            out.put(m.group(1), Double.parseDouble(m.group(2)));
        }
        return out;
    }
}
