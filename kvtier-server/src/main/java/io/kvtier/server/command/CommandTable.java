package io.kvtier.server.command;

import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;

/** All commands by lower-case name; immutable once built. */
public final class CommandTable {
    private final Map<String, CommandSpec> byName = new HashMap<>();
    /**
     * The same commands in an open-addressed table keyed by their ASCII-case-folded bytes, for {@link #lookup(byte[])}:
     * a command name as the client sent it, in any case, is found without a String (or any allocation) per command.
     */
    private final byte[][] foldedNames;
    private final CommandSpec[] foldedSpecs;

    public CommandTable() {
        for (CommandSpec spec : StringCommands.specs()) {
            add(spec);
        }
        for (CommandSpec spec : KeyspaceCommands.specs()) {
            add(spec);
        }
        for (CommandSpec spec : ConnectionCommands.specs()) {
            add(spec);
        }
        for (CommandSpec spec : ServerCommands.specs()) {
            add(spec);
        }
        for (CommandSpec spec : ClusterCommands.specs()) {
            add(spec);
        }
        for (CommandSpec spec : KvCacheCommands.specs()) {
            add(spec);
        }
        for (CommandSpec spec : SharedMemoryCommands.specs()) {
            add(spec);
        }
        for (CommandSpec spec : Transactions.specs()) {
            add(spec);
        }
        for (CommandSpec spec : ScriptCommands.specs()) {
            add(spec);
        }
        for (CommandSpec spec : PeerCommands.specs()) {
            add(spec);
        }
        int size = Integer.highestOneBit(byName.size() * 4 - 1) << 1; // at most a quarter full
        foldedNames = new byte[size][];
        foldedSpecs = new CommandSpec[size];
        for (CommandSpec spec : byName.values()) {
            byte[] name = spec.name().getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            int i = foldedHash(name) & (size - 1);
            while (foldedNames[i] != null) {
                i = (i + 1) & (size - 1);
            }
            foldedNames[i] = name;
            foldedSpecs[i] = spec;
        }
    }

    private void add(CommandSpec spec) {
        if (byName.put(spec.name(), spec) != null) {
            throw new IllegalStateException("duplicate command " + spec.name());
        }
    }

    /** The command named {@code name} in any ASCII case, as a client sent it, or null. */
    public CommandSpec lookup(byte[] name) {
        int mask = foldedNames.length - 1;
        for (int i = foldedHash(name) & mask; ; i = (i + 1) & mask) {
            byte[] candidate = foldedNames[i];
            if (candidate == null) {
                return null;
            }
            if (equalsFolded(candidate, name)) {
                return foldedSpecs[i];
            }
        }
    }

    private static int fold(byte b) {
        return b >= 'A' && b <= 'Z' ? b + 32 : b;
    }

    private static int foldedHash(byte[] name) {
        int h = name.length;
        for (byte b : name) {
            h = 31 * h + fold(b);
        }
        return h ^ (h >>> 16);
    }

    /** Whether {@code raw} is {@code lower} (lower case already) in any ASCII case. */
    private static boolean equalsFolded(byte[] lower, byte[] raw) {
        if (lower.length != raw.length) {
            return false;
        }
        for (int i = 0; i < raw.length; i++) {
            if (fold(raw[i]) != lower[i]) {
                return false;
            }
        }
        return true;
    }

    public Collection<CommandSpec> all() {
        return Collections.unmodifiableCollection(byName.values());
    }
}
