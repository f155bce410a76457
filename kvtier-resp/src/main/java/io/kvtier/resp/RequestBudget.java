package io.kvtier.resp;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/*
 * Why: the heap must never be what runs out. Every connection's decoder charges the heap its request in progress
 * holds (argument arrays, argv slots) to one shared budget, Redis's maxmemory-clients. When a charge would take the
 * total over the limit, the connection holding the most is evicted, as Redis's client eviction does (evictClients in
 * networking.c): the newcomer is refused only if it is itself the largest, so one attacker holding most of the budget
 * cannot make every honest client fail. An evicted account's bytes stop counting at once (its connection is closed
 * asynchronously, on its own event loop, and gives them back then), so the heap may briefly hold up to the limit plus
 * what evicted connections still hold: at most twice the limit.
 *
 * A small command charges three times and releases once (the command, each argument); on a shared counter and a
 * monitor that was twelve atomic instructions a GET and one cache line every event loop wrote. So each account keeps a
 * reserve of up to RESERVE bytes taken from the limit while the budget is at most half used, and charges and releases
 * within it touch only the account. Over half, accounts give their reserves back on their next release, and charges
 * are exact: the limit still bounds what is taken, reserves included, and at most RESERVE a connection of it is not
 * held by a request.
 */

/**
 * The heap budget shared by the requests in progress of all connections (Redis's maxmemory-clients). Thread-safe: each
 * {@link Account} is charged by its connection's thread only; eviction callbacks run on the charging thread and must
 * only schedule the close.
 */
public final class RequestBudget {
    /**
     * Bytes an account keeps taken from the budget beyond what its requests hold, while the budget is at most half
     * used: a small command's charges and release then touch only the account (no shared atomic, no monitor).
     */
    public static final long RESERVE = 4096;

    private static final VarHandle HELD;

    static {
        try {
            HELD = MethodHandles.lookup().findVarHandle(Account.class, "held", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final long limit;
    /** What the accounts took: what their requests hold plus their reserves (evicted accounts excluded). */
    private final AtomicLong taken = new AtomicLong();
    private final Set<Account> accounts = ConcurrentHashMap.newKeySet();

    /** @param limit most heap bytes all requests in progress may hold together */
    public RequestBudget(long limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("request budget " + limit + " must be at least 1 byte");
        }
        this.limit = limit;
    }

    /** A budget that never refuses (tests, tools). */
    public static RequestBudget unlimited() {
        return new RequestBudget(Long.MAX_VALUE);
    }

    public long limit() {
        return limit;
    }

    /** Heap bytes that the requests of all connections hold now (evicted ones excluded). */
    public long used() {
        long sum = 0;
        for (Account a : accounts) {
            if (!a.evicted) {
                sum += a.held();
            }
        }
        return sum;
    }

    /** Bytes taken from the limit: what the requests hold plus each account's reserve, at most {@link #RESERVE}. */
    public long reserved() {
        return taken.get();
    }

    /** Opens one connection's account; {@code evict} is called (once) to close that connection. */
    public Account open(Runnable evict) {
        Account a = new Account(evict);
        accounts.add(a);
        return a;
    }

    /**
     * One connection's share of the budget. Charged and released by its connection's thread only; {@code held} is
     * written by that thread alone (release stores, read by others with acquire loads), {@code mine} (what this
     * account took from the budget) only under the account's monitor, where eviction gives it back.
     */
    public final class Account {
        private final Runnable evict;
        @SuppressWarnings("unused") // through HELD
        private long held;
        private long mine;
        private volatile boolean evicted;

        private Account(Runnable evict) {
            this.evict = evict;
        }

        /** The budget this account belongs to. */
        public RequestBudget budget() {
            return RequestBudget.this;
        }

        /** Bytes this account holds now. */
        public long held() {
            return (long) HELD.getAcquire(this);
        }

        /** Whether the budget evicted this account to make room for another one. */
        public boolean evicted() {
            return evicted;
        }

        /**
         * Charges {@code n} bytes, evicting the largest other accounts while the total would exceed the limit.
         *
         * @return false if this account is the largest and the total would still exceed the limit (the caller
         *         should refuse its request); nothing is charged then
         */
        public boolean charge(long n) {
            long h = (long) HELD.get(this);
            if (mine - h >= n) { // from the reserve: the common case of a small command
                HELD.setRelease(this, h + n);
                return true;
            }
            long want = n - (mine - h);
            while (taken.get() + want > limit) {
                Account largest = largestOther();
                if (largest == null || largest.held() <= h + n) {
                    return false;
                }
                largest.evictNow();
            }
            take(want, taken.get() + want + RESERVE <= limit / 2 ? RESERVE : 0);
            HELD.setRelease(this, h + n);
            return true;
        }

        /** Gives back {@code n} of the bytes charged (and, past the reserve or with the budget over half, the rest). */
        public void release(long n) {
            long h = (long) HELD.get(this);
            if (n > h) {
                throw new IllegalStateException("releasing " + n + " bytes but the account holds " + h);
            }
            h -= n;
            HELD.setRelease(this, h);
            long spare = mine - h;
            if (spare > 0 && taken.get() > limit / 2) {
                giveBack(spare);
            } else if (spare > 2 * RESERVE) {
                giveBack(spare - RESERVE);
            }
        }

        /** Takes {@code want} bytes for a charge and {@code extra} for the reserve; an evicted account takes none. */
        private synchronized void take(long want, long extra) {
            mine += want + extra;
            if (!evicted) {
                taken.addAndGet(want + extra);
            }
        }

        private synchronized void giveBack(long n) {
            mine -= n;
            if (!evicted) {
                taken.addAndGet(-n);
            }
        }

        /** Gives back everything and leaves the budget (connection closed). Idempotent. */
        public void close() {
            HELD.setRelease(this, 0L);
            synchronized (this) {
                giveBack(mine);
            }
            accounts.remove(this);
        }

        private synchronized void evictNow() {
            if (!evicted) {
                evicted = true;
                taken.addAndGet(-mine);
                accounts.remove(this);
                evict.run();
            }
        }

        private Account largestOther() {
            Account largest = null;
            for (Account a : accounts) {
                if (a != this && !a.evicted && (largest == null || a.held() > largest.held())) {
                    largest = a;
                }
            }
            return largest;
        }
    }
}
