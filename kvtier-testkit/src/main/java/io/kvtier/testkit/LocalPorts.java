package io.kvtier.testkit;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayDeque;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports for servers a test starts, picked before they start (a cluster's seeds name them).
 *
 * <p>Below the kernel's ephemeral range (32768 and up on Linux by default): a port the kernel hands out for
 * {@code new ServerSocket(0)} can, between being picked and being bound, become the local end of one of the many
 * outgoing connections the tests open, and the node then fails to bind it (a {@code MiniCluster} node did, in CI:
 * "No available port to bind to"). Each pick is a block of 200 ports, {@code 200 * block + 0..99}, whose partner 100
 * above (a cluster node's failure detection binds it) is free too; the last 32 blocks are not handed out again, so
 * the ports of one test never collide even before any is bound.
 */
public final class LocalPorts {
    private static final int FIRST_BLOCK = 50; // port 10000
    private static final int END_BLOCK = 160; // port 32000: the blocks end below 32100, under the ephemeral range
    private static final ArrayDeque<Integer> RECENT_BLOCKS = new ArrayDeque<>();

    private LocalPorts() {}

    /** A port free now, below the ephemeral range, whose port 100 above is free too. */
    public static int free() throws IOException {
        return pick(false);
    }

    /** A port as {@link #free} whose next port is free too (a node's {@code --kv-events} binds both). */
    public static int freePair() throws IOException {
        return pick(true);
    }

    private static synchronized int pick(boolean pair) throws IOException {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int attempt = 0; attempt < 1000; attempt++) {
            int block = random.nextInt(FIRST_BLOCK, END_BLOCK);
            int port = block * 200 + random.nextInt(pair ? 99 : 100);
            if (!RECENT_BLOCKS.contains(block) && bindable(port) && bindable(port + 100)
                    && (!pair || bindable(port + 1) && bindable(port + 101))) {
                RECENT_BLOCKS.addLast(block);
                if (RECENT_BLOCKS.size() > 32) {
                    RECENT_BLOCKS.removeFirst();
                }
                return port;
            }
        }
        throw new IOException("no free port in " + FIRST_BLOCK * 200 + ".." + (END_BLOCK * 200 + 99)
                + " after 1000 tries");
    }

    /** {@code n} distinct ports, each as {@link #free}. */
    public static int[] free(int n) throws IOException {
        int[] ports = new int[n];
        for (int i = 0; i < n; i++) {
            ports[i] = free();
        }
        return ports;
    }

    private static boolean bindable(int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress("127.0.0.1", port));
            return true;
        } catch (IOException taken) {
            return false;
        }
    }
}
