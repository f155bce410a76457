package io.kvtier.store.disk;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.util.zip.CRC32C;

/**
 * Layout of one record (format version 2), little-endian:
 * <pre>
 *  0  int  magic 0x4B565432 ("2TVK" on disk; version 1 used 0x4B565452 and is refused, never misread)
 *  4  int  header CRC32C over header bytes [8, 48), then the key
 *  8  long sequence number (global, increasing; decides which version of a key wins)
 * 16  long written: the highest sequence number appended to the log up to and including this record; it bounds
 *          the sequence number of any record written before this one (see RegionScanner)
 * 24  long expiry, epoch milliseconds, 0 = none
 * 32  int  key length
 * 36  int  value length
 * 40  byte type: 1 = value, 2 = tombstone (kills records of the key with a lower sequence number),
 *               3 = expiry (its 8-byte value is the sequence number of the version whose expiry it sets),
 *               4 = padding (no key; its "value" is filler to skip)
 * 41  3 bytes reserved, zero
 * 44  int  value CRC32C
 * 48  key, then value, then a 32-byte trailer:
 *      0 int  trailer magic 0x4B565445
 *      4 int  trailer CRC32C over trailer bytes [8, 32)
 *      8 long sequence number (as in the header)
 *     16 long fingerprint of the key (see {@link #fingerprint})
 *     24 int  record length without the trailer (header + key + value)
 *     28 byte type, then 3 bytes zero
 * </pre>
 * Two checksums, so that a damaged value still names its key and sequence number (the header is intact), and a
 * trailer, so that a damaged header still names them: the trailer sits just before the next record and points back
 * at the start of its own. Recovery uses both to drop exactly the key whose record is damaged (RegionScanner).
 * The value's checksum is separate and not chained with the header's, so a value streamed to disk can be checksummed
 * as it arrives, before its key and sequence number are known (see DirectWrite).
 */
public final class RecordFormat {
    public static final int MAGIC = 0x4B565432;
    /** The magic of format version 1, which this version refuses to open. */
    static final int MAGIC_V1 = 0x4B565452;
    public static final int HEADER_SIZE = 48;
    static final int TRAILER_MAGIC = 0x4B565445;
    public static final int TRAILER_SIZE = 32;
    public static final byte TYPE_VALUE = 1;
    public static final byte TYPE_TOMBSTONE = 2;
    public static final byte TYPE_EXPIRY = 3;
    public static final byte TYPE_PADDING = 4;
    /** Keys longer than this are refused; it also bounds what recovery believes a header. */
    public static final int MAX_KEY_LENGTH = 64 * 1024;

    private RecordFormat() {
    }

    /** Bytes a record takes on disk: header, key, value and trailer. */
    public static long footprint(int keyLength, long valueLength) {
        return HEADER_SIZE + keyLength + valueLength + TRAILER_SIZE;
    }

    /**
     * A 64-bit fingerprint of a key (FNV-1a folded through MurmurHash3's finalizer), stored in trailers so that a
     * record whose header is damaged still names its key. A collision only ever drops one more key, never serves one.
     */
    public static long fingerprint(byte[] key) {
        long h = 0xcbf29ce484222325L;
        for (byte b : key) {
            h = (h ^ (b & 0xff)) * 0x100000001b3L;
        }
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        return h ^ (h >>> 33);
    }

    /** Writes a header into {@code header} (positions 0..48) for a record holding {@code key}. */
    static void writeHeader(ByteBuffer header, int valueCrc, long seq, long written, long expireAt, byte[] key,
                            int valueLength, byte type) {
        header.order(ByteOrder.LITTLE_ENDIAN);
        header.putInt(0, MAGIC);
        header.putLong(8, seq);
        header.putLong(16, written);
        header.putLong(24, expireAt);
        header.putInt(32, key.length);
        header.putInt(36, valueLength);
        header.put(40, type);
        header.put(41, (byte) 0).put(42, (byte) 0).put(43, (byte) 0);
        header.putInt(44, valueCrc);
        header.putInt(4, headerCrc(header, 0, ByteBuffer.wrap(key)));
    }

    /** Writes the trailer of a record into {@code trailer} (positions 0..32). */
    static void writeTrailer(ByteBuffer trailer, long seq, byte[] key, int keyLength, long valueLength, byte type) {
        trailer.order(ByteOrder.LITTLE_ENDIAN);
        trailer.putInt(0, TRAILER_MAGIC);
        trailer.putLong(8, seq);
        trailer.putLong(16, fingerprint(key));
        trailer.putInt(24, Math.toIntExact(HEADER_SIZE + keyLength + valueLength));
        trailer.put(28, type).put(29, (byte) 0).put(30, (byte) 0).put(31, (byte) 0);
        CRC32C crc = new CRC32C();
        crc.update(trailer.slice(8, TRAILER_SIZE - 8));
        trailer.putInt(4, (int) crc.getValue());
    }

