package io.kvtier.it;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Self-describing test values: the first 16 bytes name the key index and version, the rest is pseudo-random from
 * that pair, so any value read back can be checked and attributed without keeping copies.
 */
final class Payloads {
    private Payloads() {
    }

    static byte[] make(long key, long version, int size) {
        byte[] v = new byte[size];
        new SplittableRandom(key * 1_000_003 + version).nextBytes(v);
        ByteBuffer.wrap(v).putLong(key).putLong(version);
        return v;
    }

    /** The version a value claims to be, after checking every byte matches it; -1 if the bytes are wrong. */
    static long versionOf(long key, byte[] v) {
        if (v.length < 16) {
            return -1;
        }
        ByteBuffer b = ByteBuffer.wrap(v);
        long k = b.getLong();
        long version = b.getLong();
        return k == key && Arrays.equals(v, make(key, version, v.length)) ? version : -1;
    }
}
