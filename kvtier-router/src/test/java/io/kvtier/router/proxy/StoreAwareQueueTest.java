package io.kvtier.router.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.router.map.KvCacheMap;
import io.kvtier.router.map.LmcacheSettings;
import io.kvtier.router.map.StoreMap;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The kvtier policy prices the prefill an engine still owes the requests sent to it, and says what it will compute. */
class StoreAwareQueueTest {
    private static final String MODEL = "m";
    private final int[] prompt = IntStream.range(0, 4096).toArray();
    private final KvCacheMap map = new KvCacheMap();
    private final EngineState holder = new EngineState(EngineEndpoint.parse("http://h1:8000"));
    private final EngineState idle = new EngineState(EngineEndpoint.parse("http://h2:8000"));
    private final Policy kvtier = Policy.named("kvtier", map, 8, new StoreMap(), LmcacheSettings.defaults(),
            new StoreAwarePolicy.Costs(10_000, 4e9, 1.2e9, 0.05), null);

    StoreAwareQueueTest() {
        map.addEngine(holder.id(), MODEL);
        map.addEngine(idle.id(), MODEL);
        // the holder has the prompt's first 2,048 tokens: 128 blocks of 16
        map.stored(holder.id(), "GPU", IntStream.range(0, 128).mapToLong(i -> 100 + i).toArray(), null,
                IntStream.range(0, 2048).toArray(), 16, null, null);
    }

    @Test
    void aHolderWithLittlePendingPrefillWinsAndTheRestIsWhatItComputes() {
        holder.pendingPrefill.set(5_000); // 0.5 s queued + 0.2 s own, against 0.41 s on the idle engine: close
        Policy.Choice c = kvtier.choose(MODEL, null, prompt, List.of(idle, holder));

        assertThat(c.order().get(0)).isSameAs(idle);
        assertThat(c.computeTokens(prompt.length)).isEqualTo(4096);
        holder.pendingPrefill.set(1_000); // 0.1 + 0.2 s against 0.41 s
        c = kvtier.choose(MODEL, null, prompt, List.of(idle, holder));
        assertThat(c.order().get(0)).isSameAs(holder);
        assertThat(c.predictedCachedTokens()).isEqualTo(2048);
        assertThat(c.computeTokens(prompt.length)).isEqualTo(2048);
    }

    @Test
    void requestCountsAloneDoNotOutweighAQueueOfPrefill() {
        // the holder runs six decoding requests (0.3 s of load cost) with nothing to prefill; the idle engine has
        // one request whose 8,000-token prompt is not yet computed (0.8 s of queue)
        holder.running = 6;
        idle.running = 1;
        idle.pendingPrefill.set(8_000);
        assertThat(kvtier.choose(MODEL, null, prompt, List.of(idle, holder)).order().get(0)).isSameAs(holder);
        holder.running = 6;
        idle.pendingPrefill.set(0);
        // now the idle engine's 0.41 s + 0.05 s beat the holder's 0.2 s + 0.3 s
        assertThat(kvtier.choose(MODEL, null, prompt, List.of(idle, holder)).order().get(0)).isSameAs(idle);
    }

    @Test
    void theDecodeWeightPricesThePromptTokensInFlight() {
        holder.activeTokens.set(40_000); // 4 s at the prefill rate: 1.2 s at the default weight of 0.3
        Policy weighted = Policy.named("kvtier", map, 8, new StoreMap(), LmcacheSettings.defaults(),
                new StoreAwarePolicy.Costs(10_000, 4e9, 1.2e9, 0.05, 1, 0.3), null);
        assertThat(weighted.choose(MODEL, null, prompt, List.of(holder, idle)).order().get(0)).isSameAs(idle);
        holder.activeTokens.set(500); // 0.2 s + 0.3 x 0.46 s against 0.41 s + 0.3 x 0.41 s
        assertThat(weighted.choose(MODEL, null, prompt, List.of(idle, holder)).order().get(0)).isSameAs(holder);
        assertThat(StoreAwarePolicy.Costs.defaults().decodeWeight()).isEqualTo(StoreAwarePolicy.Costs.DECODE_WEIGHT);
    }

