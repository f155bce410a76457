package io.kvtier.kvcache.simulate;

import java.util.Arrays;

/**
 * A trace that names its prompts' blocks itself, as Mooncake's traces do ({@code hash_ids}, also read by Dynamo and
 * aiperf): request r's prompt is {@code blocks(r)} blocks of {@code blockTokens} tokens, the last one holding the
 * rest ({@code promptTokens - blockTokens x (blocks - 1)}, 1 to {@code blockTokens}), and block k's id stands for
 * the whole prefix up to its end, so two prompts share block k exactly when their ids at k are equal. Each block is
 * one chunk of the store, keyed by its id; the ids are taken as given (equal ids are equal blocks). The ids of all
 * requests lie in one primitive array, in serving order. Immutable; built by {@link Builder}, which checks that
 * every prompt has {@code ceil(promptTokens / blockTokens)} ids.
 */
public final class BlockTrace implements ChunkedTrace {
    /** The block size of Mooncake's published traces (FAST'25, {@code FAST25-release/traces}). */
    public static final int MOONCAKE_BLOCK_TOKENS = 512;

    private final int blockTokens;
    private final int[] promptTokens;
    private final int[] newTokens;
    private final int[] firstBlock; // request r's ids are blockIds[firstBlock[r] .. firstBlock[r + 1])
    private final long[] blockIds;
    private final double[] time;    // seconds, in serving order; null: the trace has no times

    private BlockTrace(int blockTokens, int[] promptTokens, int[] newTokens, int[] firstBlock, long[] blockIds,
                       double[] time) {
        this.time = time;
        this.blockTokens = blockTokens;
        this.promptTokens = promptTokens;
        this.newTokens = newTokens;
        this.firstBlock = firstBlock;
        this.blockIds = blockIds;
    }

    /**
     * @param blockTokens tokens per block, as the trace was generated ({@link #MOONCAKE_BLOCK_TOKENS} for
     *                    Mooncake's); {@code --chunk-tokens} on the command line
     */
    public static Builder builder(int blockTokens) {
        return new Builder(blockTokens);
    }

    public int blockTokens() {
        return blockTokens;
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
        return promptTokens.length;
    }

    @Override
    public int promptTokens(int request) {
        return promptTokens[request];
    }

    @Override
    public int newTokens(int request) {
        return newTokens[request];
    }

    @Override
    public long totalPromptTokens() {
        long sum = 0;
        for (int p : promptTokens) {
            sum += p;
        }
        return sum;
    }

    /** Blocks of {@code request}'s prompt, the partial last one included. */
    public int blocks(int request) {
        return firstBlock[request + 1] - firstBlock[request];
    }

    public long blockId(int request, int k) {
        return blockIds[firstBlock[request] + k];
    }

    /** Blocks of all prompts, partial last blocks included. */
    public long totalBlocks() {
        return blockIds.length;
    }

    /** Full blocks of all prompts: the blocks requests look up (a partial last block is never looked up). */
    public long fullBlocks() {
        long sum = 0;
        for (int p : promptTokens) {
            sum += p / blockTokens;
        }
        return sum;
    }

    /** The block's id: the trace's key for the prefix up to the end of block {@code k}. */
    @Override
    public long chunkKey(int request, int k, int chunkTokens) {
        return blockId(request, k);
    }

    /** Chunks must be the trace's blocks, and answers, which have no ids, cannot be stored. */
    @Override
    public String refusal(ChunkOptions chunks) {
        if (chunks.chunkTokens() != blockTokens) {
            return "--chunk-tokens " + chunks.chunkTokens() + " differs from the trace's blocks of " + blockTokens
                    + " tokens: each hash_ids entry is one chunk";
        }
        if (chunks.saveDecode()) {
            return "--save-decode needs keys for the answers' chunks, and the trace's hash_ids name only the prompts'"
                    + " blocks; leave it off (the next prompt that contains an answer names its blocks)";
        }
        return null;
    }

