package io.kvtier.cli;

import io.kvtier.server.config.ServerOptions;
import picocli.CommandLine;

/**
 * Prints the {@code -Xmx} flag a node started with the given {@code kvtier server} flags needs
 * ({@link ServerOptions#heapBytes()}), so that the launcher, not the user, sizes the heap from the configuration
 * (issue 10). Parses exactly as {@code kvtier server} does, config file included; prints nothing and exits 2 on bad
 * input, leaving the error message to the server itself. Starts no logging and opens no files but the config file.
 */
public final class HeapSize {
    private HeapSize() {
    }

    public static void main(String[] args) {
        try {
            System.out.println(flag(args));
        } catch (Exception e) {
            System.exit(2);
        }
    }

    /** The -Xmx flag, in whole MiB, for the server flags {@code args}. */
    public static String flag(String... args) throws java.io.IOException {
        ServerCommand cmd = new ServerCommand();
        new CommandLine(cmd).parseArgs(args);
        long heap = cmd.options().heapBytes();
        return "-Xmx" + ((heap + (1 << 20) - 1) >> 20) + "m";
    }
}
