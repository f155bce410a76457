package io.kvtier.server.command;

import static io.kvtier.server.command.CommandSpec.container;
import static io.kvtier.server.command.CommandSpec.of;

import io.kvtier.resp.RespCommand;
import io.kvtier.server.config.ServerOptions;
import io.kvtier.server.reply.CommandException;
import io.kvtier.server.reply.Reply;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/** Server commands: COMMAND, CONFIG, INFO, TIME. */
final class ServerCommands {
    private ServerCommands() {
    }

    static List<CommandSpec> specs() {
        return List.of(
                new CommandSpec("command", -1, new String[] {"loading", "stale"}, 0, 0, 0, ServerCommands::command,
                        Map.of()),
                container("config", -2,
                        of("config|get", -3, "admin noscript loading stale", 0, 0, 0, ServerCommands::configGet),
                        of("config|set", -4, "admin noscript loading stale", 0, 0, 0, ServerCommands::configSet),
                        of("config|resetstat", 2, "admin noscript loading stale", 0, 0, 0, (s, c, r) -> {
                            s.server.resetStats();
                            r.ok();
                            return null;
                        })),
                of("info", -1, "loading stale", 0, 0, 0, (s, c, r) -> {
                    List<String> sections = new ArrayList<>();
                    for (int i = 1; i < c.argCount(); i++) {
                        sections.add(Args.lower(c.bytes(i)));
                    }
                    r.verbatim(InfoReport.render(s.server, sections));
                    return null;
                }),
                of("role", 1, "noscript loading stale fast", 0, 0, 0, (s, c, r) -> {
                    // A Redis primary with no replicas attached: kvtier has no Redis replication stream (a cluster's
                    // backups are kept by its own protocol), and clients such as valkey-glide ask ROLE to find a
                    // node they may write to.
                    r.array(3);
                    r.bulk("master");
                    r.integer(0);
                    r.array(0);
                    return null;
                }),
                of("time", 1, "loading stale fast", 0, 0, 0, (s, c, r) -> {
                    java.time.Instant now = java.time.Instant.now();
                    r.array(2);
                    r.bulk(Long.toString(now.getEpochSecond()));
                    r.bulk(Long.toString(now.getNano() / 1000));
                    return null;
                }));
    }

    /** COMMAND, COMMAND COUNT, COMMAND INFO [name...], COMMAND DOCS [name...] (docs are empty), COMMAND LIST. */
    private static CompletableFuture<Void> command(Session s, RespCommand c, Reply r) {
        CommandTable table = s.server.commands();
        List<CommandSpec> visible = table.all().stream().filter(spec -> !internal(spec)).toList();
        if (c.argCount() == 1) {
            r.array(visible.size());
            visible.forEach(spec -> describe(spec, r));
            return null;
        }
        String sub = Args.lower(c.bytes(1));
        switch (sub) {
            case "count" -> {
                arity(c, 2, "command|count");
                r.integer(visible.size());
            }
            case "list" -> list(c, visible, r);
            case "info" -> {
                if (c.argCount() == 2) {
                    r.array(visible.size());
                    visible.forEach(spec -> describe(spec, r));
                } else {
                    r.array(c.argCount() - 2);
                    for (int i = 2; i < c.argCount(); i++) {
                        CommandSpec spec = table.lookup(c.bytes(i));
                        if (spec == null || internal(spec)) {
                            r.nullArray();
                        } else {
                            describe(spec, r);
                        }
                    }
                }
            }
            case "docs" -> r.map(0);
            default -> throw new CommandException("ERR unknown subcommand '" + Args.quoted(c.bytes(1))
                    + "'. Try COMMAND HELP.");
        }
        return null;
    }

    /** The cluster's peer commands (KVT.*): served to peers, never listed to clients. */
    private static boolean internal(CommandSpec spec) {
        return spec.name().startsWith("kvt.");
    }