    @Test
    void theDecodeTermChoosesOnlyAmongEnginesWithinTheFirstTokenSlack() {
        holder.activeTokens.set(40_000); // 1.2 s of decode term more than the idle engine's
        // first tokens: the holder's 0.2 s, the idle engine's 0.41 s
        Policy tight = Policy.named("kvtier", map, 8, new StoreMap(), LmcacheSettings.defaults(),
                new StoreAwarePolicy.Costs(10_000, 4e9, 1.2e9, 0.05, 1, 0.3, 0.1), null);
        Policy.Choice c = tight.choose(MODEL, null, prompt, List.of(idle, holder));
        assertThat(c.order()).containsExactly(holder, idle);
        assertThat(c.computeTokens(prompt.length)).isEqualTo(2048);
        Policy loose = Policy.named("kvtier", map, 8, new StoreMap(), LmcacheSettings.defaults(),
                new StoreAwarePolicy.Costs(10_000, 4e9, 1.2e9, 0.05, 1, 0.3, 0.25), null);
        assertThat(loose.choose(MODEL, null, prompt, List.of(holder, idle)).order()).containsExactly(idle, holder);
        assertThat(StoreAwarePolicy.Costs.defaults().ttftSlack()).isEqualTo(StoreAwarePolicy.Costs.TTFT_SLACK);
    }

    @Test
    void loadsWaitBehindTheLoadsAheadAndPrefillBehindBoth() {
        StoreAwarePolicy.Estimate fetching = new StoreAwarePolicy.Estimate(0.2, 100, 0.01);
        assertThat(fetching.queued(1.0, 0.5)).isCloseTo(1.21, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(fetching.queued(0.1, 0.5)).isCloseTo(0.51, org.assertj.core.data.Offset.offset(1e-9));
        StoreAwarePolicy.Estimate gpuHit = new StoreAwarePolicy.Estimate(0, 100, 0.01);
        assertThat(gpuHit.queued(5.0, 0.5)).as("no loads of its own: others' do not hold it")
                .isCloseTo(0.51, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(fetching.alone()).isCloseTo(0.21, org.assertj.core.data.Offset.offset(1e-9));
    }

    @Test
    void aChunksFetchIsPricedForItsRealBytesWhereTheNodesHoldAShare() {
        List<StoreMap.Held> chunk = List.of(new StoreMap.Held("n", io.kvtier.events.StoreEvent.Tier.MEMORY, 4_000_000));
        StoreAwarePolicy whole = new StoreAwarePolicy(map, new StoreMap(), LmcacheSettings.defaults(),
                new StoreAwarePolicy.Costs(10_000, 4e9, 1.2e9, 0), null);
        StoreAwarePolicy eighth = new StoreAwarePolicy(map, new StoreMap(), LmcacheSettings.defaults(),
                new StoreAwarePolicy.Costs(10_000, 4e9, 1.2e9, 0, 0.125, 0), null);
        // 256 tokens fetched (4 MB held: 1 ms at 4 GB/s, or 8 ms for the 32 MB it stands for) and none to prefill
        assertThat(whole.cost(257, 0, chunk, 256, 0)).isCloseTo(0.001 + 0.0001, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(eighth.cost(257, 0, chunk, 256, 0)).isCloseTo(0.008 + 0.0001, org.assertj.core.data.Offset.offset(1e-9));
    }

    @Test
    void anAnchorsChoiceComputesThePromptLessWhatItCredits() {
        Policy.Choice c = Policy.named("dynamo", map, 8).choose(MODEL, null, prompt, List.of(idle, holder));
        assertThat(c.computeTokens(prompt.length)).isEqualTo(prompt.length - c.predictedCachedTokens());
        assertThat(new Policy.Choice(List.of(), "x", 10).computeTokens(4)).isZero();
    }
}