    private static int headerCrc(ByteBuffer buf, int at, ByteBuffer key) {
        CRC32C crc = new CRC32C();
        crc.update(buf.slice(at + 8, HEADER_SIZE - 8));
        crc.update(key.duplicate());
        return (int) crc.getValue();
    }

    /** A parsed header; {@link #plausible} says whether its lengths can be trusted enough to read further. */
    record Header(int magic, int crc, long seq, long written, long expireAt, int keyLength, int valueLength,
                  byte type, int valueCrc) {
        static Header parse(ByteBuffer buf, int at) {
            ByteBuffer b = buf.duplicate().order(ByteOrder.LITTLE_ENDIAN);
            return new Header(b.getInt(at), b.getInt(at + 4), b.getLong(at + 8), b.getLong(at + 16),
                    b.getLong(at + 24), b.getInt(at + 32), b.getInt(at + 36), b.get(at + 40), b.getInt(at + 44));
        }

        /** Magic, lengths and type are in range; says nothing about the checksum. */
        boolean sane() {
            return magic == MAGIC && keyLength >= 0 && keyLength <= MAX_KEY_LENGTH && valueLength >= 0
                    && type >= TYPE_VALUE && type <= TYPE_PADDING;
        }

        boolean plausible(long bytesLeft) {
            return sane() && recordLength() <= bytesLeft;
        }

        /** Header, key and value: what a reader needs (the trailer is only for recovery). */
        long recordLength() {
            return (long) HEADER_SIZE + keyLength + valueLength;
        }

        long footprint() {
            return recordLength() + TRAILER_SIZE;
        }
    }

    /** A parsed trailer. */
    record Trailer(long seq, long fingerprint, int recordLength, byte type) {
        /** The trailer at {@code at} of {@code buf}, or null if its magic or checksum is wrong. */
        static Trailer parse(ByteBuffer buf, int at) {
            ByteBuffer b = buf.duplicate().order(ByteOrder.LITTLE_ENDIAN);
            if (b.getInt(at) != TRAILER_MAGIC) {
                return null;
            }
            CRC32C crc = new CRC32C();
            crc.update(b.slice(at + 8, TRAILER_SIZE - 8));
            if ((int) crc.getValue() != b.getInt(at + 4)) {
                return null;
            }
            return new Trailer(b.getLong(at + 8), b.getLong(at + 16), b.getInt(at + 24), b.get(at + 28));
        }

        long footprint() {
            return (long) recordLength + TRAILER_SIZE;
        }
    }

    /** Whether the header in {@code buf} at {@code at}, followed there by its key, passes its checksum. */
    static boolean headerIntact(ByteBuffer buf, int at, Header h) {
        return h.sane() && headerCrc(buf, at, buf.slice(at + HEADER_SIZE, h.keyLength())) == h.crc();
    }

    /**
     * Whether the value of the record at {@code pos} of {@code channel} (whose header {@code h} is intact) passes its
     * checksum, reading it in pieces through {@code scratch} so that no buffer of the value's size is needed.
     */
    static boolean valueIntact(FileChannel channel, long pos, Header h, ByteBuffer scratch) throws IOException {
        CRC32C crc = new CRC32C();
        long valueStart = pos + HEADER_SIZE + h.keyLength();
        for (long done = 0; done < h.valueLength(); ) {
            scratch.clear().limit((int) Math.min(scratch.capacity(), h.valueLength() - done));
            if (!readFully(channel, scratch, valueStart + done)) {
                return false;
            }
            crc.update(scratch.flip());
            done += scratch.limit();
        }
        return (int) crc.getValue() == h.valueCrc();
    }

    /**
     * Reads and checks the header and key at {@code pos} of {@code channel}; returns the key if the header is intact
     * and its record fits in {@code bytesLeft}, else null.
     */
    static byte[] readKey(FileChannel channel, long pos, Header h, long bytesLeft) throws IOException {
        if (!h.plausible(bytesLeft)) {
            return null;
        }
        ByteBuffer headerAndKey = ByteBuffer.allocate(HEADER_SIZE + h.keyLength());
        if (!readFully(channel, headerAndKey, pos) || !headerIntact(headerAndKey.flip(), 0, h)) {
            return null;
        }
        return java.util.Arrays.copyOfRange(headerAndKey.array(), HEADER_SIZE, HEADER_SIZE + h.keyLength());
    }

    /** Positional read until {@code buf} is full; false if the file ends first. */
    static boolean readFully(FileChannel channel, ByteBuffer buf, long pos) throws IOException {
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
        if (!headerIntact(buf, at, h)) {
            return false;
        }
        CRC32C crc = new CRC32C();
        crc.update(buf.slice(at + HEADER_SIZE + h.keyLength(), h.valueLength()));
        return (int) crc.getValue() == h.valueCrc();
    }
}
