package io.kvtier.server.command;

import static io.kvtier.server.command.CommandSpec.of;

import io.kvtier.client.cluster.SlotHash;
import io.kvtier.cluster.node.ClusterNode;
import io.kvtier.resp.RespCommand;
import io.kvtier.server.reply.CommandException;
import io.kvtier.server.reply.Reply;
import io.kvtier.store.ExpireCondition;
import io.kvtier.store.Removed;
import io.kvtier.store.TieredStore;
import io.kvtier.store.disk.RecordFormat;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Predicate;

/**
 * Commands on keys as such: existence, deletion, expiry, enumeration, and the whole keyspace. KEYS and SCAN walk the
 * index on {@link KeyspaceWalker}'s threads, never on the event loop.
 */
final class KeyspaceCommands {
    private KeyspaceCommands() {
    }

    static List<CommandSpec> specs() {
        return List.of(
                of("del", -2, "write", 1, -1, 1, KeyspaceCommands::del),
                of("unlink", -2, "write fast", 1, -1, 1, KeyspaceCommands::del),
                of("exists", -2, "readonly fast", 1, -1, 1, (s, c, r) -> count(c, r, s.server.keyspace()::exists)),
                of("touch", -2, "readonly fast", 1, -1, 1, (s, c, r) -> count(c, r, s.server.keyspace()::touch)),
                of("type", 2, "readonly fast", 1, 1, 1, (s, c, r) -> {
                    r.simple(s.server.keyspace().present(c.bytes(1)) ? "string" : "none");
                    return null;
                }),
                of("ttl", 2, "readonly fast", 1, 1, 1, (s, c, r) -> ttl(s, c, r, true)),
                of("pttl", 2, "readonly fast", 1, 1, 1, (s, c, r) -> ttl(s, c, r, false)),
                of("expiretime", 2, "readonly fast", 1, 1, 1, (s, c, r) -> expireTime(s, c, r, true)),
                of("pexpiretime", 2, "readonly fast", 1, 1, 1, (s, c, r) -> expireTime(s, c, r, false)),
                of("expire", -3, "write fast", 1, 1, 1, (s, c, r) -> expire(s, c, r, 1000, false, "expire")),
                of("pexpire", -3, "write fast", 1, 1, 1, (s, c, r) -> expire(s, c, r, 1, false, "pexpire")),
                of("expireat", -3, "write fast", 1, 1, 1, (s, c, r) -> expire(s, c, r, 1000, true, "expireat")),
                of("pexpireat", -3, "write fast", 1, 1, 1, (s, c, r) -> expire(s, c, r, 1, true, "pexpireat")),
                of("persist", 2, "write fast", 1, 1, 1, (s, c, r) -> Async.then(
                        s.server.keyspace().setExpiry(c.bytes(1), 0, ExpireCondition.XX), r, changed -> {
                            r.integer(changed ? 1 : 0);
                            return null;
                        })),
                of("scan", -2, "readonly", 0, 0, 0, KeyspaceCommands::scan),
                of("keys", 2, "readonly", 0, 0, 0, KeyspaceCommands::keys),
                of("dbsize", 1, "readonly fast", 0, 0, 0, KeyspaceCommands::dbsize),
                of("randomkey", 1, "readonly", 0, 0, 0, KeyspaceCommands::randomKey),
                of("flushall", -1, "write", 0, 0, 0, KeyspaceCommands::flush),
                of("flushdb", -1, "write", 0, 0, 0, KeyspaceCommands::flush));
    }

    private static CompletableFuture<Void> del(Session s, RespCommand c, Reply r) {
        Keyspace keyspace = s.server.keyspace();
        List<CompletableFuture<Removed>> removals = new ArrayList<>();
        for (int i = 1; i < c.argCount(); i++) {
            removals.add(keyspace.remove(c.bytes(i), false));
        }
        return Async.then(CompletableFuture.allOf(removals.toArray(CompletableFuture[]::new)), r, v -> {
            r.integer(removals.stream().filter(f -> f.join().existed()).count());
            return null;
        });
    }

