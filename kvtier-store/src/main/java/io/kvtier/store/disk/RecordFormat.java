package io.kvtier.store.disk;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * Layout of one record, little-endian:
 * <pre>
 *  0  int  magic 0x4B565452 ("KVTR")
 *  4  int  CRC32C over value, key, then header bytes [8, 40)
 *  8  long sequence number (global, increasing; decides which version of a key wins)
 * 16  long expiry, epoch milliseconds, 0 = none
 * 24  int  key length
 * 28  int  value length
 * 32  byte type: 1 = value, 2 = tombstone (kills records of the key with a lower sequence number),
 *               3 = expiry (its 8-byte value is the sequence number of the version whose expiry it sets),
 *               4 = padding (no key; its "value" is filler to skip)
 * 33  7 bytes reserved, zero
 * 40  key, then value
 * </pre>
 * The checksum covers the value first and the header last, so that a value streamed to disk can be checksummed as
 * it arrives, before its key and sequence number are known (see DirectWrite).
 */
public final class RecordFormat {
    public static final int MAGIC = 0x4B565452;
    public static final int HEADER_SIZE = 40;
    public static final byte TYPE_VALUE = 1;
    public static final byte TYPE_TOMBSTONE = 2;
    public static final byte TYPE_EXPIRY = 3;
    public static final byte TYPE_PADDING = 4;
    /** Keys longer than this are refused; it also bounds what recovery believes a header. */
    public static final int MAX_KEY_LENGTH = 64 * 1024;

    private RecordFormat() {
    }

    /** Writes a header (position 0..40 of {@code header}) whose CRC continues {@code crcOfValueAndKey}. */
    static void writeHeader(ByteBuffer header, CRC32C crcOfValueAndKey, long seq, long expireAt, int keyLength,
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
        crcOfValueAndKey.update(header.slice(8, HEADER_SIZE - 8));
        header.putInt(4, (int) crcOfValueAndKey.getValue());
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
                    && type >= TYPE_VALUE && type <= TYPE_PADDING
                    && (long) HEADER_SIZE + keyLength + valueLength <= bytesLeft;
        }

        long recordLength() {
            return (long) HEADER_SIZE + keyLength + valueLength;
        }
    }

    /**
     * Whether the record at {@code pos} of {@code channel} with header {@code h} is intact, reading it in pieces
     * through {@code scratch} so that no buffer of the value's size is needed. Returns the key it holds, or null.
     */
    static byte[] verifyStreaming(java.nio.channels.FileChannel channel, long pos, Header h, ByteBuffer scratch)
            throws java.io.IOException {
        CRC32C crc = new CRC32C();
        long valueStart = pos + HEADER_SIZE + h.keyLength();
        for (long done = 0; done < h.valueLength(); ) {
            scratch.clear().limit((int) Math.min(scratch.capacity(), h.valueLength() - done));
            if (!readFully(channel, scratch, valueStart + done)) {
                return null;
            }
            crc.update(scratch.flip());
            done += scratch.limit();
        }
        ByteBuffer keyAndHeader = ByteBuffer.allocate(h.keyLength() + HEADER_SIZE);
        if (!readFully(channel, keyAndHeader.limit(h.keyLength()), pos + HEADER_SIZE)
                || !readFully(channel, keyAndHeader.limit(keyAndHeader.capacity()).position(h.keyLength()), pos)) {
            return null;
        }
        crc.update(keyAndHeader.array(), 0, h.keyLength());
        crc.update(keyAndHeader.array(), h.keyLength() + 8, HEADER_SIZE - 8);
        return (int) crc.getValue() == h.crc() ? java.util.Arrays.copyOf(keyAndHeader.array(), h.keyLength()) : null;
    }

    /** Positional read until {@code buf} is full; false if the file ends first. */
    static boolean readFully(java.nio.channels.FileChannel channel, ByteBuffer buf, long pos)
            throws java.io.IOException {
        long at = pos;
        while (buf.hasRemaining()) {
            int n = channel.read(buf, at);
            if (n < 0) {
                return false;
            }
            at += n;
        }
        return true;
    }

    /** Whether the record starting at {@code at} in {@code buf} (header, key and value all present) is intact. */
    static boolean verify(ByteBuffer buf, int at, Header h) {
        CRC32C crc = new CRC32C();
        crc.update(buf.slice(at + HEADER_SIZE + h.keyLength(), h.valueLength()));
        crc.update(buf.slice(at + HEADER_SIZE, h.keyLength()));
        crc.update(buf.slice(at + 8, HEADER_SIZE - 8));
        return (int) crc.getValue() == h.crc();
    }
}
