package io.kvtier.router.proxy;

import io.kvtier.events.EventSubscriber;
import io.kvtier.events.StoreEventBatch;
import io.kvtier.events.StoreEventCodec;
import io.kvtier.router.map.StoreMap;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Follows the store events of the kvtier nodes given with {@code --kvtier} into the {@link StoreMap}: one subscriber
 * per node, starting from a snapshot and taking a new one after any loss or restart of the node; a node whose
 * connection drops (killed or stopped) has its entries dropped until it is back.
 */
public final class StoreFeeds implements AutoCloseable {
    private final StoreMap map;
    private final Map<String, EventSubscriber<StoreEventBatch>> subscribers = new LinkedHashMap<>();

    public StoreFeeds(List<KvtierEndpoint> nodes, StoreMap map, Duration replayTimeout) {
        this(nodes, map, replayTimeout, null);
    }

    /** As above; {@code password} (null: none): the nodes' {@code --requirepass}, which their event ports ask for. */
    public StoreFeeds(List<KvtierEndpoint> nodes, StoreMap map, Duration replayTimeout, String password) {
        this.map = map;
        for (KvtierEndpoint n : nodes) {
            map.addNode(n.name());
            subscribers.put(n.name(), new EventSubscriber<>("kvtier " + n.name(), n.events(), n.replay(), "",
                    replayTimeout, StoreEventCodec::decode, true, new EventSubscriber.Listener<StoreEventBatch>() {
                        @Override
                        public void batch(StoreEventBatch batch) {
                            map.apply(n.name(), batch);
                        }

                        @Override
                        public void resync(String why) {
                            map.cleared(n.name());
                        }
                    }).password(password).start());
        }
    }

    public StoreMap map() {
        return map;
    }

    /** Per node: the subscriber's counters. */
    public Map<String, EventSubscriber.Stats> eventStats() {
        Map<String, EventSubscriber.Stats> out = new LinkedHashMap<>();
        subscribers.forEach((name, s) -> out.put(name, s.stats()));
        return out;
    }

    @Override
    public void close() {
        subscribers.values().forEach(EventSubscriber::stopSoon);
        subscribers.values().forEach(EventSubscriber::close);
    }
}
