package io.kvtier.store.disk;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Random;

/** Builds records with known contents and reads them back, for the disk-tier tests. */
final class Records {
    private Records() {
    }

    static byte[] key(String key) {
        return key.getBytes(StandardCharsets.UTF_8);
    }

    static byte[] bytes(long seed, int length) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** A value record whose bytes arrive as up to three buffers, one of them direct, as memory pages would. */
    static PendingRecord value(String key, long seq, long expireAt, byte[] value) {
        return value(key, seq, expireAt, value, 0);
    }

    /** As {@link #value(String, long, long, byte[])}, with cluster version {@code version}. */
    static PendingRecord value(String key, long seq, long expireAt, byte[] value, long version) {
        int a = value.length / 3;
        int b = 2 * value.length / 3;
        ByteBuffer direct = ByteBuffer.allocateDirect(b - a).put(value, a, b - a).flip();
        ByteBuffer[] parts = {ByteBuffer.wrap(value, 0, a).slice(), direct,
                ByteBuffer.wrap(value, b, value.length - b).slice()};
        return PendingRecord.value(key(key), seq, expireAt, parts, value.length, version);
    }

    static byte[] read(DiskTier tier, DiskLocation location, String key) throws IOException {
        ByteBuffer dst = ByteBuffer.allocateDirect(DiskTier.readLength(location));
        ByteBuffer value = tier.read(location, key(key), dst);
        byte[] out = new byte[value.remaining()];
        value.get(out);
        return out;
    }
}
