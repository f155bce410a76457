package io.kvtier.server.command;

import io.kvtier.server.ServerContext;
import io.kvtier.store.StoreStats;
import io.kvtier.store.disk.RecoveryStats;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The text of INFO: Redis's sections and field names where they apply, plus "# Tiers" for kvtier's tiers. */
final class InfoReport {
    private static final List<String> DEFAULT = List.of("server", "clients", "memory", "persistence", "stats",
            "replication", "tiers", "kvcache", "cluster", "keyspace");
    /** INFO replication's replication id: 40 hex digits, new for each process, as Redis's. */
    private static final String REPLICATION_ID = replicationId();

    private InfoReport() {
    }

    static String render(ServerContext server, List<String> requested) {
        List<String> sections = requested.isEmpty() || requested.contains("all") || requested.contains("default")
                || requested.contains("everything") ? DEFAULT : requested;
        StoreStats st = server.store().stats();
        StringBuilder out = new StringBuilder();
        for (String section : DEFAULT) {
            if (!sections.contains(section)) {
                continue;
            }
            Map<String, Object> fields = new LinkedHashMap<>();
            switch (section) {
                case "server" -> server(server, fields);
                case "clients" -> clients(server, fields);
                case "memory" -> memory(server, fields, st);
                case "persistence" -> persistence(server, fields);
                case "stats" -> stats(server, fields, st);
                case "replication" -> replication(fields);
                case "tiers" -> tiers(fields, st);
                case "kvcache" -> kvcache(server, fields, st);
                case "cluster" -> fields.put("cluster_enabled", server.cluster() == null ? 0 : 1);
                case "keyspace" -> keyspace(fields, st);
                default -> throw new IllegalStateException("no INFO section " + section);
            }
            if (!out.isEmpty()) {
                out.append("\r\n");
            }
            out.append("# ").append(section.equals("kvcache") ? "KVCache"
                    : Character.toUpperCase(section.charAt(0)) + section.substring(1)).append("\r\n");
            fields.forEach((k, v) -> out.append(k).append(':').append(v).append("\r\n"));
        }
        return out.toString();
    }

    /**
     * A Redis primary with no replicas: true of every kvtier node, which serves writes for the slots it owns and has
     * no Redis replication stream (a cluster's backups are kept by its own protocol, "# Cluster" and CLUSTER INFO).
     * Clients read {@code role} to find a node they may write to (valkey-glide refuses a standalone node without it).
     */
    private static void replication(Map<String, Object> f) {
        f.put("role", "master");
        f.put("connected_slaves", 0);
        f.put("master_failover_state", "no-failover");
        f.put("master_replid", REPLICATION_ID);
        f.put("master_replid2", "0".repeat(40));
        f.put("master_repl_offset", 0);
        f.put("second_repl_offset", -1);
        f.put("repl_backlog_active", 0);
        f.put("repl_backlog_size", 0);
        f.put("repl_backlog_first_byte_offset", 0);
        f.put("repl_backlog_histlen", 0);
    }

    private static String replicationId() {
        byte[] random = new byte[20];
        new java.security.SecureRandom().nextBytes(random);
        return java.util.HexFormat.of().formatHex(random);
    }

