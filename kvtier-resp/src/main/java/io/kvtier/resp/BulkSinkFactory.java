package io.kvtier.resp;

/** Supplies {@link BulkSink}s for bulk payloads of at least {@link RespDecoder.Limits#sinkThreshold()} bytes. */
@FunctionalInterface
public interface BulkSinkFactory {
    /**
     * Opens a sink for a payload of {@code length} bytes that is argument {@code argIndex} of the command being
     * decoded, or returns {@code null} when none can be had right now (memory full): the decoder then stops,
     * reports {@link RespDecoder#isWaitingForSink()}, and retries on the next {@code decode} call.
     *
     * @throws RespException to refuse the payload outright (the connection is then closed with that error)
     */
    BulkSink open(int argIndex, long length);
}
