package io.kvtier.server.command;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.server.TestNode;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * INFO's text on a real node's state: which sections each argument list selects, in what order, and the counters
 * commandstats and errorstats print. The field names and order against redis-server are InfoDifferentialIT's.
 */
class InfoReportTest {
    @TempDir
    Path dir;
    private TestNode node;

    @BeforeEach
    void open() throws Exception {
        node = TestNode.open(dir, null, 10);
    }

    @AfterEach
    void close() throws Exception {
        node.close();
    }

    private List<String> titles(String... args) {
        return Arrays.stream(InfoReport.render(node.context, List.of(args)).split("\r\n"))
                .filter(line -> line.startsWith("# ")).map(line -> line.substring(2)).toList();
    }

    @Test
    void sectionsAreSelectedAsRedisSelectsThem() {
        List<String> defaults = List.of("Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU",
                "Modules", "Errorstats", "Cluster", "Keyspace", "Tiers", "KVCache");
        assertThat(titles()).isEqualTo(defaults);
        assertThat(titles("default")).isEqualTo(defaults);
        List<String> all = List.of("Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU",
                "Modules", "Commandstats", "Errorstats", "Cluster", "Keyspace", "Tiers", "KVCache");
        assertThat(titles("all")).isEqualTo(all);
        assertThat(titles("everything")).isEqualTo(all);
        assertThat(titles("cpu", "server")).containsExactly("Server", "CPU"); // Redis's order, not the arguments'
        assertThat(titles("keyspace", "tiers", "keyspace")).containsExactly("Keyspace", "Tiers");
        assertThat(titles("default", "commandstats")).isEqualTo(all);
        assertThat(InfoReport.render(node.context, List.of("nosuchsection"))).isEmpty();
    }

    @Test
    void commandAndErrorCountsAreRedisLines() {
        var metrics = node.context.metrics();
        metrics.command("get", false, 3_000);
        metrics.command("get", true, 5_000);
        metrics.rejected("get");
        metrics.rejected("client|list");
        metrics.errors().record("ERR wrong number of arguments for 'get' command");
        metrics.errors().record("WRONGTYPE Operation against a key holding the wrong kind of value");
        metrics.errors().record("ERR syntax error");
        String text = InfoReport.render(node.context, List.of("commandstats", "errorstats", "stats"));
        assertThat(text).contains("# Commandstats\r\n"
                + "cmdstat_client|list:calls=0,usec=0,usec_per_call=0.00,rejected_calls=1,failed_calls=0\r\n"
                + "cmdstat_get:calls=2,usec=8,usec_per_call=4.00,rejected_calls=1,failed_calls=1\r\n\r\n"
                + "# Errorstats\r\nerrorstat_ERR:count=2\r\nerrorstat_WRONGTYPE:count=1\r\n");
        assertThat(text).contains("\r\ntotal_error_replies:3\r\n");

        node.context.resetStats(); // CONFIG RESETSTAT
        text = InfoReport.render(node.context, List.of("commandstats", "errorstats", "stats"));
        assertThat(text).contains("# Commandstats\r\n\r\n# Errorstats\r\n").contains("\r\ntotal_error_replies:0\r\n");
    }

    @Test
    void cpuTimesComeFromTheProcess() {
        long[] before = InfoReport.cpuTicks();
        long spin = System.nanoTime() + 300_000_000L;
        long x = 0;
        while (System.nanoTime() < spin) {
            x += Long.numberOfTrailingZeros(x + System.nanoTime());
        }
        long[] after = InfoReport.cpuTicks();
        assertThat(x).isNotNegative();
        assertThat(after[0] + after[1]).as("user + system ticks after 300 ms of spinning")
                .isGreaterThan(before[0] + before[1]);
        assertThat(InfoReport.render(node.context, List.of("cpu"))).matches(
                "# CPU\r\nused_cpu_sys:\\d+\\.\\d{6}\r\nused_cpu_user:\\d+\\.\\d{6}\r\n"
                        + "used_cpu_sys_children:\\d+\\.\\d{6}\r\nused_cpu_user_children:\\d+\\.\\d{6}\r\n");
    }
}
