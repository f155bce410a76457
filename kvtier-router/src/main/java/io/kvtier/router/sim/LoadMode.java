package io.kvtier.router.sim;

import java.util.Locale;

/**
 * How an engine waits for KV loaded from kvtier, as the ways vLLM's connector API and LMCache allow:
 * <ul>
 *   <li>{@link #SYNC}: the step that starts a request's prefill first loads its chunks, the whole batch waiting
 *       (LMCache's default, {@code start_load_kv} before the forward pass);</li>
 *   <li>{@link #ASYNC}: the request waits for its chunks off the batch, holding its blocks, and joins the batch once
 *       they are in (vLLM's {@code WAITING_FOR_REMOTE_KVS}: the NIXL connector, vLLM's OffloadingConnector, LMCache's
 *       multiprocess mode); other requests' steps do not wait;</li>
 *   <li>{@link #LAYERWISE}: the step loads layer by layer, layer i+1's transfer overlapping layer i's compute
 *       (LMCache's layerwise pipelining): it lasts l + (L-1) max(l, c) + c for a load of L l and a compute of L c.</li>
 * </ul>
 */
public enum LoadMode {
    SYNC, ASYNC, LAYERWISE;

    /** The --load-mode flag's help, for engine-sim and bench fleet. */
    public static final String FLAG_DESCRIPTION = "How a step waits for KV loaded from kvtier: sync (the batch "
            + "waits, LMCache's default), async (the request waits off the batch, vLLM's WAITING_FOR_REMOTE_KVS), "
            + "layerwise (layer i+1's transfer overlaps layer i's compute) (default: ${DEFAULT-VALUE}).";

    public static LoadMode of(String name) {
        try {
            return valueOf(name.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("load mode '" + name + "': choose sync, async or layerwise");
        }
    }

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** A layerwise step's length: {@code load} and {@code compute} nanoseconds over {@code layers} layers. */
    static long pipelined(long load, long compute, int layers) {
        long l = load / layers;
        long c = compute / layers;
        return l + (layers - 1) * Math.max(l, c) + c;
    }
}
