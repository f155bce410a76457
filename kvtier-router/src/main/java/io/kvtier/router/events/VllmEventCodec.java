package io.kvtier.router.events;

import io.kvtier.events.BoundedUnpacker;
import io.kvtier.events.MalformedEventException;
import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePackException;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ValueType;

/*
 * vLLM's KV-event payload, as its msgspec structs encode it (vllm/distributed/kv_events.py).
 *
 * The batch is a positional array [ts, events, data_parallel_rank] in every release (2 elements before 0.9.1; the rank
 * is an int in practice, the publisher fills it in). Each event is tagged by its class name:
 * - up to about 0.23 as a positional array [tag, field...], never shortened by omit_defaults (msgspec does not trim
 *   array-like structs), so its length tells the release: BlockStored 7 (0.11: up to medium), 8 (+ lora_name),
 *   10 or 12 (+ extra_keys, group_idx[, kv_cache_spec_kind, kv_cache_spec_sliding_window]); BlockRemoved 2, 3 or 4;
 * - from 0.26 on as a map keyed by field name with the tag under "type", optional fields left out when null
 *   (vllm#42892; llm-d's decoder tells the two apart by container type, as this one does).
 * 0.26's optional locality, ownership and session_id are read where present (map form only: no array-form release had
 * them); fields vLLM appends later are skipped, in either form.
 *
 * Block hashes are ints by default (VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES=1: the digest's last 8 bytes, unsigned, so
 * msgpack's uint64 for half of them) or raw digest bytes (32 for sha256): both become the same 64 bits here, the last 8
 * bytes read big-endian, as vLLM's int form and llm-d's normalisation agree.
 */

/** Decodes vLLM's KV-event payloads in every layout its releases used, and encodes them as one of them. Stateless. */
public final class VllmEventCodec {
    static final String BLOCK_STORED = "BlockStored";
    static final String BLOCK_REMOVED = "BlockRemoved";
    static final String ALL_BLOCKS_CLEARED = "AllBlocksCleared";

    private VllmEventCodec() {
    }

    /** The 64 bits a hash given as bytes is keyed by: its last 8 bytes, big-endian (fewer are zero-extended). */
    public static long hashOf(byte[] digest) {
        long v = 0;
        for (int i = Math.max(0, digest.length - Long.BYTES); i < digest.length; i++) {
            v = (v << 8) | (digest[i] & 0xFF);
        }
        return v;
    }

    /** Decodes one payload; any layout. */
    public static KvEventBatch decode(byte[] payload) throws MalformedEventException {
        try (BoundedUnpacker in = new BoundedUnpacker(payload)) {
            KvEventBatch batch = readBatch(in);
            if (in.hasNext()) {
                throw new MalformedEventException("trailing bytes after the event batch at offset "
                        + in.getTotalReadBytes() + " of " + payload.length);
            }
            return batch;
        } catch (MessagePackException | IOException | ArithmeticException | ClassCastException e) {
            throw new MalformedEventException("not a KV event batch: " + e.getMessage(), e);
        }
    }

    private static KvEventBatch readBatch(MessageUnpacker in) throws IOException, MalformedEventException {
        ValueType type = in.getNextFormat().getValueType();
        Double ts = null;
        List<KvEvent> events = null;
        Long rank = null;
        if (type == ValueType.ARRAY) {
            int n = in.unpackArrayHeader();
            for (int i = 0; i < n; i++) {
                switch (i) {
                    case 0 -> ts = readNumber(in);
                    case 1 -> events = readEvents(in);
                    case 2 -> rank = readLongOrNil(in);
                    default -> in.skipValue();
                }
            }
        } else if (type == ValueType.MAP) {
            int n = in.unpackMapHeader();
            for (int i = 0; i < n; i++) {
                switch (in.unpackString()) {
                    case "ts" -> ts = readNumber(in);
                    case "events" -> events = readEvents(in);
                    case "data_parallel_rank" -> rank = readLongOrNil(in);
                    default -> in.skipValue();
                }
            }
        } else {
            throw new MalformedEventException("an event batch is an array [ts, events, rank], not a " + type);
        }
        if (ts == null || events == null) {
            throw new MalformedEventException("an event batch needs ts and events");
        }
        return new KvEventBatch(ts, events, rank);
    }

