package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.testkit.RedisServerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Sends every line of a differential script to redis-server 7.0 and to kvtier, in RESP2 and again in RESP3, and
 * requires byte-identical replies (see {@link ReplyNormalizer} for the few normalized ones). {@code commands.txt}
 * covers the commands (where kvtier differs on purpose, one database, strings only, its own COMMAND and INFO
 * content, the script leaves it out); {@code scripts.txt} covers EVAL, EVALSHA and SCRIPT: return types, error texts
 * with their SHA1 and line, NOSCRIPT, KEYS and ARGV, redis.call and redis.pcall of kvtier's commands, the sandbox's
 * protected globals.
 */
class DifferentialIT {
    @TempDir
    Path tmp;

    @ParameterizedTest
    @ValueSource(strings = {"/differential/commands.txt", "/differential/scripts.txt"})
    void kvtierAnswersEveryScriptedCommandLikeRedisInBothProtocols(String file) throws Exception {
        List<CommandScript.Line> script = CommandScript.load(file);
        Path redisDir = Files.createDirectories(tmp.resolve("redis"));
        try (RedisServerProcess redis = RedisServerProcess.start(redisDir);
             KvtierProcess kvtier = KvtierProcess.start(tmp.resolve("kvtier"), "--memory", "64m", "--disk", "256m")) {
            List<String> mismatches = new ArrayList<>();
            int compared = 0;
            for (int protocol : new int[] {2, 3}) {
                try (DifferentialRun run = new DifferentialRun(redis.port(), kvtier.port(), protocol)) {
                    mismatches.addAll(run.run(script));
                    compared += run.compared();
                }
            }
            String summary = "compared " + compared + " commands (" + script.size() + " script lines in RESP2 and "
                    + "RESP3): " + mismatches.size() + " mismatches";
            System.out.println("DifferentialIT " + file + ": " + summary);
            assertThat(mismatches).as(summary + "\n" + String.join("\n", mismatches)).isEmpty();
        }
    }
}
