package io.kvtier.server.command;

import io.kvtier.server.metrics.InstantaneousRates;
import io.kvtier.server.metrics.Metrics;
import io.kvtier.store.StoreStats;
import io.kvtier.store.disk.RecoveryStats;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The text of INFO: Redis 7.0's sections in its order, each with the Redis fields that mean something here in Redis's
 * order, then kvtier's own fields; after Redis's sections, kvtier's "# Tiers" and "# KVCache". Section names are
 * matched as Redis matches them: case-insensitively, several at once, "default", "all" and "everything"; an unknown
 * one adds nothing. Redis's "# Latencystats" is left out: kvtier keeps latencies only in coarse Prometheus buckets.
 */
final class InfoReport {
    /** Every section in the order INFO prints them. */
    private static final List<String> ORDER = List.of("server", "clients", "memory", "persistence", "stats",
            "replication", "cpu", "modules", "commandstats", "errorstats", "cluster", "keyspace", "tiers", "kvcache");
    /** What INFO and INFO default print: all but commandstats, as Redis. */
    private static final Set<String> DEFAULT = Set.of("server", "clients", "memory", "persistence", "stats",
            "replication", "cpu", "modules", "errorstats", "cluster", "keyspace", "tiers", "kvcache");
    /** INFO replication's replication id: 40 hex digits, new for each process, as Redis's. */
    private static final String REPLICATION_ID = randomId();
    /** INFO server's run_id: 40 hex digits, new for each process, as Redis's. */
    private static final String RUN_ID = randomId();
    /** The kernel's USER_HZ, the unit of /proc/self/stat's CPU times (100 on every Linux architecture). */
    private static final int CLOCK_TICKS_PER_SECOND = 100;

    private InfoReport() {
    }

    /** The sections INFO with these arguments (lower case) prints: none given means "default". */
    static Set<String> sections(List<String> requested) {
        if (requested.isEmpty()) {
            return DEFAULT;
        }
        Set<String> out = new HashSet<>();
        for (String name : requested) {
            switch (name) {
                case "default" -> out.addAll(DEFAULT);
                case "all", "everything" -> out.addAll(ORDER);
                default -> out.add(name);
            }
        }
        return out;
    }

