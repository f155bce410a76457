package io.kvtier.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/** kvtier's store-event payload: every kind round-trips, unknown keys are skipped, bad input is refused. */
class StoreEventCodecTest {
    private static byte[] key(String k) {
        return k.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void everyKindRoundTrips() throws Exception {
        StoreEventBatch batch = new StoreEventBatch("10.0.0.5:6379", 0x7fffffffffffffffL, 1.5e9, false, List.of(
                new StoreEvent(StoreEvent.Kind.STORED, key("m@1@0@-a1@bfloat16kv_bytes"), 1 << 20,
                        StoreEvent.Tier.MEMORY),
                new StoreEvent(StoreEvent.Kind.MOVED, key("k"), 5, StoreEvent.Tier.DISK),
                new StoreEvent(StoreEvent.Kind.DELETED, key("k"), 5, null),
                new StoreEvent(StoreEvent.Kind.EXPIRED, key("k"), 5, null),
                new StoreEvent(StoreEvent.Kind.EVICTED, new byte[0], 0, null)));
        StoreEventBatch back = StoreEventCodec.decode(StoreEventCodec.encode(batch));
        assertThat(back.node()).isEqualTo(batch.node());
        assertThat(back.incarnation()).isEqualTo(batch.incarnation());
        assertThat(back.ts()).isEqualTo(batch.ts());
        assertThat(back.events()).hasSize(5);
        for (int i = 0; i < 5; i++) {
            StoreEvent a = batch.events().get(i);
            StoreEvent b = back.events().get(i);
            assertThat(b.kind()).isEqualTo(a.kind());
            assertThat(b.key()).isEqualTo(a.key());
            assertThat(b.length()).isEqualTo(a.length());
            assertThat(b.tier()).isEqualTo(a.tier());
        }
    }

    @Test
    void unknownKeysAndExtraFieldsAreSkippedAndBadInputRefused() throws Exception {
        try (MessageBufferPacker out = MessagePack.newDefaultBufferPacker()) {
            out.packMapHeader(5);
            out.packString("v").packInt(1);
            out.packString("later").packArrayHeader(1).packString("x");
            out.packString("node").packString("n");
            out.packString("incarnation").packLong(7);
            out.packString("events").packArrayHeader(1).packArrayHeader(5).packString("stored")
                    .packBinaryHeader(1).writePayload(new byte[] {'k'});
            out.packLong(3).packString("disk").packString("a field added later");
            StoreEventBatch b = StoreEventCodec.decode(out.toByteArray());
            assertThat(b.events()).singleElement().extracting(StoreEvent::tier).isEqualTo(StoreEvent.Tier.DISK);
        }
        assertThatThrownBy(() -> StoreEventCodec.decode(new byte[] {(byte) 0xdf, 0x7f, -1, -1, -1}))
                .isInstanceOf(MalformedEventException.class);
        byte[] good = StoreEventCodec.encode(new StoreEventBatch("n", 1, 0, true, List.of()));
        byte[] v2 = good.clone();
        v2[3] = 2; // {"v": 2, ...}: the map header, "v" (2 bytes), then the version
        assertThatThrownBy(() -> StoreEventCodec.decode(v2)).hasMessageContaining("version 2");
        assertThatThrownBy(() -> StoreEventCodec.decode(java.util.Arrays.copyOf(good, good.length - 1)))
                .isInstanceOf(MalformedEventException.class);
    }
}
