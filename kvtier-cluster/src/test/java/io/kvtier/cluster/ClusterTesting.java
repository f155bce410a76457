package io.kvtier.cluster;

import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/** Helpers for tests that run real cluster nodes in one JVM: free ports, polling, elapsed time. */
public final class ClusterTesting {
    private ClusterTesting() {
    }

    /** {@code n} distinct free local ports. */
    public static int[] freePorts(int n) throws IOException {
        int[] ports = new int[n];
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) { // held open together so the n ports are distinct
                ServerSocket socket = new ServerSocket(0);
                sockets.add(socket);
                ports[i] = socket.getLocalPort();
            }
        } finally {
            for (ServerSocket socket : sockets) {
                socket.close();
            }
        }
        return ports;
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
