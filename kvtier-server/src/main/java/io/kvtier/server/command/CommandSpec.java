package io.kvtier.server.command;

import java.util.Map;
import java.util.TreeMap;

/**
 * One command's static description, as Redis's COMMAND reports it: name, arity (positive = exact, negative =
 * minimum), flags, key positions, and its subcommands for container commands such as CONFIG.
 */
public record CommandSpec(String name, int arity, String[] flags, int firstKey, int lastKey, int step,
                          CommandAction action, Map<String, CommandSpec> subcommands) {
    /** Allowed before AUTH when a password is set. */
    public boolean allowedWithoutAuth() {
        return hasFlag("no_auth");
    }

    /** Allowed while the node loads (as Redis's CMD_LOADING): for a cluster node, before it has joined. */
    public boolean allowedWhileLoading() {
        return hasFlag("loading");
    }

    private boolean hasFlag(String flag) {
        for (String f : flags) {
            if (f.equals(flag)) {
                return true;
            }
        }
        return false;
    }

    /** Whether {@code argCount} arguments (the name included) fit its arity. */
    public boolean acceptsArgCount(int argCount) {
        return arity > 0 ? argCount == arity : argCount >= -arity;
    }

    public static CommandSpec of(String name, int arity, String flags, int firstKey, int lastKey, int step,
                                 CommandAction action) {
        return new CommandSpec(name, arity, flags.isEmpty() ? new String[0] : flags.split(" "), firstKey, lastKey,
                step, action, Map.of());
    }

    /** A container command whose first argument picks one of {@code subs}. */
    public static CommandSpec container(String name, int arity, CommandSpec... subs) {
        Map<String, CommandSpec> map = new TreeMap<>();
        for (CommandSpec s : subs) {
            map.put(s.name.substring(s.name.indexOf('|') + 1), s);
        }
        return new CommandSpec(name, arity, new String[0], 0, 0, 0, null, map);
    }
}
