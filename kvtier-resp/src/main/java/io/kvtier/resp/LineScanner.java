package io.kvtier.resp;

import io.netty.buffer.ByteBuf;

/**
 * Finds the terminator of the line that starts at a buffer's reader index, looking only within the first
 * {@code maxLineLength + 1} bytes and remembering how far it already looked, so a line that arrives one byte at a time
 * is scanned once. Like Redis, which searches with C's strchr, it never finds a terminator behind a NUL byte. Offsets
 * are relative to the reader index, so the caller may discard read bytes between calls; not thread-safe, owned by
 * one {@link RespDecoder}.
 */
final class LineScanner {
    private final int maxLineLength;
    /** Bytes after the reader index already searched without finding the terminator. */
    private int scanned;
    /** A NUL came before any terminator: this line can only end in the too-big error. */
    private boolean blockedByNul;

    LineScanner(int maxLineLength) {
        this.maxLineLength = maxLineLength;
    }

    /**
     * Index of the first {@code terminator} of the current line, or -1 while it may still arrive.
     *
     * @throws RespException carrying {@code tooBig} once more than {@code maxLineLength} bytes are readable without it
     */
    int find(ByteBuf in, byte terminator, String tooBig) {
        int from = in.readerIndex();
        int window = (int) Math.min(in.readableBytes(), maxLineLength + 1L);
        if (!blockedByNul && scanned < window) {
            int found = in.indexOf(from + scanned, from + window, terminator);
            int nul = in.indexOf(from + scanned, found >= 0 ? found : from + window, (byte) 0);
            if (nul >= 0) {
                blockedByNul = true;
            } else if (found >= 0) {
                scanned = found - from;
                return found;
            }
        }
        scanned = window;
        if (in.readableBytes() > maxLineLength) {
            throw new RespException(tooBig);
        }
        return -1;
    }

    /** Index of the '\r' ending a count or length line, or -1 until that '\r' and the byte after it are readable. */
    int findCrAndOneMore(ByteBuf in, String tooBig) {
        int cr = find(in, (byte) '\r', tooBig);
        return cr >= 0 && cr + 1 < in.writerIndex() ? cr : -1;
    }

    /** Consumes the current line: moves the reader index to {@code next}, the start of the next line. */
    void consume(ByteBuf in, int next) {
        in.readerIndex(next);
        scanned = 0;
        blockedByNul = false;
    }
}
