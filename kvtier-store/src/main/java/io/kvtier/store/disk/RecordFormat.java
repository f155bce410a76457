package io.kvtier.store.disk;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * Layout of one record, little-endian:
 * <pre>
 *  0  int  magic 0x4B565452 ("KVTR")
 *  4  int  CRC32C over key, value, then header bytes [8, 40)
 *  8  long sequence number (global, increasing; decides which version of a key wins)
 * 16  long expiry, epoch milliseconds, 0 = none
 * 24  int  key length
 * 28  int  value length
 * 32  byte type: 1 = value, 2 = tombstone (kills records of the key with a lower sequence number),
 *               3 = expiry (sets the expiry of the key's newest value record with a lower sequence number)
 * 33  7 bytes reserved, zero
 * 40  key, then value
 * </pre>
 * The checksum covers the header last so that a value can be checksummed as it streams, before its sequence number
 * is known.
 */
public final class RecordFormat {
    public static final int MAGIC = 0x4B565452;
    public static final int HEADER_SIZE = 40;
    public static final byte TYPE_VALUE = 1;
    public static final byte TYPE_TOMBSTONE = 2;
    public static final byte TYPE_EXPIRY = 3;
    /** Keys longer than this are refused; it also bounds what recovery believes a header. */
    public static final int MAX_KEY_LENGTH = 64 * 1024;

    private RecordFormat() {
    }

    /** Writes a header (position 0..40 of {@code header}) whose CRC continues {@code crcOfKeyAndValue}. */
    static void writeHeader(ByteBuffer header, CRC32C crcOfKeyAndValue, long seq, long expireAt, int keyLength,
                            int valueLength, byte type) {
        header.order(ByteOrder.LITTLE_ENDIAN);
        header.putInt(0, MAGIC);
        header.putLong(8, seq);
        header.putLong(16, expireAt);
        header.putInt(24, keyLength);
        header.putInt(28, valueLength);
        header.put(32, type);
        for (int i = 33; i < HEADER_SIZE; i++) {
            header.put(i, (byte) 0);
        }
        crcOfKeyAndValue.update(header.slice(8, HEADER_SIZE - 8));
        header.putInt(4, (int) crcOfKeyAndValue.getValue());
    }

    /** A parsed header; {@link #plausible} says whether its lengths can be trusted enough to read further. */
    record Header(int magic, int crc, long seq, long expireAt, int keyLength, int valueLength, byte type) {
        static Header parse(ByteBuffer buf, int at) {
            ByteBuffer b = buf.duplicate().order(ByteOrder.LITTLE_ENDIAN);
            return new Header(b.getInt(at), b.getInt(at + 4), b.getLong(at + 8), b.getLong(at + 16),
                    b.getInt(at + 24), b.getInt(at + 28), b.get(at + 32));
        }

        boolean plausible(long bytesLeft) {
            return magic == MAGIC && keyLength >= 0 && keyLength <= MAX_KEY_LENGTH && valueLength >= 0
                    && type >= TYPE_VALUE && type <= TYPE_EXPIRY
                    && (long) HEADER_SIZE + keyLength + valueLength <= bytesLeft;
        }

        long recordLength() {
            return (long) HEADER_SIZE + keyLength + valueLength;
        }
    }

    /** Whether the record starting at {@code at} in {@code buf} (header, key and value all present) is intact. */
    static boolean verify(ByteBuffer buf, int at, Header h) {
        CRC32C crc = new CRC32C();
        crc.update(buf.slice(at + HEADER_SIZE, h.keyLength() + h.valueLength()));
        crc.update(buf.slice(at + 8, HEADER_SIZE - 8));
        return (int) crc.getValue() == h.crc();
    }
}
