package io.kvtier.kvcache.simulate;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * A multi-round chat trace in the order the engine serves it: per request, the session, its prompt and answer
 * lengths in tokens, and the shared prefix (a system prompt) its prompt starts with, if any. A session's prompts
 * extend each other: turn t's prompt is turn t-1's prompt + answer + the new user message, so the chunks of two
 * prompts of one session coincide wherever both are full, and the first {@code prefixTokens} tokens coincide with
 * every other request naming the same prefix. A chunk's key is therefore its session's (or, inside the prefix, the
 * prefix's) identity plus its index. Immutable; built by {@link Builder}, which checks all of that.
 */
public final class Trace implements ChunkedTrace {
    private static final long SHARED = 1L << 62;
    private static final int INDEX_BITS = 24;

    private final int[] session;
    private final int[] promptTokens;
    private final int[] newTokens;
    private final int[] prefix;        // -1: none
    private final int[] prefixTokens;
    private final int sessions;
    private final double[] time;       // seconds, in serving order; null: the trace has no times

    private Trace(int[] session, int[] promptTokens, int[] newTokens, int[] prefix, int[] prefixTokens, int sessions,
                  double[] time) {
        this.time = time;
        this.session = session;
        this.promptTokens = promptTokens;
        this.newTokens = newTokens;
        this.prefix = prefix;
        this.prefixTokens = prefixTokens;
        this.sessions = sessions;
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public boolean timed() {
        return time != null;
    }

    @Override
    public double time(int request) {
        return time == null ? 0 : time[request];
    }

    @Override
    public int size() {
        return session.length;
    }

    public int sessions() {
        return sessions;
    }

    public int session(int request) {
        return session[request];
    }

    @Override
    public int promptTokens(int request) {
        return promptTokens[request];
    }

    @Override
    public int newTokens(int request) {
        return newTokens[request];
    }

    /** Index of the shared prefix request {@code request} starts with, or -1. */
    public int prefix(int request) {
        return prefix[request];
    }

    public int prefixTokens(int request) {
        return prefixTokens[request];
    }

    @Override
    public long totalPromptTokens() {
        long sum = 0;
        for (int p : promptTokens) {
            sum += p;
        }
        return sum;
    }

    /** Shared while the chunk lies inside the request's prefix, else its session's. */
    @Override
    public long chunkKey(int request, int k, int chunkTokens) {
        if (k >= 1 << INDEX_BITS) {
            throw new IllegalArgumentException("a prompt of more than " + (1 << INDEX_BITS) + " chunks");
        }
        int p = prefix[request];
        if (p >= 0 && (long) (k + 1) * chunkTokens <= prefixTokens[request]) {
            return SHARED | (long) p << INDEX_BITS | k;
        }
        return (long) session[request] << INDEX_BITS | k;
    }

    /** Any chunk size and both storing modes: keys follow from the sessions. */
    @Override
    public String refusal(ChunkOptions chunks) {
        return null;
    }

    /**
     * Collects requests in input order (a file's lines, or a generator's output) and checks each against its
     * session's previous turn; messages name the session and turn, for the caller to prefix with a line number.
     * Requests with times are served in time order (ties keep input order); without, in input order. Not
     * thread-safe.
     */
    public static final class Builder {
        private final Map<String, Integer> sessionIds = new HashMap<>();
        private final Map<String, Integer> prefixIds = new HashMap<>();
        private int[] prefixLength = new int[8];
        private int[] lastTurn = new int[16];
        private long[] lastEnd = new long[16];       // previous prompt + answer
        private double[] lastTime = new double[16];
        private int[] sessionPrefix = new int[16];
        private int size;
        private int[] session = new int[64];
        private int[] prompt = new int[64];
        private int[] answer = new int[64];
        private int[] prefix = new int[64];
        private int[] prefixTokens = new int[64];
        private final ServingOrder order = new ServingOrder("time");

        private Builder() {
        }

        /**
         * Adds one request.
         *
         * @param time         seconds since the trace began, or {@code null} when the trace has no times
         * @param prefixName   the shared prefix (system prompt) this session starts with, or {@code null}
         * @param prefixLength its length in tokens (ignored without a prefix)
         * @throws IllegalArgumentException naming what is wrong with this request
         */
        public Builder add(String sessionName, long turn, Double time, long promptTokens, long newTokens,
                           String prefixName, long prefixLength) {
            checkRange("prompt_tokens", promptTokens, 1);
            checkRange("new_tokens", newTokens, 0);
            checkRange("turn", turn, 0);
            order.check(time);
            Integer known = sessionIds.get(sessionName);
            int s = known == null ? newSession(sessionName) : known;
            int p = prefixName == null ? -1 : prefixId(prefixName, prefixLength);
            if (p >= 0 && prefixLength > promptTokens) {
                throw new IllegalArgumentException("prefix_tokens " + prefixLength + " exceeds prompt_tokens "
                        + promptTokens);
            }
            if (known != null) {
                checkContinues(sessionName, s, (int) turn, time, promptTokens, p);
            }
            sessionPrefix[s] = p;
            lastTurn[s] = (int) turn;
            lastEnd[s] = promptTokens + newTokens;
            lastTime[s] = time == null ? 0 : time;
            append(s, (int) promptTokens, (int) newTokens, p, p < 0 ? 0 : (int) prefixLength);
            order.add(time);
            return this;
        }

        private static void checkRange(String field, long value, long min) {
            if (value < min || value > Integer.MAX_VALUE) {
                throw new IllegalArgumentException(field + " " + value + " must be between " + min + " and "
                        + Integer.MAX_VALUE);
            }
        }

        private void checkContinues(String name, int s, int turn, Double t, long promptTokens, int p) {
            if (turn <= lastTurn[s]) {
                throw new IllegalArgumentException("session \"" + name + "\" turn " + turn + " comes after turn "
                        + lastTurn[s] + "; turns of a session must increase");
            }
            if (promptTokens < lastEnd[s]) {
                throw new IllegalArgumentException("session \"" + name + "\" turn " + turn + " has prompt_tokens "
                        + promptTokens + ", less than the previous turn's prompt + answer (" + lastEnd[s]
                        + "); a turn's prompt extends the previous one's");
            }
            if (p != sessionPrefix[s]) {
                throw new IllegalArgumentException("session \"" + name + "\" turn " + turn + " names another prefix "
                        + "than its earlier turns; a session keeps its prefix");
            }
            if (t != null && t < lastTime[s]) {
                throw new IllegalArgumentException("session \"" + name + "\" turn " + turn + " at time " + t
                        + " is earlier than its previous turn (" + lastTime[s] + ")");
            }
        }

        private int newSession(String name) {
            int s = sessionIds.size();
            sessionIds.put(name, s);
            if (s == lastTurn.length) {
                int n = s * 2;
                lastTurn = Arrays.copyOf(lastTurn, n);
                lastEnd = Arrays.copyOf(lastEnd, n);
                lastTime = Arrays.copyOf(lastTime, n);
                sessionPrefix = Arrays.copyOf(sessionPrefix, n);
            }
            return s;
        }

        private int prefixId(String name, long length) {
            checkRange("prefix_tokens", length, 1);
            Integer known = prefixIds.get(name);
            if (known != null) {
                if (prefixLength[known] != length) {
                    throw new IllegalArgumentException("prefix \"" + name + "\" has prefix_tokens " + length
                            + " here and " + prefixLength[known] + " before; a prefix has one length");
                }
                return known;
            }
            int p = prefixIds.size();
            prefixIds.put(name, p);
            if (p == prefixLength.length) {
                prefixLength = Arrays.copyOf(prefixLength, p * 2);
            }
            prefixLength[p] = (int) length;
            return p;
        }

        private void append(int s, int promptTokens, int newTokens, int p, int pTokens) {
            if (size == session.length) {
                int n = size * 2;
                session = Arrays.copyOf(session, n);
                prompt = Arrays.copyOf(prompt, n);
                answer = Arrays.copyOf(answer, n);
                prefix = Arrays.copyOf(prefix, n);
                prefixTokens = Arrays.copyOf(prefixTokens, n);
            }
            session[size] = s;
            prompt[size] = promptTokens;
            answer[size] = newTokens;
            prefix[size] = p;
            prefixTokens[size] = pTokens;
            size++;
        }

        public Trace build() {
            if (size == 0) {
                throw new IllegalArgumentException("the trace has no requests");
            }
            int[] served = order.order();
            int[] s = new int[size];
            int[] pr = new int[size];
            int[] an = new int[size];
            int[] px = new int[size];
            int[] pt = new int[size];
            for (int i = 0; i < size; i++) {
                int j = served[i];
                s[i] = session[j];
                pr[i] = prompt[j];
                an[i] = answer[j];
                px[i] = prefix[j];
                pt[i] = prefixTokens[j];
            }
            return new Trace(s, pr, an, px, pt, sessionIds.size(), order.times(served));
        }
    }
}
