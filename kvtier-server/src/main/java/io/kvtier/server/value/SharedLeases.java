package io.kvtier.server.value;

import io.kvtier.store.TieredStore;
import io.kvtier.store.ValueRef;
import io.kvtier.store.memory.MemoryValue;
import io.kvtier.store.memory.SharedSegment;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * KVC.SHM's leases: a client on the same host maps the memory tier's slabs (memfds, --shm) and reads or fills a value's
 * bytes in place, instead of receiving or sending them over TCP.
 *
 * A read lease holds a reference to the value's memory (MemoryValue), so its pages are not given to another value
 * while the client reads them: an overwrite, a delete, a demotion of the key meanwhile only drops the store's own
 * reference, and the bytes the client reads are the whole old value, never a mix. A write lease holds memory reserved
 * as SET's would be (waiting for the demoter, counted against the budget); the client fills it through its own
 * mapping and commits, and the store publishes it as any SET's value (disk tier, events, expiry, watches: the same
 * put). A lease ends at release or commit, when its connection closes (a killed client leaks nothing: the server sees
 * the socket close), or when it expires (LEASE_MILLIS after it was given: a client stuck in a read): an expired read
 * lease's pages may then hold another value, so KVC.SHM.RELEASE answers 0 for it and the client must discard what it
 * copied (the check after the read). Leases are bounded per client and in all, in count and in the bytes they hold
 * (a read lease's value stays in memory while it is held, even if the key is demoted or deleted), so no client can
 * pin the memory tier.
 *
 * Who may map: the slabs are memfds, reachable as /proc/PID/fd/N by processes the kernel lets open them (the same
 * user, or root, in a PID namespace that sees this process). KVC.SHM.HELLO hands out a token in a small memfd of its
 * own: a client that reads the same token there maps this server's memory; any other (another host, another user, a
 * container without this /proc) uses TCP. The commands need AUTH when a password is set, as every data command does;
 * a process of the same user could read this process's memory anyway (/proc/PID/mem), so the memfds add no exposure
 * beyond the user, which is the boundary (docs/adr/0007-shared-memory.md).
 */