    /**
     * COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern], as Redis 7.0: every command and every
     * subcommand ("config|get"); PATTERN matches either without regard to case; no command belongs to a module; the
     * ACL categories kvtier can tell from a command's flags are read, write, admin, dangerous, fast and slow (others,
     * such as string or keyspace, list nothing).
     */
    private static void list(RespCommand c, List<CommandSpec> visible, Reply r) {
        String type = null;
        String arg = null;
        for (int i = 2; i < c.argCount(); i += 3) {
            if (!Args.is(c.bytes(i), "filterby") || c.argCount() - 1 - i != 2) {
                throw new CommandException(CommandException.SYNTAX);
            }
            type = Args.lower(c.bytes(i + 1));
            if (!type.equals("module") && !type.equals("aclcat") && !type.equals("pattern")) {
                throw new CommandException(CommandException.SYNTAX);
            }
            arg = Args.str(c.bytes(i + 2));
        }
        List<CommandSpec> all = new ArrayList<>();
        for (CommandSpec spec : visible) {
            all.add(spec);
            all.addAll(spec.subcommands().values());
        }
        List<String> names = new ArrayList<>();
        for (CommandSpec spec : all) {
            if (type == null
                    || type.equals("pattern") && Glob.matches(arg.toLowerCase(java.util.Locale.ROOT).getBytes(
                            StandardCharsets.UTF_8), spec.name().getBytes(StandardCharsets.UTF_8))
                    || type.equals("aclcat") && categories(spec).contains(arg.toLowerCase(java.util.Locale.ROOT))) {
                names.add(spec.name());
            }
        }
        r.array(names.size());
        names.forEach(r::bulk);
    }

    /** The ACL categories a command's flags tell (Redis derives these the same way, besides its per-type ones). */
    private static java.util.Set<String> categories(CommandSpec spec) {
        java.util.Set<String> flags = java.util.Set.of(spec.flags());
        java.util.Set<String> out = new java.util.HashSet<>();
        if (flags.contains("write")) {
            out.add("write");
        }
        if (flags.contains("readonly")) {
            out.add("read");
        }
        if (flags.contains("admin")) {
            out.add("admin");
            out.add("dangerous");
        }
        out.add(flags.contains("fast") ? "fast" : "slow");
        return out;
    }

    private static void arity(RespCommand c, int n, String name) {
        if (c.argCount() != n) {
            throw new CommandException("ERR wrong number of arguments for '" + name + "' command");
        }
    }

    /** One COMMAND entry in Redis 7's ten-field layout (key specs and ACL categories empty). */
    private static void describe(CommandSpec spec, Reply r) {
        r.array(10);
        r.bulk(spec.name());
        r.integer(spec.arity());
        r.set(spec.flags().length);
        for (String f : spec.flags()) {
            r.simple(f);
        }
        r.integer(spec.firstKey());
        r.integer(spec.lastKey());
        r.integer(spec.step());
        r.set(0);
        r.set(0);
        r.array(0);
        r.array(spec.subcommands().size());
        spec.subcommands().values().forEach(sub -> describe(sub, r));
    }

    /** The parameters CONFIG GET knows: what redis-cli and redis-benchmark ask, plus kvtier's own settings. */
    static Map<String, String> parameters(ServerContext server) {
        ServerOptions o = server.options();
        Map<String, String> p = new LinkedHashMap<>();
        p.put("bind", o.bind());
        p.put("port", Integer.toString(o.port()));
        p.put("dir", o.dir().toAbsolutePath().toString());
        p.put("maxmemory", Long.toString(o.memoryBytes()));
        p.put("maxmemory-policy", "noeviction");
        p.put("maxmemory-clients", Long.toString(o.clientLimits().maxMemoryClients()));
        p.put("maxclients", Integer.toString(server.maxClients())); // lowered by the open-file limit
        p.put("requirepass", o.requirePass() == null ? "" : o.requirePass());
        p.put("protected-mode", o.protectedMode() ? "yes" : "no");
        p.put("proto-max-bulk-len", Long.toString(o.maxValueBytes()));
        p.put("databases", "1");
        p.put("save", "");
        p.put("replicaof", ""); // every node is a primary (a cluster's backups are not Redis replicas)
        p.put("slaveof", "");
        p.put("appendonly", "no");
        p.put("timeout", "0");
        p.put("memory", Long.toString(o.memoryBytes()));
        p.put("disk", Long.toString(o.diskBytes()));
        p.put("max-value", Long.toString(o.maxValueBytes()));
        p.put("metrics-port", Integer.toString(o.metricsPort()));
        p.put("disk-threads", Integer.toString(o.diskThreads()));
        p.put("io-threads", Integer.toString(o.ioThreads()));
        io.kvtier.server.config.TlsSettings tls = o.tls();
        p.put("tls-port", Integer.toString(tls == null ? 0 : tls.port()));
        p.put("tls-cert-file", tls == null ? "" : tls.certFile().toString());
        p.put("tls-key-file", tls == null ? "" : tls.keyFile().toString());
        p.put("tls-ca-cert-file", tls == null ? "" : tls.caCertFile().toString());
        p.put("tls-auth-clients", tls == null ? "yes" : tls.authClients().redisName());
        p.put("tls-cluster", tls != null && tls.cluster() ? "yes" : "no");
        String busy = Long.toString(server.scripting().busyMillis());
        p.put("busy-reply-threshold", busy);
        p.put("lua-time-limit", busy); // Redis 7.0's alias
        return p;
    }

