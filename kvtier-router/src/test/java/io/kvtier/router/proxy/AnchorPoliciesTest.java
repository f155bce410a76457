package io.kvtier.router.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.router.map.KvCacheMap;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** llm-d's and Dynamo's scoring as the {@code llmd} and {@code dynamo} policies compute it. */
class AnchorPoliciesTest {
    private static final String MODEL = "m";
    private final int[] prompt = IntStream.range(0, 128).toArray(); // 8 blocks of 16
    private final KvCacheMap map = new KvCacheMap();
    private final EngineState holder = new EngineState(EngineEndpoint.parse("http://h1:8000"));
    private final EngineState other = new EngineState(EngineEndpoint.parse("http://h2:8000"));

    AnchorPoliciesTest() {
        map.addEngine(holder.id(), MODEL);
        map.addEngine(other.id(), MODEL);
        long[] hashes = IntStream.range(0, 6).mapToLong(i -> 100 + i).toArray();
        map.stored(holder.id(), "GPU", hashes, null, IntStream.range(0, 96).toArray(), 16, null, null); // 6 blocks
        map.stored(other.id(), "CPU", new long[] {7}, null, IntStream.range(0, 16).toArray(), 16, null, null);
    }

    @Test
    void llmdWeighsThePrefixAgainstKvUtilisationAndQueue() {
        Policy llmd = Policy.named("llmd", map, 8);
        assertThat(llmd.choose(MODEL, null, prompt, List.of(other, holder)).order().get(0)).isSameAs(holder);
        // 3 x 1 (the prefix) + 2 x 0 (a full cache) + 2 x 0 (the longest queue) < 3 x 0.8 / 6 + 2 + 2.
        holder.kvUsage = 1.0;
        holder.waiting = 10;
        Policy.Choice c = llmd.choose(MODEL, null, prompt, List.of(holder, other));
        assertThat(c.order().get(0)).isSameAs(other);
        assertThat(c.predictedCachedTokens()).isEqualTo((int) (16 * LlmdScorers.CPU_WEIGHT));
    }

    @Test
    void dynamoPricesPrefillBlocksAgainstTheBlocksInFlight() {
        Policy dynamo = Policy.named("dynamo", map, 8);
        Policy.Choice c = dynamo.choose(MODEL, null, prompt, List.of(other, holder));
        assertThat(c.order().get(0)).isSameAs(holder); // 2 blocks to prefill + 8 active, against 8 + 8
        assertThat(c.predictedCachedTokens()).isEqualTo(96);
        holder.activeTokens.set(16 * 7); // 7 blocks more in flight there: 2 + 15 > 8 + 8
        assertThat(dynamo.choose(MODEL, null, prompt, List.of(holder, other)).order().get(0)).isSameAs(other);
    }
}
