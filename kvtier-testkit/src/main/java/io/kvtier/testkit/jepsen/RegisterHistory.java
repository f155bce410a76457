package io.kvtier.testkit.jepsen;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The operations of many clients on many keys, recorded as they complete (thread-safe), and the two checks a
 * nemesis run asserts: every key's history linearizable ({@link RegisterChecker}) and no acknowledged write lost (the
 * final read of each key returns the value of a write that no acknowledged write followed in real time).
 */
public final class RegisterHistory {
    private final Map<String, List<Op>> byKey = new ConcurrentHashMap<>();
    private final Map<String, Op> finalReads = new ConcurrentHashMap<>();

    /** Records a completed operation on {@code key}. */
    public void add(String key, Op op) {
        List<Op> ops = byKey.computeIfAbsent(key, k -> new ArrayList<>());
        synchronized (ops) {
            ops.add(op);
        }
    }

    /** Records the read of {@code key} made once the cluster serves again after a fault (checked like any other). */
    public void addFinalRead(String key, Op read) {
        add(key, read);
        finalReads.put(key, read);
    }

    /** The keys recorded so far. */
    public List<String> keys() {
        return List.copyOf(new TreeMap<>(byKey).keySet());
    }

    /** Operations recorded on {@code key}, by invocation time. */
    public List<Op> ops(String key) {
        List<Op> ops = byKey.getOrDefault(key, List.of());
        synchronized (ops) {
            return ops.stream().sorted(Comparator.comparingLong(Op::invokeNanos)).toList();
        }
    }

    /** How many operations ended with {@code outcome}. */
    public long count(Op.Outcome outcome) {
        return byKey.keySet().stream().flatMap(k -> ops(k).stream()).filter(op -> op.outcome() == outcome).count();
    }

    /**
     * The verdict: {@code nonLinearizable} keys (the first one's report in {@code firstReport}), {@code lostWrites}
     * keys whose final read lost an acknowledged write (described in {@code lost}), and {@code badReads}: reads whose
     * value was not the register's at any linearization point, counted over the non-linearizable keys as the reads
     * that returned a value some acknowledged write had already replaced when the read was invoked.
     */
    public record Verdict(int keys, int nonLinearizable, int badReads, String firstReport, List<String> lost) {
        public boolean clean() {
            return nonLinearizable == 0 && lost.isEmpty();
        }
    }

    /** Checks every key. */
    public Verdict check() {
        int bad = 0;
        int badReads = 0;
        String first = "";
        List<String> lost = new ArrayList<>();
        List<String> keys = keys();
        for (String key : keys) {
            List<Op> ops = ops(key);
            RegisterChecker.Result r = RegisterChecker.check(key, ops);
            if (!r.linearizable()) {
                bad++;
                badReads += staleReads(ops);
                if (first.isEmpty()) {
                    first = r.report();
                }
            }
            Op last = finalReads.get(key);
            if (last != null) {
                String why = lostWrite(ops, last);
                if (why != null) {
                    lost.add(key + ": " + why);
                }
            }
        }
        return new Verdict(keys.size(), bad, badReads, first, lost);
    }

    /**
     * Reads that returned nil or a value that had surely taken effect before another acknowledged write began that
     * completed before the read was invoked: a real-time stale read (the simplest anomaly to count).
     */
    static int staleReads(List<Op> ops) {
        int n = 0;
        for (Op r : ops) {
            if (r.kind() == Op.Kind.READ && r.outcome() == Op.Outcome.OK && superseded(ops, r) != null) {
                n++;
            }
        }
        return n;
    }

    /**
     * An acknowledged write that began after the write {@code read} saw had surely taken effect (it completed, or
     * another read saw its value) and completed before {@code read} began; or null.
     */
    private static Op superseded(List<Op> ops, Op read) {
        Op source = read.value() == null ? null : ops.stream().filter(o -> o.kind() == Op.Kind.WRITE
                && read.value().equals(o.value())).findFirst().orElse(null);
        long sourceDone = source == null ? Long.MIN_VALUE : source.completeNanos();
        if (source != null && source.outcome() == Op.Outcome.INFO) {
            // It may have taken effect at any time, but no later than the first other read that saw it.
            sourceDone = ops.stream().filter(o -> o != read && o.kind() == Op.Kind.READ
                    && o.outcome() == Op.Outcome.OK && read.value().equals(o.value()))
                    .mapToLong(Op::completeNanos).min().orElse(Long.MAX_VALUE);
        }
        for (Op w : ops) {
            if (w.kind() == Op.Kind.WRITE && w.outcome() == Op.Outcome.OK && w != source
                    && w.completeNanos() < read.invokeNanos() && w.invokeNanos() > sourceDone) {
                return w;
            }
        }
        return null;
    }

    /** Why the final read of a key lost an acknowledged write, or null when it did not. */
    static String lostWrite(List<Op> ops, Op finalRead) {
        if (finalRead.value() != null && ops.stream().noneMatch(o -> o.kind() == Op.Kind.WRITE
                && finalRead.value().equals(o.value()))) {
            return "the final read returned '" + finalRead.value() + "', which no client wrote";
        }
        Op newer = superseded(ops, finalRead);
        long origin = ops.stream().mapToLong(Op::invokeNanos).min().orElse(0);
        return newer == null ? null : "the final read returned " + (finalRead.value() == null ? "nil"
                : "'" + finalRead.value() + "'") + " after " + newer.describe(origin);
    }
}
