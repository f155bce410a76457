package io.kvtier.cli;

import io.kvtier.server.KvtierServer;
import io.kvtier.server.ServerOptions;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kvtier server}: runs one node until SIGTERM/SIGINT, then shuts down gracefully (memory written to disk).
 * Flags win over the config file, which wins over the built-in defaults.
 */
@Command(name = "server", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Run a kvtier node (Redis protocol; memory tier swapping to a disk tier).")
final class ServerCommand implements Callable<Integer> {
    private static final Logger log = LoggerFactory.getLogger(ServerCommand.class);
    static final List<String> SETTINGS = List.of("port", "bind", "dir", "memory", "disk", "requirepass",
            "max-value", "metrics-port", "protected-mode", "max-clients", "disk-threads", "io-threads");

    @Option(names = "--port", paramLabel = "PORT", description = "RESP port (default 6379; 0 = any free port).")
    String port;

    @Option(names = "--bind", paramLabel = "ADDRS", description = "Addresses to listen on, space-separated "
            + "(default 127.0.0.1).")
    String bind;

    @Option(names = "--dir", paramLabel = "DIR", description = "Data directory for the disk tier "
            + "(default ./kvtier-data).")
    String dir;

    @Option(names = "--memory", paramLabel = "SIZE", description = "Memory tier budget, off-heap (default 1g).")
    String memory;

    @Option(names = "--disk", paramLabel = "SIZE", description = "Disk tier budget (default 8g).")
    String disk;

    @Option(names = "--requirepass", paramLabel = "PASS", description = "Password for AUTH (default none).")
    String requirePass;

    @Option(names = "--max-value", paramLabel = "SIZE", description = "Largest value accepted (default 512m).")
    String maxValue;

    @Option(names = "--metrics-port", paramLabel = "PORT", description = "Prometheus /metrics port "
            + "(default 0 = off).")
    String metricsPort;

    @Option(names = "--protected-mode", paramLabel = "yes|no", description = "Refuse a non-loopback bind without "
            + "--requirepass (default yes).")
    String protectedMode;

    @Option(names = "--max-clients", paramLabel = "N", description = "Most concurrent clients (default 10000).")
    String maxClients;

    @Option(names = "--disk-threads", paramLabel = "N", description = "Threads reading the disk tier (default 4).")
    String diskThreads;

    @Option(names = "--io-threads", paramLabel = "N", description = "Event-loop threads serving connections "
            + "(default: half the cores, at least 1).")
    String ioThreads;

    @Option(names = "--config", paramLabel = "FILE", description = "Config file: 'name value' lines, names as "
            + "the flags above without dashes.")
    Path config;

    @Override
    public Integer call() throws Exception {
        ServerOptions options = options();
        KvtierServer server = KvtierServer.start(options);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                server.close();
            } catch (Exception e) {
                log.error("shutdown failed", e);
            } finally {
                stopped.countDown();
            }
        }, "kvtier-shutdown"));
        stopped.await();
        return 0;
    }

    ServerOptions options() throws java.io.IOException {
        Map<String, String> file = config == null ? Map.of() : ConfigFile.read(config, SETTINGS);
        ServerOptions d = ServerOptions.defaults();
        return new ServerOptions(
                pick(bind, file, "bind", d.bind()),
                integer("port", pick(port, file, "port", Integer.toString(d.port()))),
                Path.of(pick(dir, file, "dir", d.dir().toString())),
                size("memory", pick(memory, file, "memory", null), d.memoryBytes()),
                size("disk", pick(disk, file, "disk", null), d.diskBytes()),
                size("max-value", pick(maxValue, file, "max-value", null), d.maxValueBytes()),
                pick(requirePass, file, "requirepass", null),
                yesNo("protected-mode", pick(protectedMode, file, "protected-mode", "yes")),
                integer("metrics-port", pick(metricsPort, file, "metrics-port", "0")),
                integer("max-clients", pick(maxClients, file, "max-clients", Integer.toString(d.maxClients()))),
                integer("disk-threads", pick(diskThreads, file, "disk-threads", Integer.toString(d.diskThreads()))),
                integer("io-threads", pick(ioThreads, file, "io-threads", Integer.toString(d.ioThreads()))),
                d.diskReadBufferBytes());
    }

    private static String pick(String flag, Map<String, String> file, String name, String fallback) {
        return flag != null ? flag : file.getOrDefault(name, fallback);
    }

    private static long size(String name, String text, long fallback) {
        if (text == null) {
            return fallback;
        }
        try {
            return Sizes.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--" + name + ": " + e.getMessage());
        }
    }

    private static int integer(String name, String text) {
        try {
            return Integer.parseInt(text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + ": '" + text + "' is not a whole number");
        }
    }

    private static boolean yesNo(String name, String text) {
        return switch (text.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "yes", "true", "on" -> true;
            case "no", "false", "off" -> false;
            default -> throw new IllegalArgumentException("--" + name + ": '" + text + "' is not yes or no");
        };
    }
}