    private static void server(ServerContext s, Map<String, Object> f) {
        long uptime = (System.currentTimeMillis() - s.startMillis()) / 1000;
        f.put("redis_version", ConnectionCommands.REDIS_VERSION);
        f.put("kvtier_version", InfoReport.class.getPackage().getImplementationVersion() == null ? "dev"
                : InfoReport.class.getPackage().getImplementationVersion());
        f.put("redis_mode", s.cluster() == null ? "standalone" : "cluster");
        f.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                + System.getProperty("os.arch"));
        f.put("arch_bits", 64);
        f.put("java_version", Runtime.version());
        f.put("process_id", ProcessHandle.current().pid());
        f.put("tcp_port", s.port());
        f.put("uptime_in_seconds", uptime);
        f.put("uptime_in_days", uptime / 86400);
    }

    private static void clients(ServerContext s, Map<String, Object> f) {
        f.put("connected_clients", s.sessions().size());
        f.put("maxclients", s.maxClients());
        f.put("blocked_clients", 0);
        var requests = s.requestMemory(); // what requests in progress hold (ClientLimits)
        f.put("mem_clients_normal", requests.heap().used());
        f.put("maxmemory_clients", requests.heap().limit());
        f.put("client_query_buffer_limit", s.options().clientLimits().queryBufferLimit());
        f.put("requests_reserved_bytes", requests.reservedBytes());
        f.put("requests_spooled_bytes", requests.spooledBytes());
    }

    private static void memory(ServerContext s, Map<String, Object> f, StoreStats st) {
        f.put("used_memory", st.memoryUsedBytes());
        f.put("used_memory_human", human(st.memoryUsedBytes()));
        f.put("used_memory_rss", rssBytes());
        f.put("used_memory_rss_human", human(rssBytes()));
        f.put("used_memory_heap", Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory());
        f.put("max_memory_heap", Runtime.getRuntime().maxMemory());
        f.put("used_memory_index", s.store().indexBytes()); // what --index-memory bounds, charged per key
        f.put("index_memory", s.store().indexBudget());
        f.put("maxmemory", st.memoryBudget());
        f.put("maxmemory_human", human(st.memoryBudget()));
        f.put("maxmemory_policy", "noeviction");
        f.put("mem_allocator", "kvtier-slab");
    }

    private static void persistence(ServerContext s, Map<String, Object> f) {
        RecoveryStats r = s.store().recovery();
        f.put("loading", 0);
        f.put("aof_enabled", 0);
        f.put("rdb_bgsave_in_progress", 0);
        f.put("recovered_records", r.records());
        f.put("recovered_bytes", r.bytes());
        f.put("recovery_dropped_records", r.droppedRecords());
        f.put("recovery_dropped_bytes", r.droppedBytes());
        f.put("recovery_millis", r.millis());
        f.put("recovery_damaged_regions", r.damagedRegions());
        f.put("recovery_keys_dropped_for_damage", s.store().keysDroppedForDamage());
    }

    private static void stats(ServerContext s, Map<String, Object> f, StoreStats st) {
        f.put("total_connections_received", s.connectionsReceived.sum());
        f.put("total_commands_processed", s.commandsProcessed.sum());
        f.put("total_net_input_bytes", s.netInputBytes.sum());
        f.put("total_net_input_landed_bytes", s.netInputLandedBytes.sum());
        f.put("rejected_connections", s.connectionsRejected.sum());
        f.put("expired_keys", st.expiredKeys());
        f.put("evicted_keys", st.evictions());
        f.put("keyspace_hits", st.memoryHits() + st.diskHits());
        f.put("keyspace_misses", st.misses());
    }

    /**
     * LMCache's KV-cache in this store, one line per model in the style of Redis's keyspace lines: chunks (kv_bytes or
     * whole-chunk keys), keys and bytes held; chunk reads and probes by outcome; chunks lost for room.
     */
    private static void kvcache(ServerContext server, Map<String, Object> f, StoreStats st) {
        io.kvtier.kvcache.KvCache kv = server.kvcache();
        List<io.kvtier.kvcache.ModelSnapshot> models = kv.models();
        f.put("kvcache_models", models.size());
        f.put("kvcache_companion_fate", kv.companionFate() ? 1 : 0);
        f.put("kvcache_companion_deletes", kv.companionDeletes());
        f.put("kvcache_hidden_metadata_reads", kv.hiddenMetadata());
        f.put("pinned_keys", st.pinnedKeys());
        f.put("pinned_bytes", st.pinnedBytes());
        f.put("pin_budget_bytes", st.pinBudget());
        for (int i = 0; i < models.size(); i++) {
            io.kvtier.kvcache.ModelSnapshot m = models.get(i);
            f.put("model_" + i, "name=" + m.model().replaceAll("[,=:\\s]", "_") + ",chunks=" + m.chunks()
                    + ",keys=" + m.keys() + ",bytes=" + m.bytes() + ",hits_memory=" + m.memoryHits()
                    + ",hits_disk=" + m.diskHits() + ",misses=" + m.misses()
                    + ",hit_rate=" + String.format(java.util.Locale.ROOT, "%.4f", m.hitRate())
                    + ",lost_chunks=" + m.lostChunks());
        }
    }

    private static void tiers(Map<String, Object> f, StoreStats st) {
        f.put("memory_budget_bytes", st.memoryBudget());
        f.put("memory_used_bytes", st.memoryUsedBytes());
        f.put("memory_value_bytes", st.memoryValueBytes());
        f.put("memory_entries", st.memoryEntries());
        f.put("memory_hits", st.memoryHits());
        f.put("disk_budget_bytes", st.diskBudget());
        f.put("disk_used_bytes", st.diskUsedBytes());
        f.put("disk_value_bytes", st.diskValueBytes());
        f.put("disk_entries", st.diskEntries());
        f.put("disk_hits", st.diskHits());
        f.put("disk_read_bytes", st.diskReadBytes());
        f.put("misses", st.misses());
        f.put("demotions", st.demotions());
        f.put("demoted_bytes", st.demotedBytes());
        f.put("promotions", st.promotions());
        f.put("evictions", st.evictions());
        f.put("evicted_bytes", st.evictedBytes());
        f.put("evicted_regions", st.evictedRegions());
        f.put("corrupt_reads", st.corruptReads());
        f.put("memory_waiting_bytes", st.waitingBytes());
    }

    private static void keyspace(Map<String, Object> f, StoreStats st) {
        if (st.keys() > 0) {
            f.put("db0", "keys=" + st.keys() + ",expires=0,avg_ttl=0");
        }
    }

    /** Resident set size of this process from /proc (0 where unavailable). */
    static long rssBytes() {
        try {
            String[] statm = Files.readString(Path.of("/proc/self/statm")).trim().split("\\s+");
            return Long.parseLong(statm[1]) * 4096;
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    static String human(long bytes) {
        if (bytes < 1024) {
            return bytes + "B";
        }
        String[] units = {"K", "M", "G", "T"};
        double v = bytes;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format("%.2f%s", v, units[u]);
    }
}