    private static CompletableFuture<Void> count(RespCommand c, Reply r, java.util.function.Predicate<byte[]> test) {
        long n = 0;
        for (int i = 1; i < c.argCount(); i++) {
            if (test.test(c.bytes(i))) {
                n++;
            }
        }
        r.integer(n);
        return null;
    }

    private static CompletableFuture<Void> ttl(Session s, RespCommand c, Reply r, boolean seconds) {
        long at = s.server.keyspace().expireAt(c.bytes(1));
        if (at < 0) {
            r.integer(-2);
        } else if (at == 0) {
            r.integer(-1);
        } else {
            long ms = Math.max(0, at - System.currentTimeMillis());
            r.integer(seconds ? (ms + 500) / 1000 : ms);
        }
        return null;
    }

    /** EXPIRETIME and PEXPIRETIME (Redis 7.0): the absolute Unix time it expires at; -1 without one, -2 if absent. */
    private static CompletableFuture<Void> expireTime(Session s, RespCommand c, Reply r, boolean seconds) {
        long at = s.server.keyspace().expireAt(c.bytes(1));
        r.integer(at < 0 ? -2 : at == 0 ? -1 : seconds ? at / 1000 : at);
        return null;
    }

    /** EXPIRE and friends, as Redis 7.0's expireGenericCommand: options first, then the time, then the key. */
    private static CompletableFuture<Void> expire(Session s, RespCommand c, Reply r, long unitMillis,
                                                  boolean absolute, String command) {
        ExpireOptions options = ExpireOptions.parse(c);
        long when = Args.parseLong(c.bytes(2));
        String invalid = "ERR invalid expire time in '" + command + "' command";
        if (unitMillis == 1000) {
            if (when > Long.MAX_VALUE / 1000 || when < Long.MIN_VALUE / 1000) {
                throw new CommandException(invalid);
            }
            when *= 1000;
        }
        if (!absolute) {
            long now = System.currentTimeMillis();
            if (when > Long.MAX_VALUE - now) {
                throw new CommandException(invalid);
            }
            when += now;
        }
        byte[] key = c.bytes(1);
        if (options.requiresExpiry() && s.server.keyspace().expireAt(key) <= 0) {
            r.integer(0);
            return null;
        }
        // The store reads 0 as "no expiry": any time at or before the epoch is simply in the past.
        return Async.then(s.server.keyspace().setExpiry(key, Math.max(1, when), options.condition()), r,
                changed -> {
                    r.integer(changed ? 1 : 0);
                    return null;
                });
    }

    /**
     * Which of the keys this node holds are its keyspace, for SCAN, KEYS, DBSIZE and RANDOMKEY: alone, all of them
     * (null); in a cluster, those of the slots it is primary for under its current table. A backup's copies are not
     * its keyspace, so a client that scans every primary meets each key exactly once, as in Redis Cluster.
     */
    static Predicate<byte[]> ownKeys(Session s) {
        ClusterNode node = s.server.cluster();
        if (node == null) {
            return s.server.options().cluster() == null ? null : k -> false;
        }
        ClusterNode.Topology t = node.topology();
        if (!t.table().isOwned()) {
            return k -> false;
        }
        BitSet primary = t.table().primarySlotsOf(t.self());
        return k -> primary.get(SlotHash.slot(k));
    }

    /** DBSIZE: the store's count alone; in a cluster, this node's primary keys counted on a walker thread. */
    private static CompletableFuture<Void> dbsize(Session s, RespCommand c, Reply r) {
        Predicate<byte[]> own = ownKeys(s);
        if (own == null) {
            r.integer(s.server.store().size());
            return null;
        }
        return KeyspaceWalker.countKeys(s.server.store(), own, r);
    }

