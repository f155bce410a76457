package io.kvtier.bench.load;

import io.netty.buffer.ByteBuf;

/**
 * Self-describing values: bytes 0..7 hold the key's hash, bytes 8..15 a version, and the rest is a pseudo-random
 * stream seeded by both, so a GET reply can be checked knowing only the key that was asked for, whatever version
 * was written last. Values are at least {@value #HEADER} bytes. Stateless and thread-safe.
 */
final class ValuePattern {
    static final int HEADER = 16;
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    private ValuePattern() {
    }

    /** FNV-1a over the key, finished with a mixer so that similar keys get unrelated hashes. */
    static long keyHash(byte[] key) {
        long h = 0xcbf29ce484222325L;
        for (byte b : key) {
            h = (h ^ (b & 0xff)) * 0x100000001b3L;
        }
        return mix(h);
    }

    /** Appends {@code size} bytes of the pattern for (keyHash, version) at the writer index. */
    static void fill(ByteBuf buf, long keyHash, long version, int size) {
        if (size < HEADER) {
            throw new IllegalArgumentException("a verifiable value needs at least " + HEADER + " bytes, not " + size);
        }
        buf.writeLong(keyHash).writeLong(version);
        long seed = seed(keyHash, version);
        int words = (size - HEADER) / 8;
        for (int i = 0; i < words; i++) {
            buf.writeLong(word(seed, i));
        }
        long last = word(seed, words);
        for (int k = 0; k < (size - HEADER) % 8; k++) {
            buf.writeByte((int) (last >>> (56 - 8 * k)));
        }
    }

    /**
     * Bytes of {@code content} (readable bytes, not consumed) that differ from the pattern of {@code keyHash} at the
     * version the value itself names, plus the difference in length from {@code expectedSize}.
     */
    static long wrongBytes(ByteBuf content, long keyHash, int expectedSize) {
        int n = content.readableBytes();
        if (n < HEADER) {
            return Math.max(n, expectedSize);
        }
        int at = content.readerIndex();
        int common = Math.min(n, expectedSize);
        long wrong = Math.abs((long) n - expectedSize) + differingBytes(content.getLong(at), keyHash, 8);
        long seed = seed(keyHash, content.getLong(at + 8));
        int words = (common - HEADER) / 8;
        for (int i = 0; i < words; i++) {
            wrong += differingBytes(content.getLong(at + HEADER + 8 * i), word(seed, i), 8);
        }
        int tail = (common - HEADER) % 8;
        if (tail > 0) {
            long expected = word(seed, words);
            for (int k = 0; k < tail; k++) {
                byte b = content.getByte(at + HEADER + 8 * words + k);
                wrong += b == (byte) (expected >>> (56 - 8 * k)) ? 0 : 1;
            }
        }
        return wrong;
    }

    /** How many of the first {@code bytes} big-endian bytes of two words differ. */
    private static int differingBytes(long actual, long expected, int bytes) {
        long x = actual ^ expected;
        int differ = 0;
        for (int k = 0; k < bytes && x != 0; k++, x <<= 8) {
            differ += (x & 0xFF00000000000000L) != 0 ? 1 : 0;
        }
        return differ;
    }

    private static long seed(long keyHash, long version) {
        return mix(keyHash ^ (version * GOLDEN));
    }

    private static long word(long seed, long index) {
        return mix(seed + (index + 1) * GOLDEN);
    }

    /** SplitMix64's finalizer: a bijective, well-mixing 64-bit hash. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
