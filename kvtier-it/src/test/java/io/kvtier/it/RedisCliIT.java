package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.testkit.RedisServerProcess;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Debian's redis-cli 7.0.15 against a real node: plain commands, RESP3 ({@code -3}) rendering compared line for line
 * with a real redis-server's, {@code --pipe} mass insertion and {@code --scan}. Output is not a terminal, so
 * {@code --no-raw} asks for the formatted replies a terminal would show.
 */
class RedisCliIT {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    static Path tmp;
    static KvtierProcess node;
    static RedisServerProcess redis;

    @BeforeAll
    static void startServers() throws IOException, InterruptedException {
        node = KvtierProcess.start(tmp.resolve("node"), "--memory", "64m");
        redis = RedisServerProcess.start(Files.createDirectories(tmp.resolve("redis")));
    }

    @AfterAll
    static void stopServers() throws InterruptedException {
        if (redis != null) {
            redis.close();
        }
        if (node != null) {
            node.stop();
        }
    }

    @Test
    void answersPingSetGetInfoAndDbsize() throws IOException, InterruptedException {
        assertThat(cli(node.port(), "ping")).isEqualTo("PONG\n");
        assertThat(cli(node.port(), "set", "cli:k", "hello world")).isEqualTo("OK\n");
        assertThat(cli(node.port(), "get", "cli:k")).isEqualTo("hello world\n");
        assertThat(cli(node.port(), "get", "cli:missing")).isEqualTo("\n");
        assertThat(cli(node.port(), "info")).contains("# Server", "redis_version:7.0.15",
                "tcp_port:" + node.port(), "# Keyspace");
        assertThat(cli(node.port(), "info", "memory")).startsWith("# Memory").contains("maxmemory:67108864");
        assertThat(Long.parseLong(cli(node.port(), "dbsize").strip())).isPositive();
    }

    @Test
    void setsAValueReadFromStdinWithDashX() throws IOException, InterruptedException {
        byte[] value = "line one\nline two\r\n\u00e9".getBytes(StandardCharsets.UTF_8);
        Tools.Result set = Tools.run(TIMEOUT, value, List.of("redis-cli", "-p", port(node), "-x", "set", "cli:x"));
        assertThat(set.exitCode()).isZero();
        assertThat(set.stdout()).isEqualTo("OK\n");
        assertThat(cli(node.port(), "strlen", "cli:x")).isEqualTo(value.length + "\n");
        assertThat(cli(node.port(), "get", "cli:x")).isEqualTo(new String(value, StandardCharsets.UTF_8) + "\n");
    }

    @Test
    void rendersResp3RepliesInHelloMode() throws IOException, InterruptedException {
        assertThat(cli(node.port(), "-3", "--no-raw", "get", "cli3:missing")).isEqualTo("(nil)\n");
        assertThat(cli(node.port(), "-3", "--no-raw", "set", "cli3:k", "v")).isEqualTo("OK\n");
        assertThat(cli(node.port(), "-3", "--no-raw", "mget", "cli3:k", "cli3:missing"))
                .isEqualTo("1) \"v\"\n2) (nil)\n");
        assertThat(cli(node.port(), "-3", "--no-raw", "hello", "3")).startsWith("1# \"server\" => \"redis\"\n"
                + "2# \"version\" => \"7.0.15\"\n3# \"proto\" => (integer) 3\n4# \"id\" => (integer) ")
                .endsWith("5# \"mode\" => \"standalone\"\n6# \"role\" => \"master\"\n"
                        + "7# \"modules\" => (empty array)\n");
        assertThat(cli(node.port(), "-3", "--no-raw", "config", "get", "maxmemory-policy"))
                .isEqualTo("1# \"maxmemory-policy\" => \"noeviction\"\n");
    }

