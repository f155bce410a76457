package io.kvtier.server.command;

import static io.kvtier.server.command.CommandSpec.container;
import static io.kvtier.server.command.CommandSpec.of;

import io.kvtier.resp.RespCommand;
import io.kvtier.server.reply.CommandException;
import io.kvtier.server.reply.Reply;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** Connection commands: PING ECHO HELLO AUTH SELECT QUIT RESET CLIENT. */
final class ConnectionCommands {
    static final String REDIS_VERSION = "7.0.15";
    /**
     * The longest client name, lib-name and lib-ver (Redis has no limit): with it one CLIENT LIST line stays under
     * {@link Session#MAX_DESCRIPTION_BYTES}, and the whole reply under that times the clients admitted.
     */
    static final int MAX_NAME_BYTES = 256;

    private ConnectionCommands() {
    }

    static List<CommandSpec> specs() {
        return List.of(
                of("ping", -1, "fast", 0, 0, 0, ConnectionCommands::ping),
                of("echo", 2, "fast", 0, 0, 0, (s, c, r) -> {
                    r.bulk(c.bytes(1));
                    return null;
                }),
                of("hello", -1, "no_auth loading stale fast", 0, 0, 0, ConnectionCommands::hello),
                of("auth", -2, "no_auth loading stale fast", 0, 0, 0, ConnectionCommands::auth),
                of("select", 2, "loading stale fast", 0, 0, 0, ConnectionCommands::select),
                of("quit", -1, "no_auth loading stale fast", 0, 0, 0, (s, c, r) -> {
                    r.ok();
                    s.closeAfterReply = true;
                    return null;
                }),
                of("reset", 1, "no_auth loading stale fast", 0, 0, 0, (s, c, r) -> {
                    s.discardTransaction();
                    s.name = null;
                    s.protocol = 2;
                    r.protocol(2);
                    s.authenticated = s.server.options().requirePass() == null;
                    r.simple("RESET");
                    return null;
                }),
                container("client", -2,
                        of("client|id", 2, "loading stale fast", 0, 0, 0, (s, c, r) -> {
                            r.integer(s.id);
                            return null;
                        }),
                        of("client|no-touch", 3, "loading stale fast", 0, 0, 0, (s, c, r) -> {
                            // As Redis 7.2: reads of this client change no key's standing in the eviction policy (and
                            // here: promote nothing from disk, count in no KV-cache hit statistics).
                            if (Args.is(c.bytes(2), "on")) {
                                s.noTouch = true;
                            } else if (Args.is(c.bytes(2), "off")) {
                                s.noTouch = false;
                            } else {
                                throw new CommandException("ERR syntax error");
                            }
                            r.ok();
                            return null;
                        }),
                        of("client|setname", 3, "loading stale fast", 0, 0, 0, (s, c, r) -> {
                            s.name = validName(c, 2, "Client names");
                            r.ok();
                            return null;
                        }),
                        of("client|getname", 2, "loading stale fast", 0, 0, 0, (s, c, r) -> {
                            if (s.name == null) {
                                r.nil();
                            } else {
                                r.bulk(s.name);
                            }
                            return null;
                        }),
                        of("client|info", 2, "loading stale fast", 0, 0, 0, (s, c, r) -> {
                            r.verbatim(s.describe(s) + "\n");
                            return null;
                        }),
                        of("client|list", -2, "loading stale", 0, 0, 0, ConnectionCommands::clientList),
                        of("client|setinfo", 4, "loading stale fast", 0, 0, 0, ConnectionCommands::setInfo),
                        of("client|kill", -3, "admin noscript loading stale", 0, 0, 0, ConnectionCommands::kill)));
    }

