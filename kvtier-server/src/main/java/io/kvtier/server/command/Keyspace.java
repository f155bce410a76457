package io.kvtier.server.command;

import io.kvtier.kvcache.KvCache;
import io.kvtier.store.ExpireCondition;
import io.kvtier.store.PinOutcome;
import io.kvtier.store.Removed;
import io.kvtier.store.Residence;
import io.kvtier.store.TieredStore;
import io.kvtier.store.ValueRef;
import java.util.concurrent.CompletableFuture;

/**
 * The one door commands take to the keys, so that what a read of an LMCache key means is decided here and not call
 * site by call site. Every read applies the KV-cache rules (see {@link KvCache}): a chunk's metadata key whose kv_bytes
 * is gone reads as absent to GET, MGET, GETEX, GETRANGE, GETDEL, GETSET's old value... as to TTL, TYPE, STRLEN,
 * TOUCH, EXPIRE, MSETNX and KVC.*; fetches and probes of chunks count in the per-model statistics, attribute reads do
 * not. Writes go to the store unchanged ({@link #forWrites}): a write replaces the key whatever a rule hid (SET's NX
 * and XX see a hidden key as present until its deletion, moments later; SET ... GET's old value reads as GET's).
 *
 * <p>Who bypasses it, on purpose: the cluster's own commands (KVT.*), which copy exactly what the store holds between
 * nodes; FLUSHALL; the keyspace walks (SCAN, KEYS, DBSIZE: a hidden key is deleted within moments of being found);
 * and INFO's reports. Thread-safe; one per server.
 */
public final class Keyspace {
    private final TieredStore store;
    private final KvCache kvcache;

    public Keyspace(TieredStore store, KvCache kvcache) {
        this.store = store;
        this.kvcache = kvcache;
    }

    /** The value of {@code key} for a client, or null: counted, hidden by rule 1. The caller closes it. */
    public ValueRef read(byte[] key) {
        return kvcache.get(key);
    }

    /** As {@link #read(byte[])} for {@code s}: a client in CLIENT NO-TOUCH mode reads without touching (see KvCache). */
    public ValueRef read(Session s, byte[] key) {
        return kvcache.get(key, !s.noTouch);
    }

    /** Whether {@code key} exists, as a probe of a chunk (counted). */
    public boolean exists(byte[] key) {
        return kvcache.exists(key);
    }

    /** Where {@code key}'s value is, or null; counted as a probe. */
    public Residence residence(byte[] key) {
        return kvcache.residence(key);
    }

    /** Whether {@code key} exists for a command that looks at it rather than fetching it (TYPE, MSETNX): not counted. */
    public boolean present(byte[] key) {
        return store.exists(key) && !kvcache.hidden(key);
    }

    /** The value's length (STRLEN), -1 without the key. */
    public long length(byte[] key) {
        return kvcache.hidden(key) ? -1 : store.length(key);
    }

    /** Expiry in epoch millis: 0 = none, -1 = no such key. */
    public long expireAt(byte[] key) {
        return kvcache.hidden(key) ? -1 : store.expireAt(key);
    }

    /** TOUCH: whether the key exists (and was touched). */
    public boolean touch(byte[] key) {
        return !kvcache.hidden(key) && store.touch(key);
    }

    /** Changes the expiry of an existing key under {@code condition}; false, changing nothing, for a hidden key. */
    public CompletableFuture<Boolean> setExpiry(byte[] key, long expireAt, ExpireCondition condition) {
        return kvcache.hidden(key) ? CompletableFuture.completedFuture(false)
                : store.setExpiry(key, expireAt, condition);
    }

    /**
     * Removes {@code key}, with its old value if {@code returnOld} (GETDEL). A hidden key is removed too (its deletion
     * was due) but reads as absent: nothing old, not counted as existing.
     */
    public CompletableFuture<Removed> remove(byte[] key, boolean returnOld) {
        if (returnOld && kvcache.hidden(key)) {
            return store.remove(key, false).thenApply(r -> new Removed(false, null));
        }
        return store.remove(key, returnOld);
    }

    /** KVC.PIN: keeps the value in memory until {@code until} (0: until unpinned); a hidden key is not there. */
    public PinOutcome pin(byte[] key, long until) {
        return kvcache.hidden(key) ? PinOutcome.NO_KEY : store.pin(key, until);
    }

    /** KVC.UNPIN. */
    public boolean unpin(byte[] key) {
        return store.unpin(key);
    }

    /** The store, for writes (SET and friends, MSET): they need no rule, as they replace whatever was there. */
    public TieredStore forWrites() {
        return store;
    }
}
