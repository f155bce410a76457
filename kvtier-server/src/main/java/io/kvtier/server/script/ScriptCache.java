package io.kvtier.server.script;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import org.luaj.vm2.Prototype;

/**
 * Compiled scripts by SHA1 (lower-case hex), bounded: at most {@value #MAX_SCRIPTS} scripts and {@value #MAX_BYTES}
 * bytes of their source; past either, the least recently used are dropped, and an EVALSHA of one answers NOSCRIPT
 * (clients such as Redisson then send EVAL). Redis keeps every script until SCRIPT FLUSH; kvtier will not let a
 * client that generates scripts fill the heap. Thread-safe.
 */
public final class ScriptCache {
    public static final int MAX_SCRIPTS = 10_000;
    public static final long MAX_BYTES = 64L << 20;

    private record Entry(Prototype prototype, int bytes, ScriptFlags flags) {
    }

    private final LinkedHashMap<String, Entry> bySha = new LinkedHashMap<>(16, 0.75f, true);
    private long bytes;

    public synchronized Prototype get(String sha) {
        Entry e = bySha.get(sha);
        return e == null ? null : e.prototype;
    }

    /** The shebang flags of the script under {@code sha}, or null if it is not cached. */
    public synchronized ScriptFlags flags(String sha) {
        Entry e = bySha.get(sha);
        return e == null ? null : e.flags;
    }

    public synchronized boolean contains(String sha) {
        return bySha.containsKey(sha);
    }

    /** Keeps {@code prototype}, compiled from {@code sourceBytes} bytes, under {@code sha}. */
    public synchronized void put(String sha, Prototype prototype, int sourceBytes) {
        put(sha, prototype, sourceBytes, ScriptFlags.NONE);
    }

    /** As above, with the script's shebang flags. */
    public synchronized void put(String sha, Prototype prototype, int sourceBytes, ScriptFlags flags) {
        Entry old = bySha.put(sha, new Entry(prototype, sourceBytes, flags));
        bytes += sourceBytes - (old == null ? 0 : old.bytes);
        Iterator<Map.Entry<String, Entry>> eldest = bySha.entrySet().iterator();
        while ((bySha.size() > MAX_SCRIPTS || bytes > MAX_BYTES) && eldest.hasNext()) {
            Map.Entry<String, Entry> e = eldest.next();
            if (e.getKey().equals(sha)) {
                continue; // the one just loaded stays, even alone over the byte cap
            }
            bytes -= e.getValue().bytes;
            eldest.remove();
        }
    }

    public synchronized void clear() {
        bySha.clear();
        bytes = 0;
    }

    public synchronized int size() {
        return bySha.size();
    }

    public synchronized long bytes() {
        return bytes;
    }
}
