package io.kvtier.server.command;

import static io.kvtier.server.command.CommandSpec.of;

import io.kvtier.kvcache.KvCache;
import io.kvtier.resp.RespCommand;
import io.kvtier.server.reply.CommandException;
import io.kvtier.server.reply.Reply;
import io.kvtier.store.PinBudgetException;
import io.kvtier.store.PinOutcome;
import io.kvtier.store.Residence;
import io.kvtier.store.ValueRef;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * kvtier's KV-cache commands: KVC.PREFIX and KVC.LOOKUP answer a prompt's chunk lookup in one round trip instead of
 * one EXISTS per chunk; KVC.PIN and KVC.UNPIN keep hot prefixes (system prompts) in memory, within --pin-share.
 */
final class KvCacheCommands {
    private KvCacheCommands() {
    }

    static List<CommandSpec> specs() {
        return List.of(
                of("kvc.prefix", -2, "readonly fast", 1, -1, 1, KvCacheCommands::prefix),
                of("kvc.lookup", -2, "readonly fast", 1, -1, 1, KvCacheCommands::lookup),
                of("kvc.prefetch", -2, "fast", 0, 0, 0, KvCacheCommands::prefetch),
                of("kvc.pin", -2, "fast", 1, 1, 1, KvCacheCommands::pin),
                of("kvc.unpin", 2, "fast", 1, 1, 1, (s, c, r) -> {
                    r.integer(s.server.keyspace().unpin(c.bytes(1)) ? 1 : 0);
                    return null;
                }));
    }

    /** KVC.PREFIX key [key ...]: how many keys, from the first, exist (stops at the first absent one). */
    private static CompletableFuture<Void> prefix(Session s, RespCommand c, Reply r) {
        List<byte[]> keys = new ArrayList<>(c.argCount() - 1);
        for (int i = 1; i < c.argCount(); i++) {
            keys.add(c.bytes(i));
        }
        r.integer(s.server.kvcache().prefix(keys));
        return null;
    }

    /**
     * KVC.PREFETCH key [key ...]: copies the keys' values from disk into memory in the background, ahead of their
     * reads, where memory has room now (never waiting for it); the reply, at once, is how many keys were
     * queued (a full queue drops the rest). Missing keys, keys already in memory and values over 64 MiB cost nothing.
     * Acts on this node's copies: in a cluster, send it to each key's primary (the router does). No key positions,
     * so a cluster client does not route it, and a key of another slot is no error.
     */
    private static CompletableFuture<Void> prefetch(Session s, RespCommand c, Reply r) {
        io.kvtier.server.value.Prefetcher p = s.server.prefetcher();
        if (p == null) {
            throw new CommandException("ERR the server is stopping");
        }
        List<byte[]> keys = new ArrayList<>(c.argCount() - 1);
        for (int i = 1; i < c.argCount(); i++) {
            keys.add(c.bytes(i));
        }
        r.integer(p.offer(keys));
        return null;
    }

    /** KVC.LOOKUP key [key ...]: per key, "memory" (served without I/O), "disk", or nil when absent. */
    private static CompletableFuture<Void> lookup(Session s, RespCommand c, Reply r) {
        KvCache kv = s.server.kvcache();
        r.array(c.argCount() - 1);
        for (int i = 1; i < c.argCount(); i++) {
            Residence where = kv.residence(c.bytes(i));
            if (where == null) {
                r.nil();
            } else {
                r.bulk(where == Residence.MEMORY ? "memory" : "disk");
            }
        }
        return null;
    }

    /**
     * KVC.PIN key [ttl-seconds]: keeps the key's value in memory (for ttl seconds, else until KVC.UNPIN or the key
     * goes). 1 if pinned, 0 if there is no such key; -PINFULL beyond --pin-share of the memory budget. A value on
     * disk is read back into memory before the reply.
     */
    private static CompletableFuture<Void> pin(Session s, RespCommand c, Reply r) {
        if (c.argCount() > 3) {
            throw new CommandException("ERR syntax error: KVC.PIN key [ttl-seconds]");
        }
        long until = 0;
        if (c.argCount() == 3) {
            long ttl = Args.parseLong(c.bytes(2));
            if (ttl <= 0 || ttl > Long.MAX_VALUE / 2000) {
                throw new CommandException("ERR invalid ttl " + ttl + " for KVC.PIN: seconds, at least 1");
            }
            until = System.currentTimeMillis() + ttl * 1000;
        }
        byte[] key = c.bytes(1);
        PinOutcome outcome;
        try {
            outcome = s.server.keyspace().pin(key, until);
        } catch (PinBudgetException e) {
            throw new CommandException("PINFULL " + e.getMessage());
        }
        if (outcome != PinOutcome.ON_DISK) {
            r.integer(outcome == PinOutcome.NO_KEY ? 0 : 1);
            return null;
        }
        ValueRef ref = s.server.keyspace().forWrites().get(key); // the pin's own read: not a client's fetch
        if (ref == null || ref.inMemory()) {
            if (ref != null) {
                ref.close();
            }
            r.integer(ref == null ? 0 : 1);
            return null;
        }
        // A disk read of a pinned key promotes it (TieredStore.maybePromote); the bytes themselves are not needed.
        return Async.then(s.server.diskReads().read(ref), r, read -> {
            read.payload().release();
            read.release().run();
            r.integer(1);
            return null;
        });
    }
}
