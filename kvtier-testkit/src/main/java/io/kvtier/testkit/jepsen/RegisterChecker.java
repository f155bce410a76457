package io.kvtier.testkit.jepsen;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Linearizability of one register's history (a single key: writes of values, reads returning a value or nil, initially
 * nil), by the Wing &amp; Gong search with Lowe's memoization (WGL): walk the history's call and return events in time
 * order, linearize a pending call whenever the register model allows it, and backtrack when a return is reached whose
 * operation has not been linearized yet; a (linearized set, register value) pair already explored is never explored
 * again, which is what keeps the search polynomial in practice.
 *
 * <p>Before the search: failed operations are dropped (they did not happen), as are reads with an unknown outcome
 * (they constrain nothing), and so are writes with an unknown outcome whose value no read returned (had such a write
 * taken effect, no read saw it, so leaving it out changes no read). The remaining unknown writes get a return at
 * infinity: they may take effect at any point after their invocation, and one that never did is linearized last.
 * Values must be unique per write (the workload writes client-id:counter), which is what lets reads name their write.
 *
 * <p>Histories should stay small (a few hundred operations): the search is exponential in the worst case, so a
 * workload bounds the operations per key (by moving on to fresh keys).
 */
public final class RegisterChecker {
    private RegisterChecker() {
    }

    /**
     * The verdict on one key's history: {@code linearizable}, or the first window the search could not get past in
     * {@code report} (several lines; empty when linearizable).
     */
    public record Result(boolean linearizable, String report) {
    }

    /** A call or a return event in the doubly linked event list. */
    private static final class Entry {
        final int id;
        final Op op;
        final boolean call;
        final long time;
        Entry match; // the call's return, or the return's call
        Entry prev;
        Entry next;

        Entry(int id, Op op, boolean call, long time) {
            this.id = id;
            this.op = op;
            this.call = call;
            this.time = time;
        }
    }

    private record Memo(BitSet linearized, String value) {
    }

    /** Checks {@code history} (any order) of the key named {@code key} (for the report). */
    public static Result check(String key, List<Op> history) {
        Set<String> read = new HashSet<>();
        for (Op op : history) {
            if (op.kind() == Op.Kind.READ && op.outcome() == Op.Outcome.OK && op.value() != null) {
                read.add(op.value());
            }
        }
        List<Op> ops = history.stream().filter(op -> op.outcome() == Op.Outcome.OK
                || op.outcome() == Op.Outcome.INFO && op.kind() == Op.Kind.WRITE && read.contains(op.value())).toList();
        List<Entry> events = new ArrayList<>();
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            Entry call = new Entry(i, op, true, op.invokeNanos());
            Entry ret = new Entry(i, op, false, op.outcome() == Op.Outcome.INFO ? Long.MAX_VALUE : op.completeNanos());
            call.match = ret;
            ret.match = call;
            events.add(call);
            events.add(ret);
        }
        // Equal times: calls first, so that touching operations count as concurrent (never a false alarm).
        events.sort(Comparator.comparingLong((Entry e) -> e.time).thenComparing(e -> e.call ? 0 : 1));
        Entry head = new Entry(-1, null, true, Long.MIN_VALUE);
        Entry last = head;
        for (Entry e : events) {
            last.next = e;
            e.prev = last;
            last = e;
        }

        BitSet linearized = new BitSet(ops.size());
        String value = null;
        Set<Memo> seen = new HashSet<>();
        Deque<Object[]> stack = new ArrayDeque<>(); // {call entry, register value before it}
        Entry entry = head.next;
        Entry stuck = null; // the return the deepest attempt could not pass
        int deepest = -1;
        String stuckValue = null;
        while (head.next != null) {
            if (entry.call) {
                Op op = entry.op;
                boolean allowed = op.kind() == Op.Kind.WRITE || Objects.equals(op.value(), value);
                String after = op.kind() == Op.Kind.WRITE ? op.value() : value;
                if (allowed) {
                    BitSet next = (BitSet) linearized.clone();
                    next.set(entry.id);
                    if (seen.add(new Memo(next, after))) {
                        stack.push(new Object[] {entry, value});
                        value = after;
                        linearized = next;
                        lift(entry);
                        entry = head.next;
                        continue;
                    }
                }
                entry = entry.next;
            } else {
                if (linearized.cardinality() > deepest) {
                    deepest = linearized.cardinality();
                    stuck = entry;
                    stuckValue = value;
                }
                if (stack.isEmpty()) {
                    return new Result(false, report(key, ops, stuck, stuckValue, deepest));
                }
                Object[] top = stack.pop();
                Entry call = (Entry) top[0];
                value = (String) top[1];
                linearized = (BitSet) linearized.clone();
                linearized.clear(call.id);
                unlift(call);
                entry = call.next;
            }
        }
        return new Result(true, "");
    }

    /** Takes a call and its return out of the list (the operation is linearized). */
    private static void lift(Entry call) {
        call.prev.next = call.next;
        if (call.next != null) {
            call.next.prev = call.prev;
        }
        Entry ret = call.match;
        ret.prev.next = ret.next;
        if (ret.next != null) {
            ret.next.prev = ret.prev;
        }
    }

    /** Puts a lifted call and its return back, in reverse order of {@link #lift}. */
    private static void unlift(Entry call) {
        Entry ret = call.match;
        ret.prev.next = ret;
        if (ret.next != null) {
            ret.next.prev = ret;
        }
        call.prev.next = call;
        if (call.next != null) {
            call.next.prev = call;
        }
    }

    /**
     * The window around the operation whose return no linearization could reach: that operation, what the register
     * held at the deepest point, the operations overlapping it or completed just before it (up to 12), and the first
     * two that wrote or read either value, in time order, times in ms from the first invocation.
     */
    private static String report(String key, List<Op> ops, Entry stuck, String value, int linearized) {
        long origin = ops.stream().mapToLong(Op::invokeNanos).min().orElse(0);
        Op op = stuck.op;
        StringBuilder b = new StringBuilder();
        b.append("key ").append(key).append(": not linearizable: no order of the ").append(ops.size())
                .append(" operations gets past ").append(op.describe(origin)).append(" (at best ").append(linearized)
                .append(" linearized, the register holding ").append(value == null ? "nil" : "'" + value + "'")
                .append(")");
        long from = op.invokeNanos();
        List<Op> window = new ArrayList<>(ops.stream()
                .filter(o -> o != op && o.invokeNanos() <= op.completeNanos()
                        && (o.outcome() == Op.Outcome.INFO || o.completeNanos() >= from - 1_000_000_000L))
                .sorted(Comparator.comparingLong(Op::completeNanos).reversed()).limit(12).toList());
        window.add(op);
        // Where the two values involved came from: the first operations that wrote or read each.
        for (String v : java.util.Arrays.asList(op.value(), value)) {
            ops.stream().filter(o -> v != null && v.equals(o.value()) && !window.contains(o))
                    .sorted(Comparator.comparingLong(Op::invokeNanos)).limit(2).forEach(window::add);
        }
        window.sort(Comparator.comparingLong(Op::invokeNanos));
        for (Op o : window) {
            b.append("\n  ").append(o == op ? "> " : "  ").append(o.describe(origin));
        }
        return b.toString();
    }
}