    static String render(ServerContext server, List<String> requested) {
        Set<String> sections = sections(requested);
        StoreStats st = server.store().stats();
        StringBuilder out = new StringBuilder();
        for (String section : ORDER) {
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
                case "cpu" -> cpu(fields);
                case "modules" -> { } // no modules: the header alone, as Redis prints it with none loaded
                case "commandstats" -> commandStats(server, fields);
                case "errorstats" -> server.metrics().errors().byCode()
                        .forEach((code, n) -> fields.put("errorstat_" + code, "count=" + n));
                case "cluster" -> fields.put("cluster_enabled", server.cluster() == null ? 0 : 1);
                case "keyspace" -> keyspace(fields, st);
                case "tiers" -> tiers(fields, st);
                case "kvcache" -> kvcache(server, fields, st);
                default -> throw new IllegalStateException("no INFO section " + section);
            }
            if (!out.isEmpty()) {
                out.append("\r\n");
            }
            out.append("# ").append(title(section)).append("\r\n");
            fields.forEach((k, v) -> out.append(k).append(':').append(v).append("\r\n"));
        }
        return out.toString();
    }

    private static String title(String section) {
        return switch (section) {
            case "cpu" -> "CPU";
            case "kvcache" -> "KVCache";
            default -> Character.toUpperCase(section.charAt(0)) + section.substring(1);
        };
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

    private static String randomId() {
        byte[] random = new byte[20];
        new java.security.SecureRandom().nextBytes(random);
        return java.util.HexFormat.of().formatHex(random);
    }

    private static void server(ServerContext s, Map<String, Object> f) {
        long uptime = (System.currentTimeMillis() - s.startMillis()) / 1000;
        java.time.Instant now = java.time.Instant.now();
        f.put("redis_version", ConnectionCommands.REDIS_VERSION);
        f.put("redis_mode", s.cluster() == null ? "standalone" : "cluster");
        String arch = System.getProperty("os.arch");
        f.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                + (arch.equals("amd64") ? "x86_64" : arch)); // uname's spelling, as Redis prints it
        f.put("arch_bits", 64);
        f.put("multiplexing_api", io.netty.channel.epoll.Epoll.isAvailable() ? "epoll" : "nio");
        f.put("process_id", ProcessHandle.current().pid());
        f.put("run_id", RUN_ID);
        f.put("tcp_port", s.port());
        f.put("server_time_usec", now.getEpochSecond() * 1_000_000 + now.getNano() / 1000);
        f.put("uptime_in_seconds", uptime);
        f.put("uptime_in_days", uptime / 86400);
        f.put("executable", ProcessHandle.current().info().command().orElse("")); // the JVM running kvtier
        f.put("kvtier_version", InfoReport.class.getPackage().getImplementationVersion() == null ? "dev"
                : InfoReport.class.getPackage().getImplementationVersion());
        f.put("java_version", Runtime.version());
    }

    private static void clients(ServerContext s, Map<String, Object> f) {
        long input = 0;
        long output = 0;
        for (Session session : s.sessions().values()) {
            input = Math.max(input, session.inputBufferBytes());
            output = Math.max(output, session.outputBufferBytes());
        }
        f.put("connected_clients", s.sessions().size());
        f.put("maxclients", s.maxClients());
        f.put("client_recent_max_input_buffer", input); // the largest among the connections now open
        f.put("client_recent_max_output_buffer", output);
        f.put("blocked_clients", 0); // no blocking commands
        f.put("tracking_clients", 0); // no CLIENT TRACKING
        f.put("clients_in_timeout_table", 0);
        var requests = s.requestMemory(); // what requests in progress hold (ClientLimits)
        f.put("maxmemory_clients", requests.heap().limit());
        f.put("client_query_buffer_limit", s.options().clientLimits().queryBufferLimit());
        f.put("requests_reserved_bytes", requests.reservedBytes());
        f.put("requests_spooled_bytes", requests.spooledBytes());
    }

    /**
     * used_memory is what the process holds for data and requests: the JVM heap in use (the key index, requests)
     * plus the memory tier's pages in use (off-heap, bounded by maxmemory = --memory); used_memory_dataset is the
     * value bytes in those pages, used_memory_overhead the rest. See {@link ServerContext#usedMemory()}.
     */
    private static void memory(ServerContext s, Map<String, Object> f, StoreStats st) {
        long used = s.usedMemory();
        long peak = s.usedMemoryPeak();
        long rss = rssBytes();
        long heap = Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory();
        f.put("used_memory", used);
        f.put("used_memory_human", human(used));
        f.put("used_memory_rss", rss);
        f.put("used_memory_rss_human", human(rss));
        f.put("used_memory_peak", peak);
        f.put("used_memory_peak_human", human(peak));
        f.put("used_memory_peak_perc", String.format(Locale.ROOT, "%.2f%%", peak == 0 ? 0 : 100.0 * used / peak));
        f.put("used_memory_overhead", used - st.memoryValueBytes());
        f.put("used_memory_dataset", st.memoryValueBytes());
        long system = totalSystemMemory();
        f.put("total_system_memory", system);
        f.put("total_system_memory_human", human(system));
        io.kvtier.server.script.ScriptCache scripts = s.scripting().cache();
        f.put("used_memory_scripts_eval", scripts.bytes()); // the cached scripts' source, as kvtier bounds it
        f.put("number_of_cached_scripts", scripts.size());
        f.put("number_of_functions", 0); // no FUNCTION
        f.put("number_of_libraries", 0);
        f.put("maxmemory", st.memoryBudget());
        f.put("maxmemory_human", human(st.memoryBudget()));
        f.put("maxmemory_policy", "noeviction");
        f.put("mem_fragmentation_ratio", String.format(Locale.ROOT, "%.2f", used == 0 ? 0 : (double) rss / used));
        f.put("mem_fragmentation_bytes", rss - used);
        f.put("mem_clients_normal", s.requestMemory().heap().used());
        f.put("mem_allocator", "kvtier-slab");
        f.put("used_memory_heap", heap);
        f.put("max_memory_heap", Runtime.getRuntime().maxMemory());
        f.put("used_memory_index", s.store().indexBytes()); // what --index-memory bounds, charged per key
        f.put("index_memory", s.store().indexBudget());
    }

    private static void persistence(ServerContext s, Map<String, Object> f) {
        RecoveryStats r = s.store().recovery();
        f.put("loading", 0);
        f.put("async_loading", 0);
        f.put("rdb_bgsave_in_progress", 0);
        f.put("aof_enabled", 0);
        f.put("aof_rewrite_in_progress", 0);
        f.put("recovered_records", r.records());
        f.put("recovered_bytes", r.bytes());
        f.put("recovery_dropped_records", r.droppedRecords());
        f.put("recovery_dropped_bytes", r.droppedBytes());
        f.put("recovery_millis", r.millis());
        f.put("recovery_damaged_regions", r.damagedRegions());
        f.put("recovery_keys_dropped_for_damage", s.store().keysDroppedForDamage());
        // The stop before this start: clean (memory written to disk), or not (a crash, kill -9 or power loss), and
        // then at most how many values, and bytes, were only in memory and are lost.
        f.put("previous_stop_clean", s.store().previousStopClean() ? 1 : 0);
        f.put("previous_stop_lost_keys_max", s.store().lostAtCrashKeys());
        f.put("previous_stop_lost_bytes_max", s.store().lostAtCrashBytes());
    }

    private static void stats(ServerContext s, Map<String, Object> f, StoreStats st) {
        InstantaneousRates rates = s.rates();
        f.put("total_connections_received", s.connectionsReceived.sum());
        f.put("total_commands_processed", s.commandsProcessed.sum());
        f.put("instantaneous_ops_per_sec", rates.opsPerSecond());
        f.put("total_net_input_bytes", s.netInputBytes.sum());
        f.put("total_net_output_bytes", s.netOutputBytes.sum());
        f.put("instantaneous_input_kbps", String.format(Locale.ROOT, "%.2f", rates.inputKbps()));
        f.put("instantaneous_output_kbps", String.format(Locale.ROOT, "%.2f", rates.outputKbps()));
        f.put("rejected_connections", s.connectionsRejected.sum());
        f.put("expired_keys", st.expiredKeys());
        f.put("evicted_keys", st.evictions());
        f.put("keyspace_hits", st.memoryHits() + st.diskHits());
        f.put("keyspace_misses", st.misses());
        f.put("pubsub_channels", 0); // no publish/subscribe
        f.put("pubsub_patterns", 0);
        f.put("pubsubshard_channels", 0);
        f.put("total_error_replies", s.metrics().errors().total());
        f.put("total_net_input_landed_bytes", s.netInputLandedBytes.sum());
        io.kvtier.server.events.StoreEventLog events = s.storeEvents();
        if (events != null) { // --kv-events: what was published, lost to a full queue, and replay peers cut off
            f.put("kv_events_published", events.published());
            f.put("kv_events_dropped", events.dropped());
            f.put("kv_events_replay_peers_dropped", events.replayPeersDropped());
            f.put("kv_events_replay_requests_ignored", events.replayRequestsIgnored());
        }
    }

    /** CPU seconds of the process and of its waited-for children, from /proc/self/stat; nothing where unreadable. */
    private static void cpu(Map<String, Object> f) {
        long[] ticks = cpuTicks();
        if (ticks == null) {
            return;
        }
        f.put("used_cpu_sys", seconds(ticks[1]));
        f.put("used_cpu_user", seconds(ticks[0]));
        f.put("used_cpu_sys_children", seconds(ticks[3]));
        f.put("used_cpu_user_children", seconds(ticks[2]));
    }

    /** utime, stime, cutime and cstime of /proc/self/stat (fields 14 to 17), or null. */
    static long[] cpuTicks() {
        try {
            String stat = Files.readString(Path.of("/proc/self/stat"));
            // Fields after the command name, which is in parentheses and may contain spaces: state is field 3.
            String[] rest = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
            return new long[] {Long.parseLong(rest[11]), Long.parseLong(rest[12]), Long.parseLong(rest[13]),
                    Long.parseLong(rest[14])};
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** Clock ticks as seconds with six decimals, Redis's format for CPU times. */
    private static String seconds(long ticks) {
        long micros = ticks * (1_000_000 / CLOCK_TICKS_PER_SECOND);
        return micros / 1_000_000 + "." + String.format(Locale.ROOT, "%06d", micros % 1_000_000);
    }

    /** One line per command called or refused since start or CONFIG RESETSTAT, as Redis's cmdstat_ lines. */
    private static void commandStats(ServerContext s, Map<String, Object> f) {
        for (Metrics.CommandStat c : s.metrics().commandStats()) {
            f.put("cmdstat_" + c.name(), "calls=" + c.calls() + ",usec=" + c.micros() + ",usec_per_call="
                    + String.format(Locale.ROOT, "%.2f", c.calls() == 0 ? 0.0 : (double) c.micros() / c.calls())
                    + ",rejected_calls=" + c.rejected() + ",failed_calls=" + c.failed());
        }
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
        io.kvtier.server.value.Prefetcher p = server.prefetcherIfStarted();
        f.put("kvcache_prefetch_requested", p == null ? 0 : p.requested());
        f.put("kvcache_prefetch_dropped", p == null ? 0 : p.dropped());
        f.put("kvcache_prefetch_queued", p == null ? 0 : p.queued());
        f.put("kvcache_prefetch_not_prefetched", p == null ? 0 : p.notPrefetched());
        f.put("kvcache_prefetched", st.prefetched());
        f.put("kvcache_prefetch_used", st.prefetchUsed());
        f.put("kvcache_prefetch_wasted", st.prefetchWasted());
        io.kvtier.server.value.SharedLeases shm = server.sharedLeases();
        f.put("shm_enabled", shm == null ? 0 : 1);
        f.put("shm_leases_held", shm == null ? 0 : shm.held());
        f.put("shm_leased_bytes", shm == null ? 0 : shm.heldBytes());
        f.put("shm_leases_given", shm == null ? 0 : shm.given.get());
        f.put("shm_leases_expired", shm == null ? 0 : shm.expired.get());
        f.put("shm_commits", shm == null ? 0 : shm.committed.get());
        f.put("shm_leases_refused", shm == null ? 0 : shm.refused.get());
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
        f.put("disk_direct_reads", st.diskDirectReads());
        f.put("disk_directories", st.diskDirectories());
        f.put("disk_directories_live", st.diskDirectoriesLive());
        f.put("misses", st.misses());
        f.put("demotions", st.demotions());
        f.put("demoted_bytes", st.demotedBytes());
        f.put("promotions", st.promotions());
        f.put("evictions", st.evictions());
        f.put("evicted_bytes", st.evictedBytes());
        f.put("evicted_regions", st.evictedRegions());
        f.put("disk_write_limit", st.diskWriteLimit());
        f.put("disk_admission_dropped", st.admissionDropped());
        f.put("disk_admission_dropped_bytes", st.admissionDroppedBytes());
        f.put("corrupt_reads", st.corruptReads());
        f.put("memory_waiting_bytes", st.waitingBytes());
    }

    private static long totalSystemMemory() {
        return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
                ? os.getTotalMemorySize() : 0;
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
        return String.format(Locale.ROOT, "%.2f%s", v, units[u]);
    }
}