    /**
     * CONFIG GET name-or-pattern..., as Redis 7.0: a name without glob characters is looked up case-insensitively
     * and answered under the spelling it was asked with; a pattern matches names case-insensitively. Each parameter
     * is reported once.
     */
    private static CompletableFuture<Void> configGet(Session s, RespCommand c, Reply r) {
        Map<String, String> all = parameters(s.server);
        Map<String, String[]> matched = new LinkedHashMap<>(); // lower-case name -> {reported name, value}
        for (int i = 2; i < c.argCount(); i++) {
            byte[] arg = c.bytes(i);
            String lower = Args.lower(arg);
            if (!isPattern(arg)) {
                if (all.containsKey(lower)) {
                    matched.putIfAbsent(lower, new String[] {Args.str(arg), all.get(lower)});
                }
                continue;
            }
            byte[] pattern = lower.getBytes(StandardCharsets.UTF_8);
            all.forEach((k, v) -> {
                if (Glob.matches(pattern, k.getBytes(StandardCharsets.UTF_8))) {
                    matched.putIfAbsent(k, new String[] {k, v});
                }
            });
        }
        r.map(matched.size());
        matched.values().forEach(nameAndValue -> {
            r.bulk(nameAndValue[0]);
            r.bulk(nameAndValue[1]);
        });
        return null;
    }

    private static boolean isPattern(byte[] arg) {
        for (byte b : arg) {
            if (b == '*' || b == '?' || b == '[') {
                return true;
            }
        }
        return false;
    }

    /** The parameters CONFIG SET may change at run time (every other one is fixed at start-up). */
    private static final java.util.Set<String> MUTABLE = java.util.Set.of("busy-reply-threshold", "lua-time-limit");

    /**
     * CONFIG SET: only {@link #MUTABLE} parameters change; every other kvtier parameter is fixed at start-up. As in
     * Redis 7.0, all pairs are checked before any is applied, the first bad one decides the error, and the error
     * quotes the name as it was sent.
     */
    private static CompletableFuture<Void> configSet(Session s, RespCommand c, Reply r) {
        if (c.argCount() % 2 != 0) {
            throw new CommandException(CommandException.SYNTAX); // an odd number of name/value words
        }
        Map<String, String> known = parameters(s.server);
        Long busy = null;
        for (int i = 2; i < c.argCount(); i += 2) {
            String asSent = Args.quoted(c.bytes(i));
            String name = Args.lower(c.bytes(i));
            if (!known.containsKey(name)) {
                throw new CommandException("ERR Unknown option or number of arguments for CONFIG SET - '" + asSent
                        + "'");
            }
            if (!MUTABLE.contains(name)) {
                throw new CommandException("ERR CONFIG SET failed (possibly related to argument '" + asSent
                        + "') - can't set immutable config");
            }
            long value;
            try {
                value = Long.parseLong(Args.str(c.bytes(i + 1)));
            } catch (NumberFormatException e) {
                value = -1;
            }
            if (value < 0) {
                throw new CommandException("ERR CONFIG SET failed (possibly related to argument '" + asSent
                        + "') - argument couldn't be parsed into an integer");
            }
            busy = value;
        }
        if (busy != null) {
            s.server.scripting().busyMillis(busy);
        }
        r.ok();
        return null;
    }
}
