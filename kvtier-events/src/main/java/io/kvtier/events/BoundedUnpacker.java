package io.kvtier.events;

import java.io.IOException;
import java.util.Arrays;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.core.buffer.ArrayBufferInput;

/**
 * A msgpack reader over one payload that refuses container and binary lengths the payload cannot hold (every element
 * takes at least a byte): a 5-byte {@code dd 7fffffff} would otherwise allocate 2^31 array slots before failing. Not
 * thread-safe; one per payload.
 */
public final class BoundedUnpacker extends MessageUnpacker {
    private final byte[] payload;

    public BoundedUnpacker(byte[] payload) {
        super(new ArrayBufferInput(payload), MessagePack.DEFAULT_UNPACKER_CONFIG);
        this.payload = payload;
    }

    private int checked(int n, String what) throws IOException {
        long left = payload.length - getTotalReadBytes();
        if (n < 0 || n > left) {
            throw new IOException(what + " of " + Integer.toUnsignedString(n) + " at offset " + getTotalReadBytes()
                    + " in a payload of " + payload.length + " bytes");
        }
        return n;
    }

    @Override
    public int unpackArrayHeader() throws IOException {
        return checked(super.unpackArrayHeader(), "an array");
    }

    @Override
    public int unpackMapHeader() throws IOException {
        return checked(super.unpackMapHeader(), "a map");
    }

    @Override
    public int unpackBinaryHeader() throws IOException {
        return checked(super.unpackBinaryHeader(), "a byte string");
    }

    /** The next value's encoded bytes, skipped without building it (no recursion, however deeply it nests). */
    public byte[] nextRaw() throws IOException {
        int from = (int) getTotalReadBytes();
        skipValue();
        return Arrays.copyOfRange(payload, from, (int) getTotalReadBytes());
    }
}
