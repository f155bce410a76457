package io.kvtier.server.script;

import io.kvtier.server.reply.CommandException;
import java.nio.charset.StandardCharsets;

/**
 * A script's shebang line, as Redis 7.0 reads it ({@code #!lua flags=no-writes,allow-oom}): the engine must be
 * {@code lua}, the only option is {@code flags=}, and the flags are Redis's five. A script without a shebang is in
 * Redis's EVAL compatibility mode (no flags). Errors are Redis's. Of the flags, {@code no-writes} makes the script
 * read-only (as EVAL_RO) and {@code no-cluster} refuses it in a cluster; {@code allow-oom}, {@code allow-stale} and
 * {@code allow-cross-slot-keys} are accepted and change nothing (kvtier refuses no script for memory or staleness,
 * and still needs a script's keys in one slot).
 *
 * @param length bytes of the shebang line, without its line feed (0 without one): compiled as blank, so that line
 *               numbers stay the script's own
 */
public record ScriptFlags(boolean noWrites, boolean noCluster, int length) {
    public static final ScriptFlags NONE = new ScriptFlags(false, false, 0);
    private static final java.util.Set<String> KNOWN = java.util.Set.of("no-writes", "allow-oom", "allow-stale",
            "no-cluster", "allow-cross-slot-keys");

    /** The flags of {@code body}, or Redis's error for a shebang it would refuse. */
    public static ScriptFlags of(byte[] body) {
        if (body.length < 2 || body[0] != '#' || body[1] != '!') {
            return NONE;
        }
        int end = 0;
        while (end < body.length && body[end] != '\n') {
            end++;
        }
        if (end == body.length) {
            throw new CommandException("ERR Invalid script shebang");
        }
        String[] parts = new String(body, 0, end, StandardCharsets.UTF_8).trim().split("[ \t\r]+");
        if (parts.length == 0 || parts[0].isEmpty()) {
            throw new CommandException("ERR Invalid engine in script shebang");
        }
        if (!parts[0].equals("#!lua")) {
            throw new CommandException("ERR Unexpected engine in script shebang: " + parts[0]);
        }
        boolean noWrites = false;
        boolean noCluster = false;
        for (int i = 1; i < parts.length; i++) {
            if (!parts[i].startsWith("flags=")) {
                throw new CommandException("ERR Unknown lua shebang option: " + parts[i]);
            }
            String list = parts[i].substring("flags=".length());
            if (list.isEmpty()) {
                continue;
            }
            for (String flag : list.split(",", -1)) {
                if (!KNOWN.contains(flag)) {
                    throw new CommandException("ERR Unexpected flag in script shebang: " + flag);
                }
                noWrites |= flag.equals("no-writes");
                noCluster |= flag.equals("no-cluster");
            }
        }
        return new ScriptFlags(noWrites, noCluster, end);
    }
}
