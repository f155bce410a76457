package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.testkit.RedisServerProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * ioredis 5 and node-redis 5 (from the npm registry, versions pinned by {@code src/test/node/package-lock.json}) run
 * {@code clients.js}: connect (ioredis's INFO ready check, node-redis's CLIENT SETINFO), strings with options, a 2 MiB
 * binary value, multi-key commands, transactions (with a run-time error, and WATCH broken by another client),
 * pipelines, SCAN, KEYS, INFO, CLIENT names, an unknown command. The same run against redis-server and against kvtier
 * must print the same JSON.
 */
class NodeClientsIT {
    private static final Path SOURCES = KvtierProcess.ROOT.resolve("kvtier-it/src/test/node");
    private static final Path INSTALL = KvtierProcess.ROOT.resolve("kvtier-it/target/node-clients");

    @TempDir
    Path tmp;

    @Test
    void ioredisAndNodeRedisBehaveAsAgainstRedis() throws Exception {
        install();
        String fromRedis;
        try (RedisServerProcess redis = RedisServerProcess.start(Files.createDirectories(tmp.resolve("redis")))) {
            fromRedis = run(redis.port());
        }
        String fromKvtier;
        try (KvtierProcess kvtier = KvtierProcess.start(tmp.resolve("kvtier"), "--memory", "64m")) {
            fromKvtier = run(kvtier.port());
        }
        assertThat(fromKvtier).isEqualTo(fromRedis);
        assertThat(fromKvtier).contains("\"watch_broken\":{\"error\":\"WatchError\"")
                .contains("\"connect\":{\"ok\":\"ready\"}");
    }

    /** The clients as the lock file pins them, into target/ (npm ci: the registry, or npm's cache). */
    private static void install() throws IOException, InterruptedException {
        Files.createDirectories(INSTALL);
        for (String f : new String[] {"package.json", "package-lock.json", "clients.js"}) {
            Files.copy(SOURCES.resolve(f), INSTALL.resolve(f), StandardCopyOption.REPLACE_EXISTING);
        }
        if (Files.isDirectory(INSTALL.resolve("node_modules/ioredis"))
                && Files.isDirectory(INSTALL.resolve("node_modules/redis"))) {
            return;
        }
        Tools.Result r = Tools.run(Duration.ofMinutes(3), "npm", "ci", "--no-audit", "--no-fund", "--prefix",
                INSTALL.toString());
        assertThat(r.exitCode()).as("npm ci: %s %s", r.stdout(), r.stderr()).isZero();
    }

    private static String run(int port) throws IOException, InterruptedException {
        Tools.Result r = Tools.run(Duration.ofMinutes(2), "node", INSTALL.resolve("clients.js").toString(),
                Integer.toString(port));
        assertThat(r.exitCode()).as("exit code; stdout %s; stderr %s", r.stdout(), r.stderr()).isZero();
        return r.stdout().strip();
    }
}
