package io.kvtier.store.disk;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.util.zip.CRC32C;

/**
 * Layout of one record (format version 3), little-endian:
 * <pre>
 *  0  int  magic 0x3354564B ("KVT3" on disk; version 2 used 0x4B565432 and is still read, version 1 used 0x4B565452
 *          and is refused, never misread; the magics differ in 11 bits, so no flipped bit turns one into another)
 *  4  int  header CRC32C over header bytes [8, 56), then the key
 *  8  long sequence number (global, increasing; decides which version of a key wins)
 * 16  long written: the highest sequence number appended to the log up to and including this record; it bounds
 *          the sequence number of any record written before this one (see RegionScanner)
 * 24  long expiry, epoch milliseconds, 0 = none
 * 32  int  key length
 * 36  int  value length
 * 40  byte type: 1 = value, 2 = tombstone (kills records of the key with a lower sequence number),
 *               3 = expiry (its 8-byte value is the sequence number of the version whose expiry it sets),
 *               4 = padding (no key; its "value" is filler to skip),
 *               5 = seal (no key; first in each region of the log: the summary of the region before it,
 *                   see RegionSummary)
 * 41  3 bytes reserved, zero
 * 44  int  value CRC32C
 * 48  long the value's cluster version (0 outside a cluster): one number per written state of a key, the same on
 *          every node holding that state, so that two nodes can tell which keys differ without comparing bytes
 * 56  key, then value, then a 32-byte trailer:
 *      0 int  trailer magic 0x4B565445
 *      4 int  trailer CRC32C over trailer bytes [8, 32)
 *      8 long sequence number (as in the header)
 *     16 long fingerprint of the key (see {@link #fingerprint})
 *     24 int  record length without the trailer (header + key + value)
 *     28 byte type, then 3 bytes zero
 * </pre>
 * Version 2 is the same without the cluster version: a 48-byte header, its checksum over bytes [8, 48). A region
 * file holds records of one version ({@link Layout}); regions written by version 2 are read (their values have
 * cluster version 0) until they are evicted, and every new region is version 3.
 *
 * <p>Two checksums, so that a damaged value still names its key and sequence number (the header is intact), and a
 * trailer, so that a damaged header still names them: the trailer sits just before the next record and points back
 * at the start of its own. Recovery uses both to drop exactly the key whose record is damaged (RegionScanner).
 * The value's checksum is separate and not chained with the header's, so a value streamed to disk can be checksummed
 * as it arrives, before its key and sequence number are known (see DirectWrite).
 */
public final class RecordFormat {
    public static final int MAGIC = 0x3354564B;
    /** The magic of format version 2, whose regions are read (cluster version 0) but never written. */
    static final int MAGIC_V2 = 0x4B565432;
    /** The magic of format version 1, which this version refuses to open. */
    static final int MAGIC_V1 = 0x4B565452;
    /** The header of the records this version writes (version 3). */
    public static final int HEADER_SIZE = 56;
    static final int TRAILER_MAGIC = 0x4B565445;
    public static final int TRAILER_SIZE = 32;
    public static final byte TYPE_VALUE = 1;
    public static final byte TYPE_TOMBSTONE = 2;
    public static final byte TYPE_EXPIRY = 3;
    public static final byte TYPE_PADDING = 4;
    public static final byte TYPE_SEAL = 5;
    /** The record layout of one region file: every record in a region has its region's layout. */
    public enum Layout {
        /** Format version 2: 48-byte header, no cluster version; read only. */
        V2(MAGIC_V2, 48),
        /** Format version 3, the one written. */
        V3(MAGIC, HEADER_SIZE);

        final int magic;
        final int headerSize;

        Layout(int magic, int headerSize) {
            this.magic = magic;
            this.headerSize = headerSize;
        }

        public int headerSize() {
            return headerSize;
        }

        /** The layout whose magic is {@code magic}, or null. */
        static Layout ofMagic(int magic) {
            return magic == MAGIC ? V3 : magic == MAGIC_V2 ? V2 : null;
        }
    }

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

