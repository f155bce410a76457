package io.kvtier.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Self-describing values: a header of (key hash, version, length) and then, every 8 bytes, the offset and a tag of
 * key and version. Any byte from another value, another version or another position fails {@link #check}.
 */
final class Values {
    private static final int HEADER = 12;

    private Values() {
    }

    static byte[] of(String key, int version, int length) {
        int keyHash = key.hashCode();
        int tag = keyHash * 31 + version;
        ByteBuffer b = ByteBuffer.allocate(length);
        for (int off = 0; off + 4 <= length; off += 4) {
            b.putInt(switch (off) {
                case 0 -> keyHash;
                case 4 -> version;
                case 8 -> length;
                default -> off % 8 == 0 ? off : tag;
            });
        }
        while (b.hasRemaining()) {
            b.put((byte) tag);
        }
        return b.array();
    }

    /** Returns the version encoded in {@code bytes} after checking that they are exactly a value of {@code key}. */
    static int check(String key, byte[] bytes) {
        assertThat(bytes.length).as("length of a value of %s", key).isGreaterThanOrEqualTo(HEADER);
        int version = ByteBuffer.wrap(bytes).getInt(4);
        assertThat(bytes).as("value of %s, version %d", key, version).isEqualTo(of(key, version, bytes.length));
        return version;
    }

    static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
