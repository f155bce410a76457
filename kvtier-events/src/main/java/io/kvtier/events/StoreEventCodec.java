package io.kvtier.events;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePackException;

/**
 * kvtier's store-event payload, msgpack (the framing around it is vLLM's: {@link EventPublisher}):
 * <pre>
 * {"v": 1, "node": str, "incarnation": int64, "ts": float64, "snapshot": bool,
 *  "events": [[kind: str, key: bin, length: uint, tier: str | nil], ...]}
 * </pre>
 * {@code kind} is {@code stored}, {@code moved}, {@code deleted}, {@code expired} or {@code evicted}; {@code tier} is
 * {@code memory} or {@code disk} (nil on removals). Readers skip map keys they do not know and refuse a {@code v} they do
 * not know, so fields can be added within version 1.
 */
public final class StoreEventCodec {
    public static final int VERSION = 1;

    private StoreEventCodec() {
    }

    public static byte[] encode(StoreEventBatch batch) {
        try (MessageBufferPacker out = MessagePack.newDefaultBufferPacker()) {
            out.packMapHeader(6);
            out.packString("v").packInt(VERSION);
            out.packString("node").packString(batch.node());
            out.packString("incarnation").packLong(batch.incarnation());
            out.packString("ts").packDouble(batch.ts());
            out.packString("snapshot").packBoolean(batch.snapshot());
            out.packString("events").packArrayHeader(batch.events().size());
            for (StoreEvent e : batch.events()) {
                out.packArrayHeader(4);
                out.packString(e.kind().wire);
                out.packBinaryHeader(e.key().length).writePayload(e.key());
                out.packLong(e.length());
                if (e.tier() == null) {
                    out.packNil();
                } else {
                    out.packString(e.tier().wire);
                }
            }
            return out.toByteArray();
        } catch (IOException e) {
            throw new IllegalStateException("msgpack into memory failed", e);
        }
    }

    public static StoreEventBatch decode(byte[] payload) throws MalformedEventException {
        try (BoundedUnpacker in = new BoundedUnpacker(payload)) {
            int fields = in.unpackMapHeader();
            int version = -1;
            String node = null;
            long incarnation = 0;
            double ts = 0;
            boolean snapshot = false;
            List<StoreEvent> events = null;
            for (int i = 0; i < fields; i++) {
                String name = in.unpackString();
                switch (name) {
                    case "v" -> version = in.unpackInt();
                    case "node" -> node = in.unpackString();
                    case "incarnation" -> incarnation = in.unpackLong();
                    case "ts" -> ts = in.unpackDouble();
                    case "snapshot" -> snapshot = in.unpackBoolean();
                    case "events" -> {
                        int n = in.unpackArrayHeader();
                        events = new ArrayList<>(n);
                        for (int j = 0; j < n; j++) {
                            events.add(event(in));
                        }
                    }
                    default -> in.skipValue();
                }
            }
            if (in.hasNext()) {
                throw new MalformedEventException("trailing bytes after the batch at offset " + in.getTotalReadBytes());
            }
            if (version != VERSION) {
                throw new MalformedEventException("store-event version " + version + "; this reader knows "
                        + VERSION);
            }
            if (node == null || events == null) {
                throw new MalformedEventException("a store-event batch without " + (node == null ? "node" : "events"));
            }
            return new StoreEventBatch(node, incarnation, ts, snapshot, events);
        } catch (IOException | MessagePackException | IllegalArgumentException e) {
            throw new MalformedEventException("not a store-event batch: " + e.getMessage(), e);
        }
    }

    private static StoreEvent event(BoundedUnpacker in) throws IOException, MalformedEventException {
        int n = in.unpackArrayHeader();
        if (n < 4) {
            throw new MalformedEventException("a store event of " + n + " fields; expected 4");
        }
        StoreEvent.Kind kind = switch (in.unpackString()) {
            case "stored" -> StoreEvent.Kind.STORED;
            case "moved" -> StoreEvent.Kind.MOVED;
            case "deleted" -> StoreEvent.Kind.DELETED;
            case "expired" -> StoreEvent.Kind.EXPIRED;
            case "evicted" -> StoreEvent.Kind.EVICTED;
            default -> throw new MalformedEventException("unknown store event kind");
        };
        byte[] key = in.readPayload(in.unpackBinaryHeader());
        long length = in.unpackLong();
        StoreEvent.Tier tier = null;
        if (!in.tryUnpackNil()) {
            tier = switch (in.unpackString()) {
                case "memory" -> StoreEvent.Tier.MEMORY;
                case "disk" -> StoreEvent.Tier.DISK;
                default -> throw new MalformedEventException("unknown tier");
            };
        }
        if (length < 0 || (tier == null) != (kind != StoreEvent.Kind.STORED && kind != StoreEvent.Kind.MOVED)) {
            throw new MalformedEventException("a " + kind.wire + " event with length " + length + " and tier " + tier);
        }
        for (int i = 4; i < n; i++) {
            in.skipValue(); // fields a later writer added
        }
        return new StoreEvent(kind, key, length, tier);
    }
}
