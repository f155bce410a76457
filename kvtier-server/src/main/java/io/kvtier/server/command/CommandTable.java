package io.kvtier.server.command;

import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;

/** All commands by lower-case name; immutable once built. */
public final class CommandTable {
    private final Map<String, CommandSpec> byName = new HashMap<>();

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
        for (CommandSpec spec : Transactions.specs()) {
            add(spec);
        }
        for (CommandSpec spec : ScriptCommands.specs()) {
            add(spec);
        }
        for (CommandSpec spec : PeerCommands.specs()) {
            add(spec);
        }
    }

    private void add(CommandSpec spec) {
        if (byName.put(spec.name(), spec) != null) {
            throw new IllegalStateException("duplicate command " + spec.name());
        }
    }

    public CommandSpec lookup(String lowerName) {
        return byName.get(lowerName);
    }

    public Collection<CommandSpec> all() {
        return Collections.unmodifiableCollection(byName.values());
    }
}
