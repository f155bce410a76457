package io.kvtier.cluster;

import static org.assertj.core.api.Assertions.fail;

import io.kvtier.testkit.LocalPorts;
import java.io.IOException;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Helpers for tests that run real cluster nodes in one JVM: free ports, polling, elapsed time. */
public final class ClusterTesting {
    private ClusterTesting() {
    }

    /** {@code n} distinct free local ports, below the ephemeral range: {@link LocalPorts#free(int)}. */
    public static int[] freePorts(int n) throws IOException {
        return LocalPorts.free(n);
    }

    /** Polls {@code condition} every 50 ms until it holds, failing after {@code max}. */
    public static void awaitUntil(Duration max, String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + max.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out after " + max.toMillis() + " ms waiting for: " + what);
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                fail("interrupted waiting for: " + what);
            }
        }
    }

    public static long elapsedMillis(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }
}
