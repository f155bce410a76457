package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.testkit.RedisServerProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * INFO's and CLIENT LIST's shape against redis-server 7.0: the same commands go to both, then their section names,
 * field names and field order must agree. kvtier may leave out a Redis field that means nothing here, and may add
 * its own fields and sections, but only after Redis's (the README lists them); it must keep every field that tools
 * read. Where both count the same thing (commandstats, errorstats) the counts must agree too.
 */
class InfoDifferentialIT {
    /** kvtier's own sections: after Redis's. */
    private static final Set<String> KVTIER_SECTIONS = Set.of("Tiers", "KVCache");
    /** Redis's sections kvtier leaves out (README, "How Redis semantics map"). */
    private static final Set<String> NOT_IN_KVTIER = Set.of("Latencystats");
    /** Fields that monitoring tools and clients read: kvtier must have each. */
    private static final List<String> REQUIRED = List.of("redis_version", "redis_mode", "process_id", "run_id",
            "tcp_port", "uptime_in_seconds", "executable", "connected_clients", "maxclients", "blocked_clients",
            "used_memory", "used_memory_human", "used_memory_rss", "used_memory_peak", "maxmemory", "maxmemory_human",
            "maxmemory_policy", "mem_fragmentation_ratio", "total_connections_received", "total_commands_processed",
            "instantaneous_ops_per_sec", "total_net_input_bytes", "total_net_output_bytes", "rejected_connections",
            "expired_keys", "evicted_keys", "keyspace_hits", "keyspace_misses", "total_error_replies", "role",
            "master_repl_offset", "used_cpu_sys", "used_cpu_user", "used_cpu_sys_children", "used_cpu_user_children",
            "cluster_enabled");
    /** The CLIENT LIST fields whose values must be Redis's for the same connection state. */
    private static final List<String> SAME_CLIENT_VALUES = List.of("name", "flags", "db", "sub", "psub", "ssub",
            "multi", "obl", "oll", "omem", "events", "cmd", "user", "redir", "resp");

    @TempDir
    Path tmp;

    @Test
    void infoAndClientListHaveRedisFieldsInRedisOrder() throws Exception {
        try (RedisServerProcess redis = RedisServerProcess.start(Files.createDirectories(tmp.resolve("redis")));
             KvtierProcess kvtier = KvtierProcess.start(tmp.resolve("kvtier"), "--memory", "64m", "--disk", "256m");
             RawConnection r = new RawConnection(redis.port());
             RawConnection k = new RawConnection(kvtier.port())) {
            for (RawConnection c : List.of(r, k)) {
                workload(c);
            }
            Map<String, Map<String, String>> redisInfo = parse(text(r.call("INFO", "everything")));
            Map<String, Map<String, String>> kvtierInfo = parse(text(k.call("INFO", "everything")));
            compareSections(redisInfo, kvtierInfo);
            for (String section : redisInfo.keySet()) {
                if (kvtierInfo.containsKey(section) && !Set.of("Commandstats", "Errorstats").contains(section)) {
                    compareFields(section, List.copyOf(redisInfo.get(section).keySet()),
                            List.copyOf(kvtierInfo.get(section).keySet()));
                }
            }
            Map<String, String> kvtierFields = new LinkedHashMap<>();
            kvtierInfo.values().forEach(kvtierFields::putAll);
            assertThat(kvtierFields.keySet()).containsAll(REQUIRED);
            assertThat(kvtierFields.get("used_cpu_user")).matches("\\d+\\.\\d{6}");
            assertThat(kvtierFields.get("db0")).startsWith("keys=2,expires=0,avg_ttl=");

            // The same commands, so the same counts (durations aside) and the same error codes.
            assertThat(withoutDurations(kvtierInfo.get("Commandstats")))
                    .isEqualTo(withoutDurations(redisInfo.get("Commandstats")));
            assertThat(kvtierInfo.get("Errorstats")).isEqualTo(redisInfo.get("Errorstats"));
            assertThat(kvtierFields.get("total_error_replies"))
                    .isEqualTo(redisInfo.get("Stats").get("total_error_replies"));

            for (List<String> args : List.<List<String>>of(List.of(), List.of("default"), List.of("all"), List.of("everything"),
                    List.of("server", "CLIENTS"), List.of("Cpu", "server"), List.of("keyspace", "cluster"),
                    List.of("default", "commandstats"), List.of("errorstats"), List.of("bogus"))) {
                List<String> command = new ArrayList<>(List.of("INFO"));
                command.addAll(args);
                List<String> redisSections = new ArrayList<>(parse(text(r.call(command.toArray(String[]::new))))
                        .keySet());
                List<String> kvtierSections = new ArrayList<>(parse(text(k.call(command.toArray(String[]::new))))
                        .keySet());
                redisSections.removeAll(NOT_IN_KVTIER);
                kvtierSections.removeAll(KVTIER_SECTIONS);
                assertThat(kvtierSections).as("sections of %s", command).isEqualTo(redisSections);
            }

            for (String[] command : List.of(new String[] {"CLIENT", "LIST"}, new String[] {"CLIENT", "INFO"},
                    new String[] {"CLIENT", "LIST", "TYPE", "normal"})) {
                Map<String, String> redisClient = client(text(r.call(command)));
                Map<String, String> kvtierClient = client(text(k.call(command)));
                List<String> kvtierNames = new ArrayList<>(kvtierClient.keySet());
                assertThat(kvtierNames.subList(0, redisClient.size())).as(String.join(" ", command))
                        .isEqualTo(List.copyOf(redisClient.keySet()));
                assertThat(kvtierNames.subList(redisClient.size(), kvtierNames.size())) // Redis 7.2's, in its order
                        .containsExactly("lib-name", "lib-ver");
                for (String field : SAME_CLIENT_VALUES) {
                    assertThat(kvtierClient.get(field)).as("%s %s", String.join(" ", command), field)
                            .isEqualTo(redisClient.get(field));
                }
                assertThat(Integer.parseInt(kvtierClient.get("fd"))).isPositive();
            }
            // A connection in MULTI with one command queued, seen from another: flags=x multi=1 cmd=set.
            try (RawConnection rq = new RawConnection(redis.port()); RawConnection kq = new RawConnection(kvtier.port())) {
                Map<String, String> redisQueued = queued(rq, r);
                Map<String, String> kvtierQueued = queued(kq, k);
                for (String field : SAME_CLIENT_VALUES) {
                    assertThat(kvtierQueued.get(field)).as("in MULTI: %s", field).isEqualTo(redisQueued.get(field));
                }
                assertThat(kvtierQueued).containsEntry("flags", "x").containsEntry("multi", "1");
            }
            String id = Long.toString(k.call("CLIENT", "ID").integer());
            assertThat(client(text(k.call("CLIENT", "LIST", "ID", id))).get("id")).isEqualTo(id);
            for (String type : List.of("master", "replica", "pubsub")) {
                assertThat(text(k.call("CLIENT", "LIST", "TYPE", type))).isEqualTo(text(r.call("CLIENT", "LIST",
                        "TYPE", type)));
            }
        }
    }

