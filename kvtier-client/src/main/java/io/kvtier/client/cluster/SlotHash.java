package io.kvtier.client.cluster;

/**
 * Redis Cluster's key slot: CRC16 (XMODEM) of the key, or of its {@code {hash tag}}, modulo {@value #SLOTS}. A pure
 * function, byte-identical to Redis's {@code keyHashSlot} (cluster.c) and {@code crc16} (crc16.c), so cluster clients
 * and kvtier agree on every key's slot.
 */
public final class SlotHash {
    /** Number of slots in the key space, as in Redis Cluster. */
    public static final int SLOTS = 16384;

    private static final int POLYNOMIAL = 0x1021;
    private static final int[] TABLE = crcTable();

    private SlotHash() {
    }

    /**
     * The slot of {@code key}. If the key holds a '{' followed later by a '}' and the bytes between the first '{' and
     * the first '}' after it are non-empty, only those bytes are hashed, so {@code {user1000}.following} and
     * {@code {user1000}.followers} share a slot; otherwise the whole key is hashed.
     */
    public static int slot(byte[] key) {
        int open = indexOf(key, (byte) '{', 0);
        if (open >= 0) {
            int close = indexOf(key, (byte) '}', open + 1);
            if (close > open + 1) {
                return crc16(key, open + 1, close) & (SLOTS - 1);
            }
        }
        return crc16(key, 0, key.length) & (SLOTS - 1);
    }

    /** CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0, no reflection, no final xor) of all of {@code data}. */
    public static int crc16(byte[] data) {
        return crc16(data, 0, data.length);
    }

    private static int crc16(byte[] data, int from, int to) {
        int crc = 0;
        for (int i = from; i < to; i++) {
            crc = ((crc << 8) ^ TABLE[((crc >>> 8) ^ data[i]) & 0xFF]) & 0xFFFF;
        }
        return crc;
    }

    private static int indexOf(byte[] bytes, byte b, int from) {
        for (int i = from; i < bytes.length; i++) {
            if (bytes[i] == b) {
                return i;
            }
        }
        return -1;
    }

    /** The byte-at-a-time table, computed from the polynomial rather than pasted; equals crc16.c's {@code crc16tab}. */
    private static int[] crcTable() {
        int[] table = new int[256];
        for (int b = 0; b < 256; b++) {
            int crc = b << 8;
            for (int bit = 0; bit < 8; bit++) {
                crc = (crc & 0x8000) != 0 ? (crc << 1) ^ POLYNOMIAL : crc << 1;
            }
            table[b] = crc & 0xFFFF;
        }
        return table;
    }
}