/** The server's shared-memory leases: see the essay above. Thread-safe. */
public final class SharedLeases implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SharedLeases.class);
    /** How long a lease lives without a release or commit. */
    public static final long LEASE_MILLIS = 30_000;
    /** Leases one connection may hold at once. */
    public static final int MAX_PER_CLIENT = 4096;
    /** Leases all connections together may hold. */
    public static final int MAX_LEASES = 65_536;

    /** What a lease holds; ended exactly once. */
    public abstract static sealed class Lease permits ReadLease, WriteLease {
        final long id;
        final long session;
        final long deadlineNanos;
        final long bytes;
        private final AtomicBoolean ended = new AtomicBoolean();

        Lease(long id, long session, long bytes, long lifeMillis) {
            this.id = id;
            this.session = session;
            this.bytes = bytes;
            this.deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(lifeMillis);
        }

        public long id() {
            return id;
        }

        /**
         * Ends the lease, the first time only, giving back what it holds unless {@code keep} (a commit keeps the
         * memory for the store); returns whether this call ended it.
         */
        boolean end(boolean keep) {
            if (!ended.compareAndSet(false, true)) {
                return false;
            }
            if (!keep) {
                free();
            }
            return true;
        }

        abstract void free();
    }

    /** A value's bytes, held for a client reading them in place. */
    public static final class ReadLease extends Lease {
        private final ValueRef ref;

        ReadLease(long id, long session, ValueRef ref, long lifeMillis) {
            super(id, session, ref.length(), lifeMillis);
            this.ref = ref;
        }

        public MemoryValue memory() {
            return ref.memory();
        }

        @Override
        void free() {
            ref.close();
        }
    }

    /** Memory reserved for a value a client fills in place, then commits under {@link #key}. */
    public static final class WriteLease extends Lease {
        final byte[] key;
        private final MemoryValue memory;

        WriteLease(long id, long session, byte[] key, MemoryValue memory, long lifeMillis) {
            super(id, session, memory.length(), lifeMillis);
            this.key = key;
            this.memory = memory;
        }

        public byte[] key() {
            return key;
        }

        public MemoryValue memory() {
            return memory;
        }

        @Override
        void free() {
            memory.release(); // never committed: the reservation goes back
        }
    }

    /** One connection's count and bytes held (read and write leases alike). */
    private static final class Client {
        final AtomicInteger leases = new AtomicInteger();
        final AtomicLong reserved = new AtomicLong();
        final java.util.Set<Long> ids = ConcurrentHashMap.newKeySet();
    }

    private final TieredStore store;
    private final long leaseMillis;
    private final SharedSegment check;
    private final String token;
    private final long pid = ProcessHandle.current().pid();
    private final long maxReservedPerClient;
    private final long maxReserved;
    private final ConcurrentHashMap<Long, Lease> leases = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Long, Client> clients = new ConcurrentHashMap<>();
    private final AtomicInteger total = new AtomicInteger();
    private final AtomicLong reserved = new AtomicLong();
    private final AtomicLong nextId;
    private final ScheduledExecutorService sweeper;
    public final AtomicLong given = new AtomicLong();
    public final AtomicLong expired = new AtomicLong();
    public final AtomicLong committed = new AtomicLong();
    public final AtomicLong refused = new AtomicLong();

    /** @param store a store whose memory tier is shared ({@link TieredStore#sharedMemory}) */
    public SharedLeases(TieredStore store) {
        this(store, LEASE_MILLIS, 1000);
    }

    /** Leases that live {@code leaseMillis}, looked over every {@code sweepMillis} (tests shorten both). */
    public SharedLeases(TieredStore store, long leaseMillis, long sweepMillis) {
        this.leaseMillis = leaseMillis;
        if (!store.sharedMemory()) {
            throw new IllegalArgumentException("the store's memory tier is not shared");
        }
        this.store = store;
        long budget = store.stats().memoryBudget();
        this.maxReservedPerClient = budget / 4;
        this.maxReserved = budget / 2;
        SecureRandom random = new SecureRandom();
        byte[] t = new byte[16];
        random.nextBytes(t);
        this.token = HexFormat.of().formatHex(t);
        this.check = SharedSegment.create("kvtier-shm-check", 4096);
        check.segment().asByteBuffer().put(token.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        this.nextId = new AtomicLong(random.nextLong() & Long.MAX_VALUE >>> 1);
        this.sweeper = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("kvtier-shm-leases")
                .daemon().factory());
        sweeper.scheduleWithFixedDelay(this::expire, sweepMillis, sweepMillis, TimeUnit.MILLISECONDS);
    }

    /** The path a client on this host opens to map slab {@code fd} or the check segment. */
    public String path(int fd) {
        return "/proc/" + pid + "/fd/" + fd;
    }

    public String checkPath() {
        return path(check.fd());
    }

    public String token() {
        return token;
    }

    public long pid() {
        return pid;
    }

    /** How long a lease lives without a release or commit. */
    public long leaseMillis() {
        return leaseMillis;
    }

    public int held() {
        return total.get();
    }

    /** Bytes the leases hold: values being read, memory reserved for values being written. */
    public long heldBytes() {
        return reserved.get();
    }

    /**
     * A read lease on {@code ref} (in memory) for connection {@code session}, which the lease takes over.
     *
     * @throws LeaseLimitException when the connection or the server holds all the leases it may (ref closed)
     */
    public ReadLease read(long session, ValueRef ref) {
        try {
            admit(session, ref.length());
        } catch (LeaseLimitException e) {
            ref.close();
            throw e;
        }
        ReadLease lease = new ReadLease(nextId.incrementAndGet(), session, ref, leaseMillis);
        register(lease);
        given.incrementAndGet();
        return lease;
    }

    /**
     * Checks that connection {@code session} may reserve {@code length} more bytes now, and counts them: call
     * {@link #write} with the memory, or {@link #unreserve} if it could not be had.
     */
    public void reserve(long session, long length) {
        admit(session, length);
    }

    /** Gives back a {@link #reserve} whose memory never came. */
    public void unreserve(long session, long length) {
        Client c = clients.get(session);
        if (c != null) {
            c.leases.decrementAndGet();
            c.reserved.addAndGet(-length);
        }
        total.decrementAndGet();
        reserved.addAndGet(-length);
    }

    /** A write lease on {@code memory}, reserved with {@link #reserve}, for {@code key}. */
    public WriteLease write(long session, byte[] key, MemoryValue memory) {
        WriteLease lease = new WriteLease(nextId.incrementAndGet(), session, key, memory, leaseMillis);
        register(lease);
        given.incrementAndGet();
        return lease;
    }

    private void register(Lease lease) {
        leases.put(lease.id, lease);
        Client c = clients.get(lease.session);
        if (c != null) {
            c.ids.add(lease.id);
        }
    }

    private void admit(long session, long bytes) {
        Client c = clients.computeIfAbsent(session, s -> new Client());
        if (c.leases.incrementAndGet() > MAX_PER_CLIENT) {
            c.leases.decrementAndGet();
            refused.incrementAndGet();
            throw new LeaseLimitException("this connection holds " + MAX_PER_CLIENT + " shared-memory leases, the "
                    + "most it may: release some (KVC.SHM.RELEASE)");
        }
        if (total.incrementAndGet() > MAX_LEASES) {
            total.decrementAndGet();
            c.leases.decrementAndGet();
            refused.incrementAndGet();
            throw new LeaseLimitException("the server holds " + MAX_LEASES + " shared-memory leases, the most it may");
        }
        if (bytes > 0) {
            long mine = c.reserved.addAndGet(bytes);
            long all = reserved.addAndGet(bytes);
            if (mine > maxReservedPerClient || all > maxReserved) {
                c.reserved.addAndGet(-bytes);
                reserved.addAndGet(-bytes);
                c.leases.decrementAndGet();
                total.decrementAndGet();
                refused.incrementAndGet();
                throw new LeaseLimitException(mine > maxReservedPerClient
                        ? "this connection's leases would hold more than " + maxReservedPerClient + " bytes (a "
                                + "quarter of the memory budget): commit or release some first"
                        : "the leases of all connections would hold more than " + maxReserved + " bytes (half the "
                                + "memory budget): try again later");
            }
        }
    }

    /** The lease {@code id} if connection {@code session} holds it and it has not ended; else null. */
    public Lease find(long session, long id) {
        Lease lease = leases.get(id);
        return lease == null || lease.session != session || lease.ended.get() ? null : lease;
    }

    /**
     * Ends lease {@code id} of connection {@code session}: 1 if it was held until now (for a read lease: the bytes
     * read under it were the value's throughout), 0 if it had ended (expired, released, committed) or is not this
     * connection's.
     */
    public int release(long session, long id) {
        Lease lease = leases.get(id);
        if (lease == null || lease.session != session) {
            return 0;
        }
        return finish(lease) ? 1 : 0;
    }

    /**
     * Ends a write lease for its commit: its memory (one reference) is the caller's to put into the store. False if
     * it had ended already (expired, released): the memory is gone.
     */
    public boolean commit(WriteLease lease) {
        if (!finish(lease, true)) {
            return false;
        }
        committed.incrementAndGet();
        return true;
    }

    private boolean finish(Lease lease) {
        return finish(lease, false);
    }

    private boolean finish(Lease lease, boolean keep) {
        if (!lease.end(keep)) {
            return false;
        }
        leases.remove(lease.id, lease);
        total.decrementAndGet();
        Client c = clients.get(lease.session);
        if (c != null) {
            c.leases.decrementAndGet();
            c.ids.remove(lease.id);
        }
        reserved.addAndGet(-lease.bytes);
        if (c != null) {
            c.reserved.addAndGet(-lease.bytes);
        }
        return true;
    }

    /** A connection closed: every lease it holds ends (a killed client leaks nothing). */
    public void sessionClosed(long session) {
        Client c = clients.get(session);
        if (c == null) {
            return;
        }
        for (Long id : c.ids) {
            Lease lease = leases.get(id);
            if (lease != null) {
                finish(lease);
            }
        }
        clients.remove(session, c);
    }

    private void expire() {
        long now = System.nanoTime();
        try {
            for (Map.Entry<Long, Lease> e : leases.entrySet()) {
                Lease lease = e.getValue();
                if (now - lease.deadlineNanos > 0 && finish(lease)) {
                    expired.incrementAndGet();
                }
            }
        } catch (RuntimeException e) {
            log.error("shared-memory lease sweep failed", e);
        }
    }

    /** Ends every lease (the server is stopping, before the store closes) and the check segment. */
    @Override
    public void close() {
        sweeper.shutdownNow();
        for (Lease lease : leases.values()) {
            finish(lease);
        }
        check.close();
    }

    /** A connection or the server holds all the leases it may. */
    public static final class LeaseLimitException extends RuntimeException {
        LeaseLimitException(String message) {
            super(message);
        }
    }
}
