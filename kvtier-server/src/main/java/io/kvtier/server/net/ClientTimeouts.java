package io.kvtier.server.net;

import io.kvtier.server.config.ClientLimits;
import java.util.concurrent.TimeUnit;

/*
 * "Progress" for the read timeout: a request in progress must, in each window of --read-timeout seconds, either
 * complete or bring MIN_PROGRESS_BYTES (1 MiB). A client sending 1 byte/s is thus closed after one window whatever
 * its request declared, while any honest client faster than 1 MiB per window (34 KiB/s at the default 30 s) is never
 * cut off, however large its value. The window only runs while the server waits for the client: time in which the
 * server itself stopped reading (a command running, memory or disk behind, replies not read) resets it.
 */

/**
 * The idle timeout (Redis's {@code timeout}) and the read timeout of one connection, decided from what the connection
 * reports: bytes read, commands finished, and once a second whether it now waits for the client. Event-loop confined.
 */
final class ClientTimeouts {
    enum Verdict { OK, IDLE, TOO_SLOW }

    private final long idleNanos;
    private final long readNanos;
    private final int readSeconds;
    private long bytesRead;
    private long lastActivity;  // last bytes read or command finished
    private long windowStart;   // 0, or when the current read-timeout window began
    private long windowBytes;   // bytesRead then
    private long lastProgress;  // bytes the last window that failed brought

    ClientTimeouts(ClientLimits limits, long now) {
        this.idleNanos = TimeUnit.SECONDS.toNanos(limits.idleTimeoutSeconds());
        this.readNanos = TimeUnit.SECONDS.toNanos(limits.readTimeoutSeconds());
        this.readSeconds = limits.readTimeoutSeconds();
        this.lastActivity = now;
    }

    void read(int n, long now) {
        bytesRead += n;
        lastActivity = now;
    }

    /** A command was decoded or finished: the request it was is no longer in progress. */
    void commandDone(long now) {
        lastActivity = now;
        windowStart = 0;
    }

    /**
     * @param waitingForClient a request is in progress and the server is reading (not busy, not paused)
     * @param busy             a command is running (Redis does not time out a client waiting for its reply either)
     */
    Verdict check(long now, boolean waitingForClient, boolean busy) {
        if (idleNanos > 0 && !busy && now - lastActivity > idleNanos) {
            return Verdict.IDLE;
        }
        if (readNanos == 0 || !waitingForClient) {
            windowStart = 0;
            return Verdict.OK;
        }
        if (windowStart == 0) {
            windowStart = now;
            windowBytes = bytesRead;
            return Verdict.OK;
        }
        if (now - windowStart < readNanos) {
            return Verdict.OK;
        }
        long progress = bytesRead - windowBytes;
        windowStart = now;
        windowBytes = bytesRead;
        if (progress < ClientLimits.MIN_PROGRESS_BYTES) {
            lastProgress = progress;
            return Verdict.TOO_SLOW;
        }
        return Verdict.OK;
    }

    /** The error for a {@link Verdict#TOO_SLOW} request. */
    String tooSlowError() {
        return "ERR request timed out: " + lastProgress + " bytes in " + readSeconds + " s, below the "
                + ClientLimits.MIN_PROGRESS_BYTES + " bytes a request in progress must bring per --read-timeout;"
                + " closing the connection";
    }
}
