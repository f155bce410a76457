package io.kvtier.server.command;

import static io.kvtier.server.command.CommandSpec.of;

import io.kvtier.resp.RespCommand;
import io.kvtier.server.reply.CommandException;
import io.kvtier.server.reply.Reply;
import io.kvtier.server.value.SharedLeases;
import io.kvtier.server.value.Values;
import io.kvtier.store.PutOptions;
import io.kvtier.store.TieredStore;
import io.kvtier.store.ValueRef;
import io.kvtier.store.memory.MemoryValue;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * KVC.SHM: loads and saves through the memory tier's shared slabs for clients on the same host (--shm; the lease
 * rules are {@link SharedLeases}'s). A lease's reply is an array: the lease id, the value's length, then (slab,
 * offset, length) triples locating its bytes in order; slab N is the file {@code KVC.SHM.SLAB N} names.
 * <pre>
 *   KVC.SHM.HELLO                   pid, check path, token, lease ms, slabs: a client maps the check path and
 *                                   compares the token to know it shares this server's memory
 *   KVC.SHM.SLAB n                  the path and size of slab n (nil while it is not mapped yet)
 *   KVC.SHM.GET key                 a read lease; nil for a missing key; "disk" for a value not in memory (GET it)
 *   KVC.SHM.RESERVE key length      a write lease on fresh memory for key (waits for room, as SET's value does)
 *   KVC.SHM.COMMIT lease            stores the filled value under its key, as SET does (+OK)
 *   KVC.SHM.RELEASE lease [...]     ends leases: per lease 1 if it was held until now, else 0 (read again)
 * </pre>
 * Single-node servers only for now: in a cluster the commands answer an error (writes must go through the
 * primary's replication, reads through its fences), and clients use GET and SET.
 */
final class SharedMemoryCommands {
    private SharedMemoryCommands() {
    }

    static List<CommandSpec> specs() {
        return List.of(
                of("kvc.shm.hello", 1, "fast", 0, 0, 0, SharedMemoryCommands::hello),
                of("kvc.shm.slab", 2, "fast", 0, 0, 0, SharedMemoryCommands::slab),
                of("kvc.shm.get", 2, "readonly fast", 1, 1, 1, SharedMemoryCommands::get),
                of("kvc.shm.reserve", 3, "write denyoom", 1, 1, 1, SharedMemoryCommands::reserve),
                of("kvc.shm.commit", 2, "write denyoom", 0, 0, 0, SharedMemoryCommands::commit),
                of("kvc.shm.release", -2, "fast", 0, 0, 0, SharedMemoryCommands::release));
    }

    private static SharedLeases leases(Session s) {
        SharedLeases leases = s.server.sharedLeases();
        if (leases == null) {
            throw new CommandException("ERR shared memory is off: start the server with --shm yes (clients on other "
                    + "hosts use GET and SET)");
        }
        if (s.server.cluster() != null) {
            throw new CommandException("ERR shared memory is for a single-node server; in a cluster use GET and SET");
        }
        return leases;
    }

    private static CompletableFuture<Void> hello(Session s, RespCommand c, Reply r) {
        SharedLeases leases = leases(s);
        TieredStore store = s.server.store();
        r.array(10);
        r.bulk("pid");
        r.integer(leases.pid());
        r.bulk("check");
        r.bulk(leases.checkPath());
        r.bulk("token");
        r.bulk(leases.token());
        r.bulk("lease-ms");
        r.integer(leases.leaseMillis());
        r.bulk("slabs");
        r.integer(store.slabCount());
        return null;
    }

    private static CompletableFuture<Void> slab(Session s, RespCommand c, Reply r) {
        SharedLeases leases = leases(s);
        TieredStore store = s.server.store();
        long n = Args.parseLong(c.bytes(1));
        if (n < 0 || n >= store.slabCount()) {
            throw new CommandException("ERR no slab " + n + ": slabs are 0.." + (store.slabCount() - 1));
        }
        int fd = store.slabFd((int) n);
        if (fd < 0) {
            r.nil();
            return null;
        }
        r.array(2);
        r.bulk(leases.path(fd));
        r.integer(store.slabBytes((int) n));
        return null;
    }

    private static CompletableFuture<Void> get(Session s, RespCommand c, Reply r) {
        SharedLeases leases = leases(s);
        ValueRef ref = s.server.keyspace().read(s, c.bytes(1));
        if (ref == null) {
            r.nil();
            return null;
        }
        if (!ref.inMemory()) {
            ref.close();
            r.bulk("disk");
            return null;
        }
        SharedLeases.ReadLease lease;
        try {
            lease = leases.read(s.id, ref);
        } catch (SharedLeases.LeaseLimitException e) {
            throw new CommandException("LEASEFULL " + e.getMessage());
        }
        lease(r, lease.id(), lease.memory());
        return null;
    }

    private static CompletableFuture<Void> reserve(Session s, RespCommand c, Reply r) {
        SharedLeases leases = leases(s);
        TieredStore store = s.server.store();
        byte[] key = c.bytes(1);
        Values.checkKey(key);
        long length = Args.parseLong(c.bytes(2));
        if (length < 0 || length > s.server.options().maxValueBytes()) {
            throw new CommandException("ERR length " + length + " is outside 0.." + s.server.options().maxValueBytes()
                    + " (--max-value)");
        }
        if (store.bypassesMemory(length)) {
            throw new CommandException("ERR a value of " + length + " bytes goes straight to disk (over half the "
                    + "memory budget): SET it");
        }
        try {
            leases.reserve(s.id, length);
        } catch (SharedLeases.LeaseLimitException e) {
            throw new CommandException("LEASEFULL " + e.getMessage());
        }
        CompletableFuture<MemoryValue> memory;
        try {
            memory = store.allocate(length);
        } catch (RuntimeException e) {
            leases.unreserve(s.id, length);
            throw e;
        }
        return Async.then(memory.whenComplete((m, e) -> {
            if (e != null) {
                leases.unreserve(s.id, length);
            }
        }), r, mem -> {
            if (!s.channel.isActive()) { // the client left while the memory was found: nobody will commit it
                mem.release();
                leases.unreserve(s.id, length);
                return null;
            }
            SharedLeases.WriteLease lease = leases.write(s.id, key, mem);
            lease(r, lease.id(), mem);
            return null;
        });
    }

    private static CompletableFuture<Void> commit(Session s, RespCommand c, Reply r) {
        SharedLeases leases = leases(s);
        long id = Args.parseLong(c.bytes(1));
        if (!(leases.find(s.id, id) instanceof SharedLeases.WriteLease lease)) {
            throw new CommandException("ERR no write lease " + id + " on this connection (expired after "
                    + leases.leaseMillis() + " ms, released, or committed): reserve again");
        }
        if (!leases.commit(lease)) {
            throw new CommandException("ERR write lease " + id + " expired before its commit: reserve again");
        }
        MemoryValue mem = lease.memory();
        mem.filledInPlace();
        return Async.then(s.server.keyspace().forWrites().put(lease.key(), mem,
                PutOptions.PLAIN.withVersion(s.writeVersion)), r, result -> {
                    r.ok();
                    return null;
                });
    }

    private static CompletableFuture<Void> release(Session s, RespCommand c, Reply r) {
        SharedLeases leases = leases(s);
        long[] ids = new long[c.argCount() - 1];
        for (int i = 1; i < c.argCount(); i++) {
            ids[i - 1] = Args.parseLong(c.bytes(i));
        }
        if (ids.length == 1) {
            r.integer(leases.release(s.id, ids[0]));
            return null;
        }
        r.array(ids.length);
        for (long id : ids) {
            r.integer(leases.release(s.id, id));
        }
        return null;
    }

    private static void lease(Reply r, long id, MemoryValue memory) {
        long[] extents = memory.extents();
        r.array(2 + extents.length);
        r.integer(id);
        r.integer(memory.length());
        for (long x : extents) {
            r.integer(x);
        }
    }
}
