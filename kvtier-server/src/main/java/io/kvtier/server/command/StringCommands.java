package io.kvtier.server.command;

import static io.kvtier.server.command.CommandSpec.of;

import io.kvtier.resp.RespCommand;
import io.kvtier.server.reply.CommandException;
import io.kvtier.server.reply.Reply;
import io.kvtier.server.value.Values;
import io.kvtier.store.PutOptions;
import io.kvtier.store.PutOptions.Condition;
import io.kvtier.store.PutResult;
import io.kvtier.store.TieredStore;
import io.kvtier.store.ValueRef;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** The string commands: GET and SET families, multi-key forms, STRLEN, GETRANGE. */
final class StringCommands {
    private StringCommands() {
    }

    static List<CommandSpec> specs() {
        return List.of(
                of("get", 2, "readonly fast", 1, 1, 1, StringCommands::get),
                of("set", -3, "write denyoom", 1, 1, 1, StringCommands::set),
                of("setnx", 3, "write denyoom fast", 1, 1, 1, (s, c, r) -> setWith(s, c, r, 2,
                        new PutOptions(0, Condition.IF_ABSENT, false, false), true)),
                of("setex", 4, "write denyoom", 1, 1, 1, (s, c, r) -> setWith(s, c, r, 3, new PutOptions(
                        Expiry.absolute(c.bytes(2), Expiry.Unit.EX, "setex"), Condition.ALWAYS, false, false), false)),
                of("psetex", 4, "write denyoom", 1, 1, 1, (s, c, r) -> setWith(s, c, r, 3, new PutOptions(
                        Expiry.absolute(c.bytes(2), Expiry.Unit.PX, "psetex"), Condition.ALWAYS, false, false), false)),
                of("getdel", 2, "write fast", 1, 1, 1, StringCommands::getdel),
                of("getset", 3, "write denyoom fast", 1, 1, 1, (s, c, r) -> setWith(s, c, r, 2,
                        new PutOptions(0, Condition.ALWAYS, false, true), false)), // SET key value GET, as Redis
                of("getex", -2, "write fast", 1, 1, 1, StringCommands::getex),
                of("mget", -2, "readonly fast", 1, -1, 1, StringCommands::mget),
                of("mset", -3, "write denyoom", 1, -1, 2, (s, c, r) -> mset(s, c, r, false)),
                of("msetnx", -3, "write denyoom", 1, -1, 2, (s, c, r) -> mset(s, c, r, true)),
                of("strlen", 2, "readonly fast", 1, 1, 1, (s, c, r) -> {
                    r.integer(Math.max(0, s.server.keyspace().length(c.bytes(1))));
                    return null;
                }),
                of("getrange", 4, "readonly", 1, 1, 1, StringCommands::getrange));
    }

    private static CompletableFuture<Void> get(Session s, RespCommand c, Reply r) {
        return Values.write(s.server.diskReads(), s.server.keyspace().read(s, c.bytes(1)), r);
    }

    private static CompletableFuture<Void> set(Session s, RespCommand c, Reply r) {
        PutOptions options = SetArguments.parse(c, 3, false).putOptions("set");
        return setWith(s, c, r, 2, options, false);
    }

    /** Stores argument {@code valueIndex} under argument 1 and replies as SET (or as SETNX's integer). */
    private static CompletableFuture<Void> setWith(Session s, RespCommand c, Reply r, int valueIndex,
                                                   PutOptions options, boolean integerReply) {
        Keyspace keyspace = s.server.keyspace();
        byte[] key = c.bytes(1);
        Values.checkKey(key);
        boolean oldHidden = options.returnOld() && !keyspace.present(key); // GET's old value, read as GET reads it
        CompletableFuture<PutResult> put = Values.put(c, valueIndex, key, options.withVersion(s.writeVersion),
                keyspace.forWrites());
        return Async.then(put, r, result -> {
            if (integerReply) {
                r.integer(result.written() ? 1 : 0);
                return null;
            }
            if (options.returnOld()) {
                if (oldHidden && result.old() != null) {
                    result.old().close();
                    r.nil();
                    return null;
                }
                return Values.write(s.server.diskReads(), result.old(), r);
            }
            if (result.written()) {
                r.ok();
            } else {
                r.nil();
            }
            return null;
        });
    }

    private static CompletableFuture<Void> getdel(Session s, RespCommand c, Reply r) {
        return Async.then(s.server.keyspace().remove(c.bytes(1), true), r,
                removed -> Values.write(s.server.diskReads(), removed.old(), r));
    }

