package io.kvtier.cli;

import io.kvtier.cluster.membership.ClusterOptions;
import io.kvtier.cluster.node.ClusterSettings;
import io.kvtier.common.Durations;
import io.kvtier.common.Sizes;
import io.kvtier.server.KvtierServer;
import io.kvtier.server.config.ClientLimits;
import io.kvtier.server.config.ServerOptions;
import io.kvtier.server.config.TlsSettings;
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
    static final List<String> SETTINGS = List.of("port", "bind", "dir", "disk-dir", "memory", "disk", "disk-write-limit", "shm", "requirepass",
            "max-value", "metrics-port", "kv-events", "protected-mode", "max-clients", "disk-threads", "io-threads", "pin-share",
            "index-memory", "client-query-buffer-limit", "maxmemory-clients", "timeout", "read-timeout", "seeds",
            "dns-query", "cluster-port", "cluster-name", "node-id", "weight", "announce", "replicas",
            "replication", "peer-timeout", "proxy", "failure-timeout", "rebalance-rate", "voters", "lease",
            "lost-copies", "tls-port",
            "tls-cert-file", "tls-key-file", "tls-ca-cert-file", "tls-auth-clients", "tls-cluster");
    private static final List<String> TLS_SETTINGS = List.of("tls-cert-file", "tls-key-file", "tls-ca-cert-file",
            "tls-auth-clients", "tls-cluster");

    @Option(names = "--port", paramLabel = "PORT", description = "RESP port (default 6379; 0 = any free port).")
    String port;

    @Option(names = "--bind", paramLabel = "ADDRS", description = "Addresses to listen on, space-separated "
            + "(default 127.0.0.1).")
    String bind;

    @Option(names = "--dir", paramLabel = "DIR", description = "Data directory for the disk tier "
            + "(default ./kvtier-data).")
    String dir;

    @Option(names = "--disk-dir", paramLabel = "DIRS", description = "More directories for the disk tier, "
            + "comma-separated, one per drive: the --disk budget is shared equally between --dir and them, each has "
            + "its own region log and writes in parallel, and losing one loses only its keys (default none).")
    String diskDir;

    @Option(names = "--memory", paramLabel = "SIZE", description = "Memory tier budget, off-heap (default 1g).")
    String memory;

    @Option(names = "--disk", paramLabel = "SIZE", description = "Disk tier budget (default 8g).")
    String disk;

    @Option(names = "--disk-write-limit", paramLabel = "SIZE", description = "Most bytes per second the disk tier "
            + "writes for values leaving memory; over it, KV-cache-sized values (64 KiB or more) never read since "
            + "they were written are dropped instead, unless dropped once before (docs/simulate.md, \"Disk "
            + "admission\"). Default 0: no limit, every value leaving memory is written.")
    String diskWriteLimit;

    @Option(names = "--shm", paramLabel = "yes|no", description = "Keep the memory tier in shared memory (memfds) "
            + "that clients on the same host, as the same user, map to load and save values without TCP (KVC.SHM; "
            + "Linux; docs/shared-memory.md). Default: no.")
    String shm;

    @Option(names = "--requirepass", paramLabel = "PASS", description = "Password for AUTH (default none).")
    String requirePass;

    @Option(names = "--max-value", paramLabel = "SIZE", description = "Largest value accepted (default 512m).")
    String maxValue;

    @Option(names = "--metrics-port", paramLabel = "PORT", description = "Prometheus /metrics port "
            + "(default 0 = off).")
    String metricsPort;

    @Option(names = "--kv-events", paramLabel = "PORT", description = "Publish store events (stored, moved, deleted, "
            + "expired, evicted; ZMQ PUB, msgpack) on PORT, replays and snapshots on PORT+1, for kvtier router "
            + "(docs/routing.md). Default: 0 (off).")
    String kvEvents;

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

    @Option(names = "--pin-share", paramLabel = "FRACTION", description = "Share of --memory that keys pinned with "
            + "KVC.PIN may hold, 0..0.5 (default 0.25).")
    String pinShare;

    @Option(names = "--index-memory", paramLabel = "SIZE", description = "Heap the key index may take (default: "
            + "(--memory + --disk) / 8, at least 64m, at most 4g). A key costs about 176 bytes plus its length; past "
            + "the budget, writes of new keys fail with -OOM while reads and overwrites go on. The launcher sizes the "
            + "JVM heap from it: this plus a quarter plus 768m (KVTIER_HEAP overrides).")
    String indexMemory;

    @Option(names = "--client-query-buffer-limit", paramLabel = "SIZE", description = "Most bytes one request may "
            + "declare, all arguments together; a larger one gets an error and its connection is closed (default 1g, "
            + "as Redis).")
    String queryBufferLimit;

    @Option(names = "--maxmemory-clients", paramLabel = "SIZE", description = "Most heap the requests in progress of "
            + "all clients may hold; over it the client holding the most is closed (default: a quarter of the JVM "
            + "heap, at most 512m; at most half of the heap).")
    String maxMemoryClients;

    @Option(names = "--timeout", paramLabel = "SECONDS", description = "Close a client idle this long (default 0 = "
            + "never, as Redis).")
    String timeout;

    @Option(names = "--read-timeout", paramLabel = "SECONDS", description = "Close a client whose request in "
            + "progress delivers less than 1 MiB (or its rest) in this long (default 30; 0 = never).")
    String readTimeout;

    @Option(names = "--seeds", paramLabel = "HOSTS", description = "Cluster: host:port (cluster ports) of nodes to "
            + "join, comma-separated; this node's own address may be among them. Without --seeds or --dns-query the "
            + "node is a single-node store.")
    String seeds;

    @Option(names = "--dns-query", paramLabel = "NAME", description = "Cluster: find members by resolving NAME "
            + "(a Kubernetes headless Service); all use the same --cluster-port.")
    String dnsQuery;

    @Option(names = "--cluster-port", paramLabel = "PORT", description = "Cluster: control-plane (JGroups) TCP port"
            + " (default RESP port + 10000).")
    String clusterPort;

    @Option(names = "--cluster-name", paramLabel = "NAME", description = "Cluster: name; nodes of other names "
            + "ignore each other (default kvtier).")
    String clusterName;

    @Option(names = "--node-id", paramLabel = "ID", description = "Cluster: this node's stable identity, which "
            + "decides its slots (default: the announced host:port).")
    String nodeId;

    @Option(names = "--weight", paramLabel = "N", description = "Cluster: capacity weight; slots are shared in "
            + "proportion (default: --memory + --disk in MiB).")
    String weight;

    @Option(names = "--announce", paramLabel = "HOST:PORT", description = "Cluster: the RESP address other nodes and"
            + " clients use for this node (default: first --bind address and --port).")
    String announce;

    @Option(names = "--replicas", paramLabel = "R", description = "Cluster: backups per slot on distinct nodes "
            + "(default 1).")
    String replicas;

    @Option(names = "--replication", paramLabel = "sync|async", description = "Cluster: answer writes after the "
            + "backups have them (sync, default) or before (async).")
    String replication;

    @Option(names = "--peer-timeout", paramLabel = "DURATION", description = "Cluster: limit on every call to "
            + "another node (default 1s).")
    String peerTimeout;

    @Option(names = "--proxy", paramLabel = "yes|no", description = "Cluster: forward commands for other nodes' "
            + "slots for cluster-unaware clients (default yes); no = answer -MOVED.")
    String proxy;

    @Option(names = "--lost-copies", paramLabel = "wait|serve", description = "Cluster: when every complete copy "
            + "of a slot is gone (its owners all stopped uncleanly, or lost their disks), wait for an operator's "
            + "kvtier cluster accept-loss (default wait), or serve the best copies that survive by themselves "
            + "(serve: cache semantics).")
    String lostCopies;

    @Option(names = "--failure-timeout", paramLabel = "DURATION", description = "Cluster: how long a silent node "
            + "stays a member (default 5s); a dead process is noticed at once.")
    String failureTimeout;

    @Option(names = "--voters", paramLabel = "IDS", description = "Cluster: node ids (comma-separated) of a new "
            + "cluster's voting members, the same list on each of them; a majority of them must agree on every "
            + "configuration change. Read at a node's first start only. Without it a node with --seeds joins a running "
            + "cluster and never founds one.")
    String voters;

    @Option(names = "--lease", paramLabel = "DURATION", description = "Cluster: how long a primary may serve on "
            + "one lease renewal (default 1s); a dead node's slots move on after about this.")
    String lease;

    @Option(names = "--rebalance-rate", paramLabel = "SIZE", description = "Cluster: most bytes per second this "
            + "node pulls while taking over slots (default 256m).")
    String rebalanceRate;

    @Option(names = "--tls-port", paramLabel = "PORT", description = "TLS port (default 0 = no TLS). With it, "
            + "--port 0 means no plain port (TLS only).")
    String tlsPort;

    @Option(names = "--tls-cert-file", paramLabel = "FILE", description = "TLS: the node's certificate chain (PEM).")
    String tlsCertFile;

    @Option(names = "--tls-key-file", paramLabel = "FILE", description = "TLS: the certificate's private key (PEM, "
            + "unencrypted PKCS#8).")
    String tlsKeyFile;

    @Option(names = "--tls-ca-cert-file", paramLabel = "FILE", description = "TLS: CA certificates (PEM) that client "
            + "and peer certificates are verified against (required).")
    String tlsCaCertFile;

    @Option(names = "--tls-auth-clients", paramLabel = "yes|no|optional", description = "TLS: clients must show a "
            + "certificate the CA signed (yes, default), need not (no), or are verified if they do (optional).")
    String tlsAuthClients;

    @Option(names = "--tls-cluster", paramLabel = "yes|no", description = "TLS: links between cluster nodes use TLS "
            + "and nodes announce their TLS port (default no).")
    String tlsCluster;

    @Option(names = "--config", paramLabel = "FILE", description = "Config file: 'name value' lines, names as "
            + "the flags above without dashes.")
    Path config;

    @Override
    public Integer call() throws Exception {
        Logger log = LoggerFactory.getLogger(ServerCommand.class); // not static: HeapSize parses without logging
        ServerOptions options = options();
        long maxHeap = Runtime.getRuntime().maxMemory();
        if (maxHeap < options.heapBytes()) {
            log.warn("the JVM heap ({} MiB) is below the {} MiB this configuration needs (--index-memory {} MiB plus "
                    + "recovery and headroom): start through ./kvtier, which sizes it, or raise KVTIER_HEAP",
                    maxHeap >> 20, options.heapBytes() >> 20, options.indexBytes() >> 20);
        }
        // SIGHUP is taken over before the node listens: the JVM's own handling would shut it down, and a signal sent
        // as soon as the node answered (TlsIT) used to find the JVM's handler still in place.
        var started = new java.util.concurrent.atomic.AtomicReference<KvtierServer>();
        if (options.tls() != null) {
            reloadTlsOnSighup(started, log);
        }
        KvtierServer server = KvtierServer.start(options);
        started.set(server);
        Thread.setDefaultUncaughtExceptionHandler(server.context().fatalErrors()); // an Error anywhere stops it
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            int exit = 0;
            try {
                server.close();
            } catch (io.kvtier.store.ShutdownLossException e) {
                exit = 1; // the store logged what was lost, in one ERROR line
            } catch (Exception e) {
                exit = 1;
                log.error("shutdown failed", e);
            } catch (Error e) { // after an OutOfMemoryError the flush itself may find no heap left
                exit = io.kvtier.server.fatal.FatalErrorHandler.EXIT_CODE;
                log.error("shutdown failed: {}; values only in memory are lost", e.toString());
            } finally {
                // Even if logging above failed for want of heap: the exit code is decided here. A node that stops
                // because of an Error exits 70 whoever began the stop: FatalErrorHandler's System.exit, or the
                // SIGTERM that -XX:OnOutOfMemoryError sends when the same OutOfMemoryError is thrown, which may come
                // first and would otherwise end the process with 143.
                if (server.context().fatalErrors().fired()) {
                    exit = io.kvtier.server.fatal.FatalErrorHandler.EXIT_CODE;
                }
                stopped.countDown();
                if (exit != 0) {
                    Runtime.getRuntime().halt(exit); // the only way a shutdown hook can choose the exit code
                }
            }
        }, "kvtier-shutdown"));
        stopped.await();
        return 0;
    }

    /**
     * SIGHUP reads the TLS files again (Redis reloads them on CONFIG SET; a signal needs no client): rotated
     * certificates apply to new connections without a restart. Replaces the JVM's own SIGHUP handling, which would
     * shut the node down.
     */
    private static void reloadTlsOnSighup(java.util.concurrent.atomic.AtomicReference<KvtierServer> started,
            Logger log) {
        try {
            sun.misc.SignalHandler before = sun.misc.Signal.handle(new sun.misc.Signal("HUP"), signal -> {
                KvtierServer server = started.get();
                if (server == null) {
                    log.warn("SIGHUP before the node started: the TLS files it is starting with are read now anyway");
                    return;
                }
                try {
                    server.reloadTls();
                } catch (java.io.IOException | RuntimeException e) {
                    log.error("TLS reload on SIGHUP failed; the certificates in use stay: {}", e.getMessage());
                }
            });
            if (before == sun.misc.SignalHandler.SIG_IGN) {
                // Inherited as ignored (started under nohup): the JVM leaves it so, and no SIGHUP ever arrives.
                log.warn("SIGHUP cannot be handled (this process was started with it ignored, e.g. under nohup): "
                        + "restart the node to load new TLS certificates");
            }
        } catch (IllegalArgumentException e) { // the JVM keeps SIGHUP to itself (-Xrs): the node runs on without it
            log.warn("SIGHUP cannot be handled ({}): restart the node to load new TLS certificates", e.getMessage());
        }
    }

    ServerOptions options() throws java.io.IOException {
        Map<String, String> file = config == null ? Map.of() : ConfigFile.read(config, SETTINGS);
        ServerOptions d = ServerOptions.defaults();
        ServerOptions options = new ServerOptions(
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
                d.diskReadBufferBytes(),
                fraction("pin-share", pick(pinShare, file, "pin-share", Double.toString(d.pinShare()))),
                size("index-memory", pick(indexMemory, file, "index-memory", null), 0), null,
                clientLimits(file, d.clientLimits()), null, 0);
        options = options.withKvEvents(integer("kv-events", pick(kvEvents, file, "kv-events", "0")))
                .withDiskWriteLimit(size("disk-write-limit", pick(diskWriteLimit, file, "disk-write-limit", null), 0))
                .withSharedMemory(yesNo("shm", pick(shm, file, "shm", "no")));
        String more = pick(diskDir, file, "disk-dir", null);
        if (more != null && !more.isBlank()) {
            List<Path> dirs = new java.util.ArrayList<>();
            for (String name : more.trim().split("\\s*,\\s*")) {
                if (name.isEmpty()) {
                    throw new IllegalArgumentException("--disk-dir " + more + ": an empty directory name");
                }
                dirs.add(Path.of(name));
            }
            options = options.withMoreDiskDirs(dirs);
        }
        TlsSettings tls = tls(file);
        String seedList = pick(seeds, file, "seeds", null);
        String dns = pick(dnsQuery, file, "dns-query", null);
        if (seedList == null && dns == null) {
            for (String name : List.of("cluster-port", "cluster-name", "node-id", "weight", "announce", "replicas",
                    "replication", "peer-timeout", "proxy", "failure-timeout", "rebalance-rate", "voters", "lease",
                    "lost-copies")) {
                if (clusterFlag(name) != null || file.containsKey(name)) {
                    throw new IllegalArgumentException("--" + name + " needs --seeds or --dns-query (cluster mode)");
                }
            }
            return options.withTls(tls);
        }
        String announced = pick(announce, file, "announce", null);
        String host = options.bind().trim().split("\\s+")[0];
        // Peers and clients reach a --tls-cluster node at its TLS port; the control plane sits 10000 above the RESP
        // port, or above the TLS port when there is no plain one (as Redis's cluster bus).
        int reachedAt = tls != null && tls.cluster() ? tls.port() : options.port();
        String id = pick(nodeId, file, "node-id", announced != null ? announced : host + ":" + reachedAt);
        int cport = integer("cluster-port", pick(clusterPort, file, "cluster-port",
                Integer.toString((options.port() != 0 || tls == null ? options.port() : tls.port()) + 10000)));
        long w = Long.parseLong(pick(weight, file, "weight",
                Long.toString(Math.max(1, (options.memoryBytes() + options.diskBytes()) >> 20))).trim());
        // The control plane binds where the node is reached: the announced host, else the first RESP address.
        String controlHost = announced != null ? io.kvtier.client.HostPort.parse(announced, "--announce").host()
                : host;
        ClusterOptions membership = new ClusterOptions(id, w, controlHost, cport,
                seedList == null ? List.of() : List.of(seedList.trim().split("\\s*,\\s*")), duration("failure-timeout",
                pick(failureTimeout, file, "failure-timeout", "5s")), pick(clusterName, file, "cluster-name", null),
                announced, dns, voterList(pick(voters, file, "voters", null)),
                duration("lease", pick(lease, file, "lease", "1s")), options.dir().resolve("raft"));
        String mode = pick(replication, file, "replication", "sync").trim().toLowerCase(java.util.Locale.ROOT);
        if (!mode.equals("sync") && !mode.equals("async")) {
            throw new IllegalArgumentException("--replication: '" + mode + "' is not sync or async");
        }
        return options.withCluster(new ClusterSettings(membership,
                integer("replicas", pick(replicas, file, "replicas", Integer.toString(ClusterSettings.DEFAULT_REPLICAS))),
                mode.equals("sync"), duration("peer-timeout", pick(peerTimeout, file, "peer-timeout", "1s")),
                yesNo("proxy", pick(proxy, file, "proxy", "yes")),
                size("rebalance-rate", pick(rebalanceRate, file, "rebalance-rate", null),
                        ClusterSettings.DEFAULT_REBALANCE_RATE), lostCopies(pick(lostCopies, file, "lost-copies",
                        "wait")))).withTls(tls);
    }

    /** The TLS settings, or null without a TLS port; the other TLS flags without --tls-port are an error. */
    private TlsSettings tls(Map<String, String> file) {
        String portText = pick(tlsPort, file, "tls-port", null);
        if (portText == null) {
            for (String name : TLS_SETTINGS) {
                if (tlsFlag(name) != null || file.containsKey(name)) {
                    throw new IllegalArgumentException("--" + name + " needs --tls-port");
                }
            }
            return null;
        }
        int p = integer("tls-port", portText);
        if (p < 0 || p > 65535) {
            throw new IllegalArgumentException("--tls-port " + p + " is outside 0..65535 (0 = no TLS)");
        }
        if (p == 0) {
            return null; // Redis's tls-port 0: off, whatever the other settings say
        }
        String cert = pick(tlsCertFile, file, "tls-cert-file", null);
        String key = pick(tlsKeyFile, file, "tls-key-file", null);
        String ca = pick(tlsCaCertFile, file, "tls-ca-cert-file", null);
        return new TlsSettings(p, cert == null ? null : Path.of(cert), key == null ? null : Path.of(key),
                ca == null ? null : Path.of(ca),
                TlsSettings.AuthClients.parse(pick(tlsAuthClients, file, "tls-auth-clients", "yes")),
                yesNo("tls-cluster", pick(tlsCluster, file, "tls-cluster", "no")));
    }

    private String tlsFlag(String name) {
        return switch (name) {
            case "tls-cert-file" -> tlsCertFile;
            case "tls-key-file" -> tlsKeyFile;
            case "tls-ca-cert-file" -> tlsCaCertFile;
            case "tls-auth-clients" -> tlsAuthClients;
            default -> tlsCluster;
        };
    }

    private ClientLimits clientLimits(Map<String, String> file, ClientLimits d) {
        return new ClientLimits(
                size("client-query-buffer-limit", pick(queryBufferLimit, file, "client-query-buffer-limit", null),
                        d.queryBufferLimit()),
                size("maxmemory-clients", pick(maxMemoryClients, file, "maxmemory-clients", null),
                        d.maxMemoryClients()),
                integer("timeout", pick(timeout, file, "timeout", Integer.toString(d.idleTimeoutSeconds()))),
                integer("read-timeout", pick(readTimeout, file, "read-timeout",
                        Integer.toString(d.readTimeoutSeconds()))));
    }

    /** --voters: node ids, comma-separated; null or empty means none. */
    private static List<String> voterList(String text) {
        return text == null || text.isBlank() ? List.of() : List.of(text.trim().split("\\s*,\\s*"));
    }

    private String clusterFlag(String name) {
        return switch (name) {
            case "cluster-port" -> clusterPort;
            case "cluster-name" -> clusterName;
            case "node-id" -> nodeId;
            case "weight" -> weight;
            case "announce" -> announce;
            case "replicas" -> replicas;
            case "replication" -> replication;
            case "peer-timeout" -> peerTimeout;
            case "proxy" -> proxy;
            case "failure-timeout" -> failureTimeout;
            case "voters" -> voters;
            case "lease" -> lease;
            case "lost-copies" -> lostCopies;
            default -> rebalanceRate;
        };
    }

    /** A DURATION flag in {@link Durations}' grammar ("500ms", "2s", "1m"; a bare number is seconds). */
    static java.time.Duration duration(String name, String text) {
        try {
            return Durations.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--" + name + ": " + e.getMessage());
        }
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

    private static double fraction(String name, String text) {
        try {
            return Double.parseDouble(text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + ": '" + text + "' is not a number such as 0.25");
        }
    }

    /** --lost-copies: serve (true) or wait (false). */
    private static boolean lostCopies(String text) {
        return switch (text.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "serve" -> true;
            case "wait" -> false;
            default -> throw new IllegalArgumentException("--lost-copies: '" + text + "' is not wait or serve");
        };
    }

    private static boolean yesNo(String name, String text) {
        return switch (text.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "yes", "true", "on" -> true;
            case "no", "false", "off" -> false;
            default -> throw new IllegalArgumentException("--" + name + ": '" + text + "' is not yes or no");
        };
    }
}
