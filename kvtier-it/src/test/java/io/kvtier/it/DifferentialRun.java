package io.kvtier.it;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;

/**
 * Runs a command script against Redis and kvtier side by side, one connection to each, in one protocol version, and
 * collects a readable report of every line whose replies disagree. A line that changes the connection's protocol
 * (HELLO, RESET) is followed by an uncompared HELLO back to the run's version; QUIT by a fresh connection. Not
 * thread-safe.
 */
final class DifferentialRun implements AutoCloseable {
    private static final int MAX_SCAN_ROUNDS = 100_000;

    private final int redisPort;
    private final int kvtierPort;
    private final int protocol;
    private final List<String> mismatches = new ArrayList<>();
    private RawConnection redis;
    private RawConnection kvtier;
    private int compared;

    DifferentialRun(int redisPort, int kvtierPort, int protocol) {
        this.redisPort = redisPort;
        this.kvtierPort = kvtierPort;
        this.protocol = protocol;
    }

    /** Runs every line; returns the reports of the lines whose replies disagree. */
    List<String> run(List<CommandScript.Line> script) throws IOException {
        reconnect();
        for (CommandScript.Line line : script) {
            compare(line);
        }
        return mismatches;
    }

    int compared() {
        return compared;
    }

    private void compare(CommandScript.Line line) throws IOException {
        compared++;
        Outcome fromRedis = execute(redis, line);
        Outcome fromKvtier = execute(kvtier, line);
        if (fromRedis.reply == null || fromKvtier.reply == null) {
            report(line, fromRedis.text(line), fromKvtier.text(line));
            reconnect();
            return;
        }
        if (!ReplyNormalizer.agree(line, fromRedis.reply, fromKvtier.reply)) {
            report(line, fromRedis.text(line), fromKvtier.text(line));
        }
        switch (line.name()) {
            case "hello", "reset" -> restoreProtocol();
            case "quit" -> reconnect();
            default -> {
            }
        }
    }

    /** A reply, or what went wrong instead (no reply within the timeout, connection closed). */
    private record Outcome(RawReply reply, String failure) {
        String text(CommandScript.Line line) {
            return reply != null ? ReplyNormalizer.display(line, reply) : "(" + failure + ")";
        }
    }

    private static Outcome execute(RawConnection c, CommandScript.Line line) {
        try {
            return new Outcome(line.name().equals("scan") ? fullScan(c, line.args()) : c.call(line.args()), null);
        } catch (IOException e) {
            return new Outcome(null, e.toString());
        }
    }

    /**
     * Follows the SCAN from the script's cursor until the server returns cursor 0, and answers the union of the keys
     * it saw as one sorted array: which keys a full scan returns is specified, how it splits them is not.
     */
    static RawReply fullScan(RawConnection c, List<byte[]> args) throws IOException {
        List<byte[]> next = new ArrayList<>(args);
        TreeSet<byte[]> keys = new TreeSet<>(Arrays::compare);
        for (int round = 0; round < MAX_SCAN_ROUNDS; round++) {
            RawReply reply = c.call(next);
            if (!isScanPage(reply)) {
                return reply; // an error, or a malformed page: compared (and reported) as it is
            }
            byte[] cursor = reply.children().get(0).bulk();
            reply.children().get(1).children().forEach(k -> keys.add(k.bulk()));
            if (Arrays.equals(cursor, new byte[] {'0'})) {
                byte[] union = RawConnection.multibulk(new ArrayList<>(keys));
                return new RawReplyReader(new ByteArrayInputStream(union)).read();
            }
            next.set(1, cursor);
        }
        throw new IOException("SCAN did not return cursor 0 within " + MAX_SCAN_ROUNDS + " calls");
    }

    /** A SCAN reply page: an array of a bulk cursor and an array of bulk keys. */
    private static boolean isScanPage(RawReply reply) {
        List<RawReply> c = reply.children();
        return reply.type() == '*' && c.size() == 2 && c.get(0).type() == '$' && c.get(1).type() == '*'
                && c.get(1).children().stream().allMatch(k -> k.type() == '$');
    }

    private void report(CommandScript.Line line, String redisText, String kvtierText) {
        mismatches.add("RESP" + protocol + " line " + line.number() + ": " + line.text() + "\n    redis : "
                + redisText + "\n    kvtier: " + kvtierText);
    }

    private void restoreProtocol() throws IOException {
        redis.call("HELLO", Integer.toString(protocol));
        kvtier.call("HELLO", Integer.toString(protocol));
    }

    private void reconnect() throws IOException {
        close();
        redis = new RawConnection(redisPort);
        kvtier = new RawConnection(kvtierPort);
        if (protocol != 2) {
            restoreProtocol();
        }
    }

    @Override
    public void close() throws IOException {
        if (redis != null) {
            redis.close();
        }
        if (kvtier != null) {
            kvtier.close();
        }
    }
}