    /**
     * Collects requests in input order and checks each prompt's length against its ids; messages name the fields,
     * for the caller to prefix with a line number. Requests with times are served in time order (ties keep input
     * order), without in input order. Not thread-safe.
     */
    public static final class Builder {
        private final int blockTokens;
        private final ServingOrder order = new ServingOrder("timestamp");
        private int size;
        private int[] prompt = new int[64];
        private int[] answer = new int[64];
        private int[] blockCount = new int[64];
        private long[] ids = new long[1024];
        private int idCount;

        private Builder(int blockTokens) {
            if (blockTokens < 1) {
                throw new IllegalArgumentException("--chunk-tokens " + blockTokens + " must be at least 1");
            }
            this.blockTokens = blockTokens;
        }

        /**
         * Adds one request.
         *
         * @param time     seconds since the trace began, or {@code null} when the trace has no times
         * @param blockIds the prompt's blocks' ids in order, each at least 0; copied
         * @throws IllegalArgumentException naming what is wrong with this request
         */
        public Builder add(Double time, long promptTokens, long newTokens, long[] blockIds) {
            checkRange("input_length", promptTokens, 1);
            checkRange("output_length", newTokens, 0);
            long expected = (promptTokens + blockTokens - 1) / blockTokens;
            if (blockIds.length != expected) {
                throw new IllegalArgumentException("input_length " + promptTokens + " makes " + expected + " block"
                        + (expected == 1 ? "" : "s") + " of " + blockTokens + " tokens (the last one partial or full), "
                        + "but hash_ids has " + blockIds.length + "; if the trace was made with blocks of another size,"
                        + " give that size as --chunk-tokens");
            }
            for (int k = 0; k < blockIds.length; k++) {
                if (blockIds[k] < 0) {
                    throw new IllegalArgumentException("hash_ids[" + k + "] is " + blockIds[k] + "; ids are >= 0");
                }
            }
            if ((long) idCount + blockIds.length > Integer.MAX_VALUE - 8) {
                throw new IllegalArgumentException("the trace has more than " + (Integer.MAX_VALUE - 8) + " blocks");
            }
            order.check(time);
            append((int) promptTokens, (int) newTokens, blockIds);
            order.add(time);
            return this;
        }

        private static void checkRange(String field, long value, long min) {
            if (value < min || value > Integer.MAX_VALUE) {
                throw new IllegalArgumentException(field + " " + value + " must be between " + min + " and "
                        + Integer.MAX_VALUE);
            }
        }

        private void append(int promptTokens, int newTokens, long[] blockIds) {
            if (size == prompt.length) {
                int n = size * 2;
                prompt = Arrays.copyOf(prompt, n);
                answer = Arrays.copyOf(answer, n);
                blockCount = Arrays.copyOf(blockCount, n);
            }
            if (idCount + blockIds.length > ids.length) {
                ids = Arrays.copyOf(ids, (int) Math.min(Integer.MAX_VALUE - 8,
                        Math.max(2L * ids.length, (long) idCount + blockIds.length)));
            }
            prompt[size] = promptTokens;
            answer[size] = newTokens;
            blockCount[size] = blockIds.length;
            System.arraycopy(blockIds, 0, ids, idCount, blockIds.length);
            idCount += blockIds.length;
            size++;
        }

        public BlockTrace build() {
            if (size == 0) {
                throw new IllegalArgumentException("the trace has no requests");
            }
            int[] start = new int[size + 1];  // input order
            for (int i = 0; i < size; i++) {
                start[i + 1] = start[i] + blockCount[i];
            }
            int[] served = order.order();
            int[] pr = new int[size];
            int[] an = new int[size];
            int[] first = new int[size + 1];
            long[] blockIds = new long[idCount];
            for (int i = 0; i < size; i++) {
                int j = served[i];
                pr[i] = prompt[j];
                an[i] = answer[j];
                System.arraycopy(ids, start[j], blockIds, first[i], blockCount[j]);
                first[i + 1] = first[i] + blockCount[j];
            }
            return new BlockTrace(blockTokens, pr, an, first, blockIds, order.times(served));
        }
    }
}
