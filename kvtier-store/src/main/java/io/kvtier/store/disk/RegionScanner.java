package io.kvtier.store.disk;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads one region front to back at start-up, verifying every record's checksum. The first record that is torn
 * (cut short by a crash) or corrupt ends the scan: everything from there on is counted as dropped and truncated
 * away, because a length field after damage cannot be trusted to find the next record.
 */
final class RegionScanner {
    private static final Logger log = LoggerFactory.getLogger(RegionScanner.class);
    private static final int CHUNK = 8 * 1024 * 1024;

    /** Running totals over all regions of one recovery. */
    static final class Totals {
        long records;
        long bytes;
        long droppedRecords;
        long droppedBytes;
    }

    private final Region region;
    private final Consumer<RecoveredRecord> recovered;
    private final Totals totals;

    RegionScanner(Region region, Consumer<RecoveredRecord> recovered, Totals totals) {
        this.region = region;
        this.recovered = recovered;
        this.totals = totals;
    }

    void scan() throws IOException {
        long fileSize = region.channel().size();
        long pos = 0;
        ByteBuffer chunk = ByteBuffer.allocateDirect(CHUNK);
        while (pos < fileSize) {
            long left = fileSize - pos;
            ByteBuffer headerBuf = readAt(chunk, pos, (int) Math.min(RecordFormat.HEADER_SIZE, left));
            if (headerBuf.remaining() < RecordFormat.HEADER_SIZE) {
                drop(pos, fileSize, "torn header");
                return;
            }
            RecordFormat.Header h = RecordFormat.Header.parse(headerBuf, 0);
            if (!h.plausible(left)) {
                drop(pos, fileSize, h.magic() != RecordFormat.MAGIC ? "bad magic" : "torn record");
                return;
            }
            long length = h.recordLength();
            byte[] key;
            if (length <= CHUNK) {
                ByteBuffer record = readAt(chunk, pos, (int) length);
                key = RecordFormat.verify(record, 0, h) ? keyOf(record, h) : null;
            } else {
                key = RecordFormat.verifyStreaming(region.channel(), pos, h, chunk);
            }
            if (key == null) {
                // The header looked sound, so its length is probably right: skip just this record and go on, so
                // that one flipped bit does not cost the tombstones behind it. A wrong guess fails the next header.
                log.error("region {}: checksum mismatch in the record at offset {} ({} bytes); skipping it", region,
                        pos, length);
                totals.droppedRecords++;
                totals.droppedBytes += length;
                pos += length;
                region.grow(length);
                continue;
            }
            if (h.type() == RecordFormat.TYPE_PADDING) {
                pos += length;
                region.grow(length);
                continue;
            }
            DiskLocation location = new DiskLocation(region, pos, h.keyLength(), h.valueLength());
            long target = h.type() == RecordFormat.TYPE_EXPIRY && h.valueLength() == 8 && length <= CHUNK
                    ? chunk.order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong(RecordFormat.HEADER_SIZE + h.keyLength())
                    : 0;
            recovered.accept(new RecoveredRecord(key, h.seq(), h.expireAt(), h.type(), target, location));
            totals.records++;
            totals.bytes += length;
            pos += length;
            region.grow(length);
        }
    }

    private static byte[] keyOf(ByteBuffer record, RecordFormat.Header h) {
        byte[] key = new byte[h.keyLength()];
        record.get(RecordFormat.HEADER_SIZE, key);
        return key;
    }

    private ByteBuffer readAt(ByteBuffer buf, long pos, int length) throws IOException {
        buf.clear().limit(length);
        while (buf.hasRemaining()) {
            if (region.channel().read(buf, pos + buf.position()) < 0) {
                break;
            }
        }
        return buf.flip();
    }

    private void drop(long pos, long fileSize, String why) throws IOException {
        totals.droppedRecords++;
        totals.droppedBytes += fileSize - pos;
        log.error("region {}: {} at offset {}; dropping the last {} bytes of the region", region, why, pos,
                fileSize - pos);
        region.channel().truncate(pos);
        region.channel().force(true);
    }
}
