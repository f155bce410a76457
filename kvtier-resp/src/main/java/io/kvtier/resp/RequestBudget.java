package io.kvtier.resp;

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
 */

/**
 * The heap budget shared by the requests in progress of all connections (Redis's maxmemory-clients). Thread-safe: each
 * {@link Account} is charged by its connection's thread only; eviction callbacks run on the charging thread and must
 * only schedule the close.
 */
public final class RequestBudget {
    private final long limit;
    private final AtomicLong used = new AtomicLong();
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
        return used.get();
    }

    /** Opens one connection's account; {@code evict} is called (once) to close that connection. */
    public Account open(Runnable evict) {
        Account a = new Account(evict);
        accounts.add(a);
        return a;
    }

    /** One connection's share of the budget. Charged and released by its connection's thread only. */
    public final class Account {
        private final Runnable evict;
        private volatile long held;
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
            return held;
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
            while (used.get() + n > limit) {
                Account largest = largestOther();
                if (largest == null || largest.held <= held + n) {
                    return false;
                }
                largest.evictNow();
            }
            add(n);
            return true;
        }

        /** Gives back {@code n} of the bytes charged. */
        public void release(long n) {
            if (n > held) {
                throw new IllegalStateException("releasing " + n + " bytes but the account holds " + held);
            }
            add(-n);
        }

        /** Under the monitor, so that an eviction from another thread takes out exactly what is held. */
        private synchronized void add(long n) {
            held += n;
            if (!evicted) {
                used.addAndGet(n);
            }
        }

        /** Gives back everything and leaves the budget (connection closed). Idempotent. */
        public void close() {
            release(held);
            accounts.remove(this);
        }

        private synchronized void evictNow() {
            if (!evicted) {
                evicted = true;
                used.addAndGet(-held);
                accounts.remove(this);
                evict.run();
            }
        }

        private Account largestOther() {
            Account largest = null;
            for (Account a : accounts) {
                if (a != this && !a.evicted && (largest == null || a.held > largest.held)) {
                    largest = a;
                }
            }
            return largest;
        }
    }
}