    /**
     * CLIENT KILL addr (the old form: OK, or "No such client"; may close this very connection) or CLIENT KILL with
     * ID, ADDR, LADDR, TYPE, USER and SKIPME filters (the number closed), as Redis 7.0. Every client is of type normal
     * and user default (kvtier has no ACL users); a connection closed here goes as if its client had hung up.
     */
    private static CompletableFuture<Void> kill(Session s, RespCommand c, Reply r) {
        String addr = null;
        String laddr = null;
        long id = 0;
        boolean skipMe = true;
        boolean none = false; // a filter no client can match (type master, replica or pubsub)
        if (c.argCount() == 3) {
            addr = Args.str(c.bytes(2));
            skipMe = false;
        } else {
            for (int i = 2; i < c.argCount(); i += 2) {
                if (i + 1 >= c.argCount()) {
                    throw new CommandException(CommandException.SYNTAX);
                }
                String option = Args.lower(c.bytes(i));
                String value = Args.str(c.bytes(i + 1));
                switch (option) {
                    case "id" -> {
                        Long v = Args.tryParseLong(c.bytes(i + 1));
                        if (v == null || v < 1) { // Redis answers this for a non-number too
                            throw new CommandException("ERR client-id should be greater than 0");
                        }
                        id = v;
                    }
                    case "type" -> {
                        switch (value.toLowerCase(java.util.Locale.ROOT)) {
                            case "normal" -> { }
                            case "master", "replica", "slave", "pubsub" -> none = true;
                            default -> throw new CommandException("ERR Unknown client type '" + value + "'");
                        }
                    }
                    case "addr" -> addr = value;
                    case "laddr" -> laddr = value;
                    case "user" -> {
                        if (!value.equals("default")) {
                            throw new CommandException("ERR No such user '" + value + "'");
                        }
                    }
                    case "skipme" -> {
                        if (value.equalsIgnoreCase("yes")) {
                            skipMe = true;
                        } else if (value.equalsIgnoreCase("no")) {
                            skipMe = false;
                        } else {
                            throw new CommandException(CommandException.SYNTAX);
                        }
                    }
                    default -> throw new CommandException(CommandException.SYNTAX);
                }
            }
        }
        int killed = 0;
        for (Session other : s.server.sessions().values()) {
            if (none || addr != null && !addr.equals(Session.hostPort(other.channel.remoteAddress()))
                    || laddr != null && !laddr.equals(Session.hostPort(other.channel.localAddress()))
                    || id != 0 && other.id != id || other == s && skipMe) {
                continue;
            }
            killed++;
            if (other == s) {
                s.closeAfterReply = true;
            } else {
                other.channel.close();
            }
        }
        if (c.argCount() == 3) {
            if (killed == 0) {
                throw new CommandException("ERR No such client");
            }
            r.ok();
        } else {
            r.integer(killed);
        }
        return null;
    }

    private static CompletableFuture<Void> ping(Session s, RespCommand c, Reply r) {
        if (c.argCount() > 2) {
            throw new CommandException("ERR wrong number of arguments for 'ping' command");
        }
        if (c.argCount() == 1) {
            r.simple("PONG");
        } else {
            r.bulk(c.bytes(1));
        }
        return null;
    }

    private static CompletableFuture<Void> hello(Session s, RespCommand c, Reply r) {
        int next = 1;
        long version = 0;
        if (c.argCount() >= 2) {
            Long v = Args.tryParseLong(c.bytes(next++));
            if (v == null) {
                throw new CommandException("ERR Protocol version is not an integer or out of range");
            }
            if (v < 2 || v > 3) {
                throw new CommandException("NOPROTO unsupported protocol version");
            }
            version = v;
        }
        byte[] user = null;
        byte[] pass = null;
        byte[] name = null;
        for (int j = next; j < c.argCount(); j++) {
            int more = c.argCount() - 1 - j;
            if (Args.is(c.bytes(j), "auth") && more >= 2) {
                user = c.bytes(j + 1);
                pass = c.bytes(j + 2);
                j += 2;
            } else if (Args.is(c.bytes(j), "setname") && more >= 1) {
                name = nameArg(c, ++j, "Client names");
            } else {
                throw new CommandException("ERR Syntax error in HELLO option '" + Args.quoted(c.bytes(j)) + "'");
            }
        }
        if (user != null) {
            authenticate(s, user, pass);
        }
        if (!s.authenticated) {
            throw new CommandException("NOAUTH HELLO must be called with the client already authenticated, "
                    + "otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client "
                    + "and select the RESP protocol version at the same time");
        }
        if (name != null) {
            s.name = validName(name, "Client names");
        }
        if (version != 0) {
            s.protocol = (int) version;
            r.protocol((int) version);
        }
        r.map(7);
        r.bulk("server");
        r.bulk("redis");
        r.bulk("version");
        r.bulk(REDIS_VERSION);
        r.bulk("proto");
        r.integer(s.protocol);
        r.bulk("id");
        r.integer(s.id);
        r.bulk("mode");
        r.bulk(s.server.options().cluster() != null ? "cluster" : "standalone"); // as a cluster-enabled Redis
        r.bulk("role");
        r.bulk("master");
        r.bulk("modules");
        r.array(0);
        return null;
    }