    /**
     * RANDOMKEY: a key of this node's keyspace (see {@link #ownKeys}) or nil: from a random scan bucket on, the first
     * bucket holding any gives one of its keys at random. Walks at most every bucket once, on a walker thread.
     */
    private static CompletableFuture<Void> randomKey(Session s, RespCommand c, Reply r) {
        Predicate<byte[]> own = ownKeys(s);
        TieredStore store = s.server.store();
        CompletableFuture<byte[]> found = KeyspaceWalker.walk(() -> {
            ThreadLocalRandom random = ThreadLocalRandom.current();
            int first = random.nextInt(TieredStore.SCAN_BUCKETS);
            List<byte[]> candidates = new ArrayList<>();
            for (int i = 0; i < TieredStore.SCAN_BUCKETS && candidates.isEmpty(); i++) {
                store.scanBucket((first + i) % TieredStore.SCAN_BUCKETS, k -> {
                    if (own == null || own.test(k)) {
                        candidates.add(k);
                    }
                });
            }
            return candidates.isEmpty() ? null : candidates.get(random.nextInt(candidates.size()));
        });
        return Async.then(found, r, key -> {
            if (key == null) {
                r.nil();
            } else {
                r.bulk(key);
            }
            return null;
        });
    }

    private static CompletableFuture<Void> scan(Session s, RespCommand c, Reply r) {
        long cursor = parseCursor(c.bytes(1));
        long count = 10;
        byte[] pattern = null;
        String type = null;
        for (int i = 2; i < c.argCount(); i++) {
            boolean hasNext = i + 1 < c.argCount();
            if (Args.is(c.bytes(i), "count") && hasNext) {
                count = Args.parseLong(c.bytes(++i));
                if (count < 1) {
                    throw new CommandException(CommandException.SYNTAX);
                }
            } else if (Args.is(c.bytes(i), "match") && hasNext) {
                pattern = c.bytes(++i);
                if (pattern.length == 1 && pattern[0] == '*') {
                    pattern = null; // as Redis: "*" matches every key, the empty one too
                }
            } else if (Args.is(c.bytes(i), "type") && hasNext) {
                type = Args.lower(c.bytes(++i));
            } else {
                throw new CommandException(CommandException.SYNTAX);
            }
        }
        TieredStore store = s.server.store(); // a walk, not a read: see Keyspace
        boolean strings = type == null || type.equals("string");
        byte[] match = pattern;
        long work = count;
        Predicate<byte[]> own = ownKeys(s);
        CompletableFuture<ScanPage> page = KeyspaceWalker.walk(() -> scanPage(store, own, cursor, work, match,
                strings));
        return Async.then(page, r, p -> {
            r.array(2);
            r.bulk(Long.toString(p.next()));
            r.array(p.keys().size());
            return KeyspaceWalker.writeKeys(r, p.keys());
        });
    }

    /** One SCAN reply: the cursor to continue from (0: done) and the keys found. */
    record ScanPage(long next, List<byte[]> keys) {
    }

    /**
     * Visits whole scan buckets from {@code cursor} (a bucket number, as Redis's cursor names a hash-table bucket)
     * until about {@code count} keys were examined, as Redis's COUNT; a cursor past the last bucket ends the scan.
     * Every key present for the whole scan is returned once: a key never changes bucket. Only keys {@code own} accepts
     * are returned (null: all). Runs on a walker thread.
     */
    static ScanPage scanPage(TieredStore store, Predicate<byte[]> own, long cursor, long count, byte[] pattern,
                             boolean strings) {
        List<byte[]> keys = new ArrayList<>();
        if (cursor < 0 || cursor >= TieredStore.SCAN_BUCKETS) {
            return new ScanPage(0, keys);
        }
        Glob glob = pattern == null ? null : Glob.compile(pattern, RecordFormat.MAX_KEY_LENGTH);
        int bucket = (int) cursor;
        long seen = 0;
        while (bucket < TieredStore.SCAN_BUCKETS && seen < count) {
            seen += store.scanBucket(bucket++, key -> {
                if (strings && (own == null || own.test(key)) && (glob == null || glob.matches(key))) {
                    keys.add(key);
                }
            });
        }
        return new ScanPage(bucket == TieredStore.SCAN_BUCKETS ? 0 : bucket, keys);
    }

