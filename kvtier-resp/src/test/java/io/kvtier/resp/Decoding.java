package io.kvtier.resp;

import static java.nio.charset.StandardCharsets.ISO_8859_1;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/** Test harness: feeds a decoder chunk by chunk, as a channel would, and records what comes out. */
final class Decoding {
    /** Commands as lists of ISO-8859-1 strings (byte-exact), plus the protocol error that ended decoding, if any. */
    record Outcome(List<List<String>> commands, String error) {
    }

    private Decoding() {
    }

    static byte[] bytes(String latin1) {
        return latin1.getBytes(ISO_8859_1);
    }

    /**
     * Feeds {@code chunks} one after the other into a cumulation buffer, decoding after each until the decoder wants
     * more, then retries while it waits for a sink; releases every command (aborting untaken sinks) and closes the
     * decoder at the end.
     */
    static Outcome run(RespDecoder decoder, List<byte[]> chunks) {
        List<List<String>> commands = new ArrayList<>();
        ByteBuf buf = Unpooled.buffer();
        try {
            for (byte[] chunk : chunks) {
                buf.writeBytes(chunk);
                drain(decoder, buf, commands);
                buf.discardReadBytes();
            }
            for (int retry = 0; decoder.isWaitingForSink(); retry++) {
                if (retry == 1000) {
                    throw new AssertionError("the sink factory never gave a sink");
                }
                drain(decoder, buf, commands);
            }
            return new Outcome(commands, null);
        } catch (RespException e) {
            return new Outcome(commands, e.getMessage());
        } finally {
            decoder.close();
            buf.release();
        }
    }

    static Outcome run(RespDecoder decoder, byte[] input) {
        return run(decoder, List.of(input));
    }

    static void drain(RespDecoder decoder, ByteBuf buf, List<List<String>> commands) {
        while (true) {
            int before = buf.readerIndex();
            RespCommand command = decoder.decode(buf);
            if (command == null) {
                return;
            }
            if (buf.readerIndex() == before) {
                throw new AssertionError("a command was returned without consuming bytes");
            }
            commands.add(strings(command));
            command.release();
        }
    }

    static List<String> strings(RespCommand command) {
        List<String> args = new ArrayList<>();
        for (int i = 0; i < command.argCount(); i++) {
            args.add(new String(command.bytes(i), ISO_8859_1));
        }
        return args;
    }

    static List<byte[]> byteByByte(byte[] input) {
        List<byte[]> chunks = new ArrayList<>();
        for (byte b : input) {
            chunks.add(new byte[] {b});
        }
        return chunks;
    }

    /** Cuts {@code input} into random pieces of 1 to {@code maxChunk} bytes. */
    static List<byte[]> randomSplits(byte[] input, Random random, int maxChunk) {
        List<byte[]> chunks = new ArrayList<>();
        for (int at = 0; at < input.length; ) {
            int n = Math.min(input.length - at, 1 + random.nextInt(maxChunk));
            chunks.add(Arrays.copyOfRange(input, at, at + n));
            at += n;
        }
        return chunks;
    }

    /** Cuts {@code input} right after every '\r', so each CR and its LF arrive in different reads. */
    static List<byte[]> splitAfterEveryCarriageReturn(byte[] input) {
        List<byte[]> chunks = new ArrayList<>();
        int from = 0;
        for (int i = 0; i < input.length; i++) {
            if (input[i] == '\r') {
                chunks.add(Arrays.copyOfRange(input, from, i + 1));
                from = i + 1;
            }
        }
        chunks.add(Arrays.copyOfRange(input, from, input.length));
        return chunks;
    }
}