    /**
     * Writes a version-3 header into {@code header} (positions 0..56) for a record holding {@code key}, whose value
     * has cluster version {@code version}.
     */
    static void writeHeader(ByteBuffer header, int valueCrc, long seq, long written, long expireAt, byte[] key,
                            int valueLength, byte type, long version) {
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
        header.putLong(48, version);
        header.putInt(4, headerCrc(header, 0, HEADER_SIZE, ByteBuffer.wrap(key)));
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

    private static int headerCrc(ByteBuffer buf, int at, int headerSize, ByteBuffer key) {
        CRC32C crc = new CRC32C();
        crc.update(buf.slice(at + 8, headerSize - 8));
        crc.update(key.duplicate());
        return (int) crc.getValue();
    }

    /**
     * A parsed header of a record of {@code layout}; {@link #plausible} says whether its lengths can be trusted enough
     * to read further. {@code version} is the value's cluster version (0 in version 2).
     */
    record Header(Layout layout, int magic, int crc, long seq, long written, long expireAt, int keyLength,
                  int valueLength, byte type, int valueCrc, long version) {
        /** The header at {@code at} of {@code buf}, read as {@code layout} (which must have its bytes there). */
        static Header parse(ByteBuffer buf, int at, Layout layout) {
            ByteBuffer b = buf.duplicate().order(ByteOrder.LITTLE_ENDIAN);
            return new Header(layout, b.getInt(at), b.getInt(at + 4), b.getLong(at + 8), b.getLong(at + 16),
                    b.getLong(at + 24), b.getInt(at + 32), b.getInt(at + 36), b.get(at + 40), b.getInt(at + 44),
                    layout == Layout.V3 ? b.getLong(at + 48) : 0);
        }

        /** Magic, lengths and type are in range; says nothing about the checksum. */
        boolean sane() {
            return magic == layout.magic && keyLength >= 0 && keyLength <= MAX_KEY_LENGTH && valueLength >= 0
                    && type >= TYPE_VALUE && type <= TYPE_SEAL;
        }

        boolean plausible(long bytesLeft) {
            return sane() && recordLength() <= bytesLeft;
        }

        int headerSize() {
            return layout.headerSize;
        }

        /** Header, key and value: what a reader needs (the trailer is only for recovery). */
        long recordLength() {
            return (long) layout.headerSize + keyLength + valueLength;
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

    /**
     * Whether an intact header of {@code layout} (and its key) starts at {@code at} of {@code buf}, within the
     * buffer's limit.
     */
    static boolean intactHeaderAt(ByteBuffer buf, int at, Layout layout) {
        if (buf.limit() - at < layout.headerSize) {
            return false;
        }
        Header h = Header.parse(buf, at, layout);
        return h.sane() && at + layout.headerSize + h.keyLength() <= buf.limit() && headerIntact(buf, at, h);
    }

    /** Whether the header in {@code buf} at {@code at}, followed there by its key, passes its checksum. */
    static boolean headerIntact(ByteBuffer buf, int at, Header h) {
        return h.sane() && headerCrc(buf, at, h.headerSize(), buf.slice(at + h.headerSize(), h.keyLength()))
                == h.crc();
    }

    /**
     * Whether the value of the record at {@code pos} of {@code channel} (whose header {@code h} is intact) passes its
     * checksum, reading it in pieces through {@code scratch} so that no buffer of the value's size is needed.
     */
    static boolean valueIntact(FileChannel channel, long pos, Header h, ByteBuffer scratch) throws IOException {
        CRC32C crc = new CRC32C();
        long valueStart = pos + h.headerSize() + h.keyLength();
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
        ByteBuffer headerAndKey = ByteBuffer.allocate(h.headerSize() + h.keyLength());
        if (!readFully(channel, headerAndKey, pos) || !headerIntact(headerAndKey.flip(), 0, h)) {
            return null;
        }
        return java.util.Arrays.copyOfRange(headerAndKey.array(), h.headerSize(), h.headerSize() + h.keyLength());
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
        crc.update(buf.slice(at + h.headerSize() + h.keyLength(), h.valueLength()));
        return (int) crc.getValue() == h.valueCrc();
    }
}
