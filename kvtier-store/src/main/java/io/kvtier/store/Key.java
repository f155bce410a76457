package io.kvtier.store;

import java.util.Arrays;

/** An immutable binary key with a precomputed 64-bit fingerprint; the array must not be modified after wrapping. */
final class Key {
    final byte[] bytes;
    final long fingerprint;

    Key(byte[] bytes) {
        this.bytes = bytes;
        this.fingerprint = fingerprint(bytes);
    }

    static long fingerprint(byte[] bytes) {
        long h = 0xcbf29ce484222325L ^ bytes.length;
        for (byte b : bytes) {
            h = (h ^ (b & 0xff)) * 0x100000001b3L;
        }
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        return h;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Key k && k.fingerprint == fingerprint && Arrays.equals(k.bytes, bytes);
    }

    @Override
    public int hashCode() {
        return (int) (fingerprint ^ (fingerprint >>> 32));
    }
}