    /**
     * A SCAN cursor read as Redis 7.0's parseScanCursorOrReply reads it with strtoul: decimal digits after an optional
     * sign, and "" is 0; a leading blank, any other character or more than 64 bits is an invalid cursor. Returns the
     * unsigned 64-bit value. kvtier's cursors are scan bucket numbers, stateless: any valid number is a cursor, and one
     * past the last bucket (or negative as a long) simply ends the scan.
     */
    static long parseCursor(byte[] b) {
        CommandException invalid = new CommandException("ERR invalid cursor");
        if (b.length == 0) {
            return 0;
        }
        int i = b[0] == '+' || b[0] == '-' ? 1 : 0;
        if (i == b.length) {
            throw invalid;
        }
        for (int j = i; j < b.length; j++) {
            if (b[j] < '0' || b[j] > '9') {
                throw invalid;
            }
        }
        BigInteger value = new BigInteger(new String(b, i, b.length - i, StandardCharsets.US_ASCII));
        if (value.bitLength() > 64) {
            throw invalid;
        }
        return b[0] == '-' ? -value.longValue() : value.longValue();
    }

    /** KEYS: this node's keys matching the pattern, found on a walker thread (see {@link KeyspaceWalker}). */
    private static CompletableFuture<Void> keys(Session s, RespCommand c, Reply r) {
        byte[] pattern = c.bytes(1);
        boolean all = pattern.length == 1 && pattern[0] == '*'; // as Redis: "*" matches the empty key too
        TieredStore store = s.server.store();
        Predicate<byte[]> own = ownKeys(s);
        CompletableFuture<List<byte[]>> found = KeyspaceWalker.walk(() -> {
            Glob glob = all ? null : Glob.compile(pattern, RecordFormat.MAX_KEY_LENGTH);
            List<byte[]> keys = new ArrayList<>();
            store.forEachKey(k -> {
                if ((own == null || own.test(k)) && (glob == null || glob.matches(k))) {
                    keys.add(k);
                }
            });
            return keys;
        });
        return Async.then(found, r, keys -> {
            r.array(keys.size());
            return KeyspaceWalker.writeKeys(r, keys);
        });
    }

    private static CompletableFuture<Void> flush(Session s, RespCommand c, Reply r) {
        if (c.argCount() > 2 || c.argCount() == 2 && !Args.is(c.bytes(1), "async") && !Args.is(c.bytes(1), "sync")) {
            throw new CommandException(CommandException.SYNTAX);
        }
        ClusterNode node = s.server.cluster();
        if (node == null || s.clusterAware) { // cluster clients flush node by node, as in Redis Cluster
            return Async.then(s.server.store().clear(), r, v -> {
                r.ok();
                return null;
            });
        }
        // A cluster-unaware client means the whole store: every member flushes.
        java.util.List<CompletableFuture<Void>> all = new java.util.ArrayList<>();
        all.add(s.server.store().clear());
        ClusterNode.Topology t = node.topology();
        for (io.kvtier.cluster.Member m : t.table().members()) {
            if (!t.isSelf(m)) {
                all.add(node.send(ClusterNode.Lane.REPLICATION, m, "KVT.FLUSH", Long.toString(t.table().epoch())).thenAccept(reply -> {
                    try {
                        if (reply instanceof io.kvtier.client.Reply.Error e) {
                            throw new CommandException("ERR " + m.id() + " did not flush: " + e.message());
                        }
                    } finally {
                        io.kvtier.client.Reply.release(reply);
                    }
                }));
            }
        }
        return Async.then(CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)), r, v -> {
            r.ok();
            return null;
        });
    }
}