    private static List<KvEvent> readEvents(MessageUnpacker in) throws IOException, MalformedEventException {
        int n = in.unpackArrayHeader();
        List<KvEvent> events = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            KvEvent e = readEvent(in);
            if (e != null) {
                events.add(e);
            }
        }
        return events;
    }

    /** One event, or null for a kind this decoder does not know (a newer vLLM's): skipped, not an error. */
    private static KvEvent readEvent(MessageUnpacker in) throws IOException, MalformedEventException {
        EventFields f = new EventFields();
        ValueType type = in.getNextFormat().getValueType();
        if (type == ValueType.ARRAY) {
            int n = in.unpackArrayHeader();
            if (n == 0) {
                throw new MalformedEventException("an event array needs its tag first");
            }
            f.tag = in.unpackString();
            String[] names = positions(f.tag);
            for (int i = 1; i < n; i++) {
                f.read(i < names.length ? names[i] : "", in);
            }
        } else if (type == ValueType.MAP) {
            int n = in.unpackMapHeader();
            for (int i = 0; i < n; i++) {
                String key = in.unpackString();
                if (key.equals("type")) {
                    f.tag = in.unpackString();
                } else {
                    f.read(key, in);
                }
            }
        } else {
            throw new MalformedEventException("an event is an array or a map, not a " + type);
        }
        return f.build();
    }

    private static String[] positions(String tag) {
        return switch (tag) {
            case BLOCK_STORED -> new String[] {"type", "block_hashes", "parent_block_hash", "token_ids", "block_size",
                "lora_id", "medium", "lora_name", "extra_keys", "group_idx", "kv_cache_spec_kind",
                "kv_cache_spec_sliding_window"};
            case BLOCK_REMOVED -> new String[] {"type", "block_hashes", "medium", "group_idx"};
            default -> new String[] {"type"};
        };
    }

    /** The fields of one event as read, in either form; unknown ones skipped. */
    private static final class EventFields {
        String tag;
        long[] hashes;
        Long parent;
        int[] tokens;
        Long blockSize;
        Long loraId;
        String medium;
        String loraName;
        byte[][] extraKeys;
        Long groupIdx;
        String kind;
        Long window;
        String locality;
        String ownership;
        String sessionId;

        void read(String name, MessageUnpacker in) throws IOException, MalformedEventException {
            switch (name) {
                case "block_hashes" -> hashes = readHashes(in);
                case "parent_block_hash" -> parent = in.tryUnpackNil() ? null : readHash(in);
                case "token_ids" -> tokens = readTokens(in);
                case "block_size" -> blockSize = readLongOrNil(in);
                case "lora_id" -> loraId = readLongOrNil(in);
                case "medium" -> medium = readStringOrNil(in);
                case "lora_name" -> loraName = readStringOrNil(in);
                case "extra_keys" -> extraKeys = readRawList(in);
                case "group_idx" -> groupIdx = readLongOrNil(in);
                case "kv_cache_spec_kind" -> kind = readStringOrNil(in);
                case "kv_cache_spec_sliding_window" -> window = readLongOrNil(in);
                case "locality" -> locality = readStringOrNil(in);
                case "ownership" -> ownership = readStringOrNil(in);
                case "session_id" -> sessionId = readScalarAsString(in);
                default -> in.skipValue();
            }
        }

        KvEvent build() throws MalformedEventException {
            if (tag == null) {
                throw new MalformedEventException("an event without its type");
            }
            return switch (tag) {
                case BLOCK_STORED -> {
                    // vLLM's OffloadingConnector reports its CPU tier's blocks by hash alone: token_ids empty and
                    // block_size 0 or the offloaded block's size; every other store names its tokens.
                    boolean hashOnly = tokens != null && tokens.length == 0 && blockSize != null && blockSize == 0;
                    if (hashes == null || tokens == null || blockSize == null || (blockSize <= 0 && !hashOnly)
                            || blockSize > Integer.MAX_VALUE) {
                        throw new MalformedEventException("BlockStored needs block_hashes, token_ids and a positive "
                                + "block_size (0 only where token_ids is empty)");
                    }
                    if (extraKeys != null && extraKeys.length != hashes.length) {
                        throw new MalformedEventException("BlockStored has " + extraKeys.length + " extra_keys for "
                                + hashes.length + " blocks");
                    }
                    yield new KvEvent.BlockStored(hashes, parent, tokens, (int) (long) blockSize, loraId, medium,
                            loraName, extraKeys, groupIdx, kind, window, locality, ownership, sessionId);
                }
                case BLOCK_REMOVED -> {
                    if (hashes == null) {
                        throw new MalformedEventException("BlockRemoved needs block_hashes");
                    }
                    yield new KvEvent.BlockRemoved(hashes, medium, groupIdx, locality, ownership);
                }
                case ALL_BLOCKS_CLEARED -> new KvEvent.AllBlocksCleared();
                default -> null;
            };
        }
    }

    private static long[] readHashes(MessageUnpacker in) throws IOException, MalformedEventException {
        long[] hashes = new long[in.unpackArrayHeader()];
        for (int i = 0; i < hashes.length; i++) {
            hashes[i] = readHash(in);
        }
        return hashes;
    }

    private static long readHash(MessageUnpacker in) throws IOException, MalformedEventException {
        MessageFormat format = in.getNextFormat();
        return switch (format.getValueType()) {
            case INTEGER -> format == MessageFormat.UINT64 ? in.unpackBigInteger().longValue() : in.unpackLong();
            case BINARY -> hashOf(in.readPayload(in.unpackBinaryHeader()));
            default -> throw new MalformedEventException("a block hash is an int or bytes, not a "
                    + format.getValueType());
        };
    }

    private static int[] readTokens(MessageUnpacker in) throws IOException {
        int[] tokens = new int[in.unpackArrayHeader()];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = in.unpackInt();
        }
        return tokens;
    }

    /** Each element's raw msgpack bytes, null for nil; null for a nil list. */
    private static byte[][] readRawList(MessageUnpacker in) throws IOException {
        if (in.tryUnpackNil()) {
            return null;
        }
        byte[][] out = new byte[in.unpackArrayHeader()][];
        for (int i = 0; i < out.length; i++) {
            out[i] = in.tryUnpackNil() ? null : ((BoundedUnpacker) in).nextRaw();
        }
        return out;
    }

    private static Double readNumber(MessageUnpacker in) throws IOException, MalformedEventException {
        MessageFormat format = in.getNextFormat();
        return switch (format.getValueType()) {
            case FLOAT -> in.unpackDouble();
            case INTEGER -> (double) in.unpackLong();
            default -> throw new MalformedEventException("ts is a number, not a " + format.getValueType());
        };
    }

    private static Long readLongOrNil(MessageUnpacker in) throws IOException {
        return in.tryUnpackNil() ? null : in.unpackLong();
    }

    private static String readStringOrNil(MessageUnpacker in) throws IOException {
        return in.tryUnpackNil() ? null : in.unpackString();
    }

    /** A string, or an int written as its decimal digits (an id either way); nil as null; anything else skipped. */
    private static String readScalarAsString(MessageUnpacker in) throws IOException {
        if (in.tryUnpackNil()) {
            return null;
        }
        return switch (in.getNextFormat().getValueType()) {
            case STRING -> in.unpackString();
            case INTEGER -> in.unpackBigInteger().toString();
            default -> {
                in.skipValue();
                yield null;
            }
        };
    }

    /** Encodes {@code batch} as vLLM's msgspec encoder writes it in {@code layout}. */
    public static byte[] encode(KvEventBatch batch, Layout layout) {
        try (MessageBufferPacker out = MessagePack.newDefaultBufferPacker()) {
            out.packArrayHeader(3);
            out.packDouble(batch.ts());
            out.packArrayHeader(batch.events().size());
            for (KvEvent e : batch.events()) {
                switch (e) {
                    case KvEvent.BlockStored s -> writeStored(out, s, layout);
                    case KvEvent.BlockRemoved r -> writeRemoved(out, r, layout);
                    case KvEvent.AllBlocksCleared c -> writeTagOnly(out, ALL_BLOCKS_CLEARED, layout);
                }
            }
            packNullable(out, batch.dataParallelRank());
            return out.toByteArray();
        } catch (IOException e) {
            throw new IllegalStateException("encoding into memory failed", e);
        }
    }

    private static void writeStored(MessageBufferPacker out, KvEvent.BlockStored s, Layout layout) throws IOException {
        boolean map = layout == Layout.MAP_V0_26;
        int fields = map ? 7 + count(s.extraKeys(), s.groupIdx(), s.kvCacheSpecKind(), s.kvCacheSpecSlidingWindow(),
                s.locality(), s.ownership(), s.sessionId()) : layout.storedLength;
        header(out, map, fields, BLOCK_STORED);
        field(out, map, "block_hashes");
        writeHashes(out, s.blockHashes());
        field(out, map, "parent_block_hash");
        if (s.parentBlockHash() == null) {
            out.packNil();
        } else {
            writeHash(out, s.parentBlockHash());
        }
        field(out, map, "token_ids");
        out.packArrayHeader(s.tokenIds().length);
        for (int t : s.tokenIds()) {
            out.packInt(t);
        }
        field(out, map, "block_size");
        out.packInt(s.blockSize());
        field(out, map, "lora_id");
        packNullable(out, s.loraId());
        field(out, map, "medium");
        packNullable(out, s.medium());
        if (layout == Layout.ARRAY_V0_11) {
            return;
        }
        field(out, map, "lora_name");
        packNullable(out, s.loraName());
        if (layout == Layout.ARRAY_V0_15) {
            return;
        }
        optional(out, map, "extra_keys", s.extraKeys());
        optional(out, map, "group_idx", s.groupIdx());
        optional(out, map, "kv_cache_spec_kind", s.kvCacheSpecKind());
        optional(out, map, "kv_cache_spec_sliding_window", s.kvCacheSpecSlidingWindow());
        if (map) { // 0.26's, never in an array-form release
            optional(out, true, "locality", s.locality());
            optional(out, true, "ownership", s.ownership());
            optional(out, true, "session_id", s.sessionId());
        }
    }

    private static void writeRemoved(MessageBufferPacker out, KvEvent.BlockRemoved r, Layout layout)
            throws IOException {
        boolean map = layout == Layout.MAP_V0_26;
        header(out, map, map ? 2 + count(r.groupIdx(), r.locality(), r.ownership()) : layout.removedLength,
                BLOCK_REMOVED);
        field(out, map, "block_hashes");
        writeHashes(out, r.blockHashes());
        field(out, map, "medium");
        packNullable(out, r.medium());
        if (layout == Layout.ARRAY_V0_23 || map) {
            optional(out, map, "group_idx", r.groupIdx());
        }
        if (map) {
            optional(out, true, "locality", r.locality());
            optional(out, true, "ownership", r.ownership());
        }
    }

    private static void writeTagOnly(MessageBufferPacker out, String tag, Layout layout) throws IOException {
        header(out, layout == Layout.MAP_V0_26, 0, tag);
    }

    /** An event's opening: a map of the tag and {@code fields} more entries, or an array of the tag and the fields. */
    private static void header(MessageBufferPacker out, boolean map, int fields, String tag) throws IOException {
        if (map) {
            out.packMapHeader(fields + 1);
            out.packString("type");
        } else {
            out.packArrayHeader(Math.max(1, fields));
        }
        out.packString(tag);
    }

    private static void field(MessageBufferPacker out, boolean map, String name) throws IOException {
        if (map) {
            out.packString(name);
        }
    }

    /** A field with a default: left out of a map where null (msgspec's omit_defaults), nil in an array. */
    private static void optional(MessageBufferPacker out, boolean map, String name, Object value) throws IOException {
        if (map && value == null) {
            return;
        }
        field(out, map, name);
        packNullable(out, value);
    }

    private static int count(Object... values) {
        return (int) Arrays.stream(values).filter(v -> v != null).count();
    }

    private static void packNullable(MessageBufferPacker out, Object value) throws IOException {
        switch (value) {
            case null -> out.packNil();
            case Long l -> out.packLong(l);
            case String s -> out.packString(s);
            case byte[][] raw -> {
                out.packArrayHeader(raw.length);
                for (byte[] v : raw) {
                    if (v == null) {
                        out.packNil();
                    } else {
                        out.writePayload(v);
                    }
                }
            }
            default -> throw new IllegalArgumentException("cannot encode " + value.getClass());
        }
    }

    private static void writeHashes(MessageBufferPacker out, long[] hashes) throws IOException {
        out.packArrayHeader(hashes.length);
        for (long h : hashes) {
            writeHash(out, h);
        }
    }

    /** vLLM's int hashes are unsigned: msgspec writes those of 2^63 and more as uint64. */
    private static void writeHash(MessageBufferPacker out, long hash) throws IOException {
        if (hash >= 0) {
            out.packLong(hash);
        } else {
            out.packBigInteger(new BigInteger(Long.toUnsignedString(hash)));
        }
    }
}