    /** GETEX as Redis 7.0: options first, then a missing key is nil, and only then is the expiry value checked. */
    private static CompletableFuture<Void> getex(Session s, RespCommand c, Reply r) {
        SetArguments a = SetArguments.parse(c, 2, true);
        Keyspace keyspace = s.server.keyspace();
        byte[] key = c.bytes(1);
        ValueRef ref = keyspace.read(s, key);
        if (ref == null || !a.changesExpiry()) {
            return Values.write(s.server.diskReads(), ref, r);
        }
        long expireAt;
        try {
            expireAt = a.expireAt("getex"); // 0 for PERSIST
        } catch (CommandException e) {
            ref.close();
            throw e;
        }
        CompletableFuture<Boolean> change = keyspace.setExpiry(key, expireAt, io.kvtier.store.ExpireCondition.ALWAYS)
                .whenComplete((v, e) -> {
                    if (e != null) {
                        ref.close();
                    }
                });
        return Async.then(change, r, changed -> Values.write(s.server.diskReads(), ref, r));
    }

    /**
     * MGET writes its elements in order, reading at most one disk value at a time (large ones streamed as for GET), so
     * it needs no more staging than a GET, whatever it asks for. An element whose read fails is nil: the array is
     * never left short.
     */
    private static CompletableFuture<Void> mget(Session s, RespCommand c, Reply r) {
        r.array(c.argCount() - 1);
        return mgetFrom(s, c, r, 1);
    }

    private static CompletableFuture<Void> mgetFrom(Session s, RespCommand c, Reply r, int from) {
        for (int i = from; i < c.argCount(); i++) {
            CompletableFuture<Void> pending = Values.writeOrNil(s.server.diskReads(), s.server.keyspace().read(s, c.bytes(i)), r);
            if (pending != null) {
                int next = i + 1;
                return pending.thenComposeAsync(v -> {
                    CompletableFuture<Void> rest = mgetFrom(s, c, r, next);
                    return rest == null ? CompletableFuture.completedFuture(null) : rest;
                }, r.executor());
            }
        }
        return null;
    }

    private static CompletableFuture<Void> mset(Session s, RespCommand c, Reply r, boolean onlyIfNoneExist) {
        if (c.argCount() % 2 == 0) {
            throw new CommandException("ERR wrong number of arguments for '" + (onlyIfNoneExist ? "msetnx" : "mset")
                    + "' command");
        }
        TieredStore store = s.server.keyspace().forWrites();
        if (onlyIfNoneExist) {
            for (int i = 1; i < c.argCount(); i += 2) {
                if (s.server.keyspace().present(c.bytes(i))) {
                    r.integer(0);
                    return null;
                }
            }
        }
        for (int i = 1; i < c.argCount(); i += 2) { // refuse the whole command before storing any of it
            Values.checkKey(c.bytes(i));
            Values.checkAccepted(c, i + 1);
        }
        // Every value is made ready (memory reserved and filled, large ones fully on disk) before it is published;
        // when all are ready at once, all are published together, so running out of memory or disk fails the whole
        // command. An MSET larger than free memory is published in order as memory frees (OrderedPuts): it
        // completes, and a failure midway (memory stuck full) leaves the values before it stored.
        int pairs = (c.argCount() - 1) / 2;
        List<byte[]> keys = new ArrayList<>(pairs);
        List<Values.Deferred> values = new ArrayList<>(pairs);
        long[] lengths = new long[pairs];
        try {
            for (int k = 0; k < pairs; k++) {
                keys.add(c.bytes(1 + 2 * k));
                lengths[k] = c.length(2 + 2 * k);
                values.add(Values.defer(c, 2 + 2 * k, store));
            }
        } catch (RuntimeException e) {
            values.forEach(Values.Deferred::discard);
            throw e;
        }
        CompletableFuture<Void> stored = OrderedPuts.publish(keys, values, lengths, s.writeVersion, r.executor());
        return Async.then(stored, r, v -> {
            if (onlyIfNoneExist) {
                r.integer(1);
            } else {
                r.ok();
            }
            return null;
        });
    }

    private static CompletableFuture<Void> getrange(Session s, RespCommand c, Reply r) {
        long start = Args.parseLong(c.bytes(2));
        long end = Args.parseLong(c.bytes(3));
        ValueRef ref = s.server.keyspace().read(s, c.bytes(1));
        long length = ref == null ? 0 : ref.length();
        // Redis 7.0 getrangeCommand, step by step.
        if (start < 0 && end < 0 && start > end) {
            length = 0;
        }
        if (start < 0) {
            start = length + start;
        }
        if (end < 0) {
            end = length + end;
        }
        start = Math.max(0, start);
        end = Math.max(0, end);
        end = Math.min(end, length - 1);
        if (ref == null || start > end || length == 0) {
            if (ref != null) {
                ref.close();
            }
            r.bulk(new byte[0]);
            return null;
        }
        return Async.then(Values.range(s.server.diskReads(), ref, start, (int) (end - start + 1)), r, bytes -> {
            r.bulk(bytes);
            return null;
        });
    }
}
