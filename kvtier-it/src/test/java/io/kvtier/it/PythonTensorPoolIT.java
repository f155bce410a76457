package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Python TensorPool (clients/python, Debian's python3 with python3-numpy and python3-torch) against a real node
 * with --shm yes: its unittest suite as this user, through shared memory, and as another user (nobody), who may not
 * map the node's memory and must get the same values over RESP.
 */
class PythonTensorPoolIT {
    private static final Path TESTS = KvtierProcess.ROOT.resolve("clients/python/tests");

    @TempDir
    static Path tmp;
    static KvtierProcess node;

    @BeforeAll
    static void startNode() throws IOException {
        node = KvtierProcess.start(tmp.resolve("node"), "--memory", "32m", "--disk", "512m", "--shm", "yes");
    }

    @AfterAll
    static void stopNode() throws InterruptedException {
        if (node != null) {
            node.stop();
        }
    }

    private static Tools.Result suite(List<String> prefix, boolean local) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(prefix);
        command.addAll(List.of("env", "KVTIER_PORT=" + node.port(), "KVTIER_EXPECT_LOCAL=" + (local ? "1" : "0"),
                "PYTHONDONTWRITEBYTECODE=1", "/usr/bin/python3", "-m", "unittest", "discover", "-v", "-s",
                TESTS.toString()));
        return Tools.run(Duration.ofMinutes(5), null, command);
    }

    @Test
    void theSuitePassesThroughSharedMemory() throws Exception {
        Tools.Result r = suite(List.of(), true);
        assertThat(r.exitCode()).as("stdout %s\nstderr %s", r.stdout(), r.stderr()).isZero();
        assertThat(r.stderr()).contains("OK").doesNotContain("skipped 'numpy").doesNotContain("skipped 'torch");
    }

    @Test
    void aClientOfAnotherUserGetsTheSameValuesOverResp() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root to run a client as another user");
        Tools.Result r = suite(List.of("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"), false);
        assertThat(r.exitCode()).as("stdout %s\nstderr %s", r.stdout(), r.stderr()).isZero();
        assertThat(r.stderr()).contains("OK");
    }
}
