package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sends every line of {@code differential/commands.txt} to redis-server 7.0 and to kvtier, in RESP2 and again in
 * RESP3, and requires byte-identical replies (see {@link ReplyNormalizer} for the few normalized ones). Where kvtier
 * differs on purpose (one database, strings only, its own COMMAND and INFO content) the script leaves it out.
 */
class DifferentialIT {
    private static final String SCRIPT = "/differential/commands.txt";

    @TempDir
    Path tmp;

    @Test
    void kvtierAnswersEveryScriptedCommandLikeRedisInBothProtocols() throws Exception {
        List<CommandScript.Line> script = CommandScript.load(SCRIPT);
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
            System.out.println("DifferentialIT: " + summary);
            assertThat(mismatches).as(summary + "\n" + String.join("\n", mismatches)).isEmpty();
        }
    }
}