    @Test
    void rendersLikeRedisServerCommandForCommand() throws IOException, InterruptedException {
        List<List<String>> script = List.of(
                List.of("set", "diff:k", "v"), List.of("get", "diff:k"), List.of("get", "diff:missing"),
                List.of("mget", "diff:k", "diff:missing"), List.of("exists", "diff:k", "diff:missing", "diff:k"),
                List.of("ttl", "diff:k"), List.of("expire", "diff:k", "100"), List.of("persist", "diff:k"),
                List.of("ttl", "diff:missing"), List.of("set", "diff:k", "v2", "get"),
                List.of("set", "diff:k", "v3", "nx", "get"), List.of("getex", "diff:k", "persist"),
                List.of("getrange", "diff:k", "0", "-1"), List.of("strlen", "diff:k"), List.of("type", "diff:k"),
                List.of("getdel", "diff:k"), List.of("getdel", "diff:k"), List.of("type", "diff:k"),
                List.of("mset", "diff:a", "1", "diff:b", "2"), List.of("msetnx", "diff:a", "1", "diff:c", "3"),
                List.of("del", "diff:a", "diff:b", "diff:c"), List.of("ping"), List.of("ping", "hi"),
                List.of("echo", "two words"), List.of("client", "getname"), List.of("set", "diff:k", "v", "nx", "xx"),
                List.of("get"), List.of("foo", "a", "b"), List.of("expire", "diff:k", "abc"),
                List.of("config", "get", "maxmemory-policy"), List.of("select", "0"));
        for (String protocol : List.of("-2", "-3")) {
            for (List<String> command : script) {
                List<String> args = new ArrayList<>(List.of(protocol, "--no-raw"));
                args.addAll(command);
                assertThat(run(node.port(), args)).as("redis-cli %s %s", protocol, command)
                        .isEqualTo(run(redis.port(), args));
            }
        }
    }

    @Test
    void pipeModeLoadsTenThousandSets() throws IOException, InterruptedException {
        assertThat(cli(node.port(), "flushall")).isEqualTo("OK\n");
        ByteArrayOutputStream input = new ByteArrayOutputStream();
        for (int i = 0; i < 10_000; i++) {
            input.writeBytes(RawSocketIT.ascii(RawSocketIT.resp("SET", "pipe:" + i, "value-" + i)));
        }
        Tools.Result pipe = Tools.run(TIMEOUT, input.toByteArray(),
                List.of("redis-cli", "-p", port(node), "--pipe"));
        assertThat(pipe.exitCode()).as(pipe.stdout() + pipe.stderr()).isZero();
        assertThat(pipe.stdout()).contains("All data transferred.").contains("errors: 0, replies: 10000");
        assertThat(cli(node.port(), "dbsize")).isEqualTo("10000\n");
        assertThat(cli(node.port(), "get", "pipe:9999")).isEqualTo("value-9999\n");
        assertThat(cli(node.port(), "get", "pipe:0")).isEqualTo("value-0\n");
    }

    @Test
    void scanModeListsEveryMatchingKeyOnce() throws IOException, InterruptedException {
        List<String> mset = new ArrayList<>(List.of("mset"));
        Set<String> expected = new HashSet<>();
        for (int i = 0; i < 300; i++) {
            mset.add("scan:" + i);
            mset.add(Integer.toString(i));
            expected.add("scan:" + i);
        }
        assertThat(cli(node.port(), mset.toArray(String[]::new))).isEqualTo("OK\n");

        List<String> listed = cli(node.port(), "--scan", "--pattern", "scan:*").lines().toList();
        assertThat(listed).doesNotHaveDuplicates();
        assertThat(new HashSet<>(listed)).isEqualTo(expected);

        List<String> ones = cli(node.port(), "--scan", "--pattern", "scan:1?").lines().toList();
        assertThat(ones).doesNotHaveDuplicates().containsExactlyInAnyOrder("scan:10", "scan:11", "scan:12",
                "scan:13", "scan:14", "scan:15", "scan:16", "scan:17", "scan:18", "scan:19");
    }

    /** stdout of a redis-cli call that must exit 0. */
    private static String cli(int port, String... args) throws IOException, InterruptedException {
        Tools.Result r = run(port, List.of(args));
        assertThat(r.exitCode()).as("redis-cli %s: %s", List.of(args), r.stderr()).isZero();
        return r.stdout();
    }

    private static Tools.Result run(int port, List<String> args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("redis-cli", "-p", Integer.toString(port)));
        command.addAll(args);
        return Tools.run(TIMEOUT, null, command);
    }

    private static String port(KvtierProcess p) {
        return Integer.toString(p.port());
    }
}
