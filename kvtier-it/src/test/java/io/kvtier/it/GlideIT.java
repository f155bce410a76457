package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import glide.api.GlideClient;
import glide.api.GlideClusterClient;
import glide.api.models.commands.InfoOptions.Section;
import glide.api.models.configuration.AdvancedGlideClusterClientConfiguration;
import glide.api.models.configuration.GlideClientConfiguration;
import glide.api.models.configuration.GlideClusterClientConfiguration;
import glide.api.models.configuration.NodeAddress;
import glide.api.models.configuration.ReadFrom;
import glide.api.models.configuration.RequestRoutingConfiguration.SimpleMultiNodeRoute;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * valkey-glide (its Rust core through JNI, linux-x86_64) against kvtier: the standalone client against one node, and
 * the cluster client against a three-node cluster started as the other cluster tests start theirs.
 */
class GlideIT {
    private static final int TIMEOUT_MILLIS = 5_000;
    private static final int CONNECT_TIMEOUT_MILLIS = 10_000;

    @TempDir
    Path tmp;

    @Test
    void standaloneClientConnectsAndRunsCommands() throws Exception {
        try (KvtierProcess node = KvtierProcess.start(tmp.resolve("node"), "--memory", "64m", "--disk", "256m");
             GlideClient glide = GlideClient.createClient(GlideClientConfiguration.builder()
                     .address(NodeAddress.builder().host("127.0.0.1").port(node.port()).build())
                     .requestTimeout(TIMEOUT_MILLIS).build()).get(30, TimeUnit.SECONDS)) {
            assertThat(glide.set("glide:a", "1").get()).isEqualTo("OK");
            assertThat(glide.set("glide:b", "2").get()).isEqualTo("OK");
            assertThat(glide.get("glide:a").get()).isEqualTo("1");
            assertThat(glide.mget(new String[] {"glide:a", "glide:missing", "glide:b"}).get())
                    .containsExactly("1", null, "2");
            String large = "0123456789abcdef".repeat(3 << 16); // 3 MiB
            assertThat(glide.set("glide:large", large).get()).isEqualTo("OK");
            assertThat(glide.get("glide:large").get()).isEqualTo(large);
            assertThat(glide.del(new String[] {"glide:a", "glide:b", "glide:large", "glide:missing"}).get())
                    .isEqualTo(3L);
            assertThat(glide.get("glide:a").get()).isNull();

            String info = glide.info().get();
            assertThat(info).contains("# Server\r\n", "redis_version:", "role:master", "# Keyspace\r\n");
            assertThat(glide.customCommand(new String[] {"CLIENT", "SETNAME", "glide-it"}).get()).isEqualTo("OK");
            assertThat(glide.clientGetName().get()).isEqualTo("glide-it");
            assertThat(glide.customCommand(new String[] {"CLIENT", "INFO"}).get().toString())
                    .contains(" name=glide-it ", " cmd=client|info ");
        }
    }

    @Test
    void clusterClientConnectsAndWritesAcrossSlots() throws Exception {
        try (TestCluster cluster = TestCluster.start(tmp, 3, 0);
             GlideClusterClient glide = clusterClient(cluster, ReadFrom.PRIMARY);
             GlideClusterClient replicaReads = clusterClient(cluster, ReadFrom.PREFER_REPLICA)) {
            List<String> keys = IntStream.range(0, 200).mapToObj(i -> "glide:" + i).toList();
            Set<Integer> slots = new HashSet<>();
            for (String key : keys) {
                assertThat(glide.set(key, "v-" + key).get()).isEqualTo("OK");
                slots.add(io.lettuce.core.cluster.SlotHash.getSlot(key));
            }
            assertThat(slots).hasSizeGreaterThan(100);
            for (String key : keys) {
                assertThat(glide.get(key).get()).isEqualTo("v-" + key);
                // Backups are not shown as replicas (docs/adr/0004): PREFER_REPLICA falls back to the primary.
                assertThat(replicaReads.get(key).get()).isEqualTo("v-" + key);
            }
            String[] some = keys.subList(0, 20).toArray(String[]::new); // a multi-slot MGET: glide splits it by slot
            assertThat(glide.mget(some).get()).containsExactly(Arrays.stream(some).map(k -> "v-" + k)
                    .toArray(String[]::new));
            assertThat(glide.del(some).get()).isEqualTo(20L);
            // Every node is a primary, so "all primaries" is every node.
            Map<String, String> infos = glide.info(new Section[] {Section.SERVER, Section.REPLICATION},
                    SimpleMultiNodeRoute.ALL_PRIMARIES).get().getMultiValue();
            assertThat(infos).hasSize(3);
            assertThat(infos.values()).allSatisfy(info -> assertThat(info).contains("redis_mode:cluster",
                    "role:master"));
        }
    }

    /**
     * A cluster client with a 10 s connection timeout: glide's 2 s default covers reading CLUSTER SLOTS from every
     * seed. That reply is a few KB now (it was 2.3 MB when slots were placed one by one, and took a cold cluster 2.5 s),
     * but a cold JVM on a loaded test machine can still be slow with its first replies, and a longer limit costs
     * nothing when it is not needed.
     */
    private static GlideClusterClient clusterClient(TestCluster cluster, ReadFrom readFrom) throws Exception {
        return GlideClusterClient.createClient(GlideClusterClientConfiguration.builder()
                .addresses(cluster.nodes.stream().map(n -> NodeAddress.builder().host("127.0.0.1").port(n.port())
                        .build()).toList())
                .advancedConfiguration(AdvancedGlideClusterClientConfiguration.builder()
                        .connectionTimeout(CONNECT_TIMEOUT_MILLIS).build())
                .readFrom(readFrom).requestTimeout(TIMEOUT_MILLIS).build()).get(60, TimeUnit.SECONDS);
    }
}