    private static CompletableFuture<Void> auth(Session s, RespCommand c, Reply r) {
        if (c.argCount() > 3) {
            throw new CommandException(CommandException.SYNTAX);
        }
        if (c.argCount() == 2 && s.server.options().requirePass() == null) {
            throw new CommandException("ERR AUTH <password> called without any password configured for the default "
                    + "user. Are you sure your configuration is correct?");
        }
        byte[] user = c.argCount() == 3 ? c.bytes(1) : "default".getBytes(StandardCharsets.US_ASCII);
        authenticate(s, user, c.bytes(c.argCount() - 1));
        r.ok();
        return null;
    }

    /** Checks the default user's password in constant time; on success marks the session authenticated. */
    private static void authenticate(Session s, byte[] user, byte[] pass) {
        String required = s.server.options().requirePass();
        boolean ok = Args.str(user).equals("default") && (required == null
                || MessageDigest.isEqual(required.getBytes(StandardCharsets.UTF_8), pass));
        if (!ok) {
            throw new CommandException("WRONGPASS invalid username-password pair or user is disabled.");
        }
        s.authenticated = true;
    }

    private static CompletableFuture<Void> select(Session s, RespCommand c, Reply r) {
        if (Args.parseInt(c.bytes(1)) != 0) {
            throw new CommandException("ERR DB index is out of range");
        }
        r.ok();
        return null;
    }

    /** Builds the reply on the event loop: at most {@link Session#MAX_DESCRIPTION_BYTES} per client listed. */
    private static CompletableFuture<Void> clientList(Session s, RespCommand c, Reply r) {
        StringBuilder out = new StringBuilder();
        for (Session listed : listed(s, c)) {
            out.append(listed.describe(s)).append('\n');
        }
        r.verbatim(out.toString());
        return null;
    }

    /**
     * The sessions CLIENT LIST reports, under Redis 7.0's argument rules: no filter, TYPE name (every kvtier client
     * is of type normal), or ID id... (in argument order, unknown ids skipped); anything else is a syntax error.
     */
    private static Collection<Session> listed(Session s, RespCommand c) {
        int n = c.argCount();
        if (n == 2) {
            return s.server.sessions().values();
        }
        if (n == 4 && Args.is(c.bytes(2), "type")) {
            return switch (Args.lower(c.bytes(3))) {
                case "normal" -> s.server.sessions().values();
                case "master", "slave", "replica", "pubsub" -> List.of();
                default -> throw new CommandException("ERR Unknown client type '" + Args.quoted(c.bytes(3)) + "'");
            };
        }
        if (n > 3 && Args.is(c.bytes(2), "id")) {
            List<Session> out = new ArrayList<>();
            for (int i = 3; i < n; i++) {
                Long id = Args.tryParseLong(c.bytes(i));
                if (id == null) {
                    throw new CommandException("ERR Invalid client ID");
                }
                Session found = s.server.sessions().get(id);
                if (found != null) {
                    out.add(found);
                }
            }
            return out;
        }
        throw new CommandException(CommandException.SYNTAX);
    }

    private static CompletableFuture<Void> setInfo(Session s, RespCommand c, Reply r) {
        String attr = Args.lower(c.bytes(2));
        if (attr.equals("lib-name")) {
            s.libName = validName(c, 3, "lib-name");
        } else if (attr.equals("lib-ver")) {
            s.libVersion = validName(c, 3, "lib-ver");
        } else {
            throw new CommandException("ERR Unrecognized option '" + Args.quoted(c.bytes(2)) + "'");
        }
        r.ok();
        return null;
    }

    /** Argument {@code i} of {@code c} as a client name (see {@link #validName(byte[], String)}). */
    private static String validName(RespCommand c, int i, String what) {
        return validName(nameArg(c, i, what), what);
    }

    /** Argument {@code i}, refused before it is copied if it is longer than {@link #MAX_NAME_BYTES}. */
    private static byte[] nameArg(RespCommand c, int i, String what) {
        if (c.length(i) > MAX_NAME_BYTES) {
            throw new CommandException("ERR " + what + " longer than " + MAX_NAME_BYTES + " bytes are not supported"
                    + " (got " + c.length(i) + ")");
        }
        return c.bytes(i);
    }

    /** Redis's rule for client names: printable ASCII without spaces; empty clears. */
    private static String validName(byte[] name, String what) {
        for (byte b : name) {
            if (b < '!' || b > '~') {
                throw new CommandException("ERR " + what + " cannot contain spaces, newlines or special characters.");
            }
        }
        return name.length == 0 ? null : Args.str(name);
    }
}