    /** Successes, a failure, a refusal (arity), an unknown command: each kind of count in commandstats. */
    private static void workload(RawConnection c) throws IOException {
        c.call("SET", "a", "1");
        c.call("SET", "b", "2");
        c.call("GET", "a");
        c.call("GET"); // rejected_calls
        c.call("SET", "a", "1", "EX", "nope"); // failed_calls
        c.call("NOSUCHCOMMAND"); // errorstats only
        c.call("CLIENT", "SETNAME", "differential");
        c.call("CONFIG", "RESETSTAT");
        c.call("SET", "a", "1");
        c.call("GET", "a");
        c.call("GET");
        c.call("SET", "a", "1", "EX", "nope");
        c.call("NOSUCHCOMMAND");
        c.call("CLIENT", "GETNAME");
        c.call("MULTI");
        c.call("SET", "a", "2");
        c.call("SET", "a", "2", "EX", "nope"); // fails inside EXEC: a failed SET, not a failed EXEC
        c.call("EXEC");
    }

    /** CLIENT LIST ID of {@code queuing}, asked on {@code asker} once it has queued one command in MULTI. */
    private static Map<String, String> queued(RawConnection queuing, RawConnection asker) throws IOException {
        String id = Long.toString(queuing.call("CLIENT", "ID").integer());
        queuing.call("MULTI");
        queuing.call("SET", "queued", "1");
        return client(text(asker.call("CLIENT", "LIST", "ID", id)));
    }

    private static void compareSections(Map<String, Map<String, String>> redis,
                                        Map<String, Map<String, String>> kvtier) {
        List<String> expected = new ArrayList<>(redis.keySet());
        expected.removeAll(NOT_IN_KVTIER);
        List<String> actual = new ArrayList<>(kvtier.keySet());
        assertThat(actual.subList(0, expected.size())).as("Redis's sections first, in Redis's order")
                .isEqualTo(expected);
        assertThat(actual.subList(expected.size(), actual.size())).allMatch(KVTIER_SECTIONS::contains);
    }

    /** kvtier's fields: some of Redis's, in Redis's order, then only fields Redis does not have. */
    private static void compareFields(String section, List<String> redis, List<String> kvtier) {
        List<String> shared = kvtier.stream().filter(redis::contains).toList();
        assertThat(shared).as("# %s: shared fields in Redis's order", section)
                .isEqualTo(redis.stream().filter(kvtier::contains).toList());
        if (!shared.isEmpty()) {
            List<String> after = kvtier.subList(kvtier.indexOf(shared.getLast()) + 1, kvtier.size());
            List<String> before = kvtier.subList(0, kvtier.indexOf(shared.getLast()));
            assertThat(before).as("# %s: kvtier's own fields come after Redis's", section).allMatch(redis::contains);
            assertThat(after).noneMatch(redis::contains);
        }
    }

    /** Commandstats values without usec and usec_per_call, which differ between any two runs. */
    private static Map<String, String> withoutDurations(Map<String, String> commandStats) {
        Map<String, String> out = new LinkedHashMap<>();
        commandStats.forEach((name, value) -> out.put(name, value.replaceAll("usec=\\d+,usec_per_call=[\\d.]+,", "")));
        return out;
    }

    /** INFO text as section title -> field -> value, in the order printed. */
    static Map<String, Map<String, String>> parse(String info) {
        Map<String, Map<String, String>> sections = new LinkedHashMap<>();
        Map<String, String> current = null;
        for (String line : info.split("\r\n")) {
            if (line.startsWith("# ")) {
                current = new LinkedHashMap<>();
                sections.put(line.substring(2), current);
            } else if (!line.isEmpty()) {
                int colon = line.indexOf(':');
                current.put(line.substring(0, colon), line.substring(colon + 1));
            }
        }
        return sections;
    }

    /** The first line of CLIENT LIST / CLIENT INFO as field -> value, in the order printed. */
    private static Map<String, String> client(String text) {
        Map<String, String> fields = new LinkedHashMap<>();
        for (String pair : text.split("\n")[0].split(" ")) {
            int eq = pair.indexOf('=');
            fields.put(pair.substring(0, eq), pair.substring(eq + 1));
        }
        return fields;
    }

    private static String text(RawReply reply) {
        assertThat(reply.isError()).as(reply.escaped()).isFalse();
        return new String(reply.bulk(), StandardCharsets.UTF_8);
    }
}
