package io.kvtier.it;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * Decides whether Redis's and kvtier's replies to one script line agree: byte for byte, except where replies
 * legitimately differ. Those are only: connection ids and HELLO's id/version, clocks (TIME), server reports (INFO,
 * CLIENT INFO/LIST, COMMAND COUNT), the unspecified order of KEYS, and TTL/PTTL read a moment apart. (SCAN arrives
 * here already as the sorted union of a full iteration, see {@link DifferentialRun#fullScan}.) Error replies are
 * always compared byte for byte. Stateless.
 */
final class ReplyNormalizer {
    /** How far apart TTL (seconds) and PTTL (milliseconds) may be when the two servers are asked a moment apart. */
    private static final long TTL_TOLERANCE = 1;
    private static final long PTTL_TOLERANCE = 1_000;

    private ReplyNormalizer() {
    }

    static boolean agree(CommandScript.Line line, RawReply redis, RawReply kvtier) {
        if (redis.isError() || kvtier.isError()) {
            return Arrays.equals(redis.raw(), kvtier.raw());
        }
        long tolerance = switch (line.name()) {
            case "ttl" -> TTL_TOLERANCE;
            case "pttl" -> PTTL_TOLERANCE;
            default -> 0;
        };
        if (tolerance > 0 && redis.type() == ':' && kvtier.type() == ':' && redis.integer() >= 0
                && kvtier.integer() >= 0) {
            return Math.abs(redis.integer() - kvtier.integer()) <= tolerance;
        }
        return canonical(line, redis).equals(canonical(line, kvtier));
    }

    /** The reply as compared: its escaped bytes, or for the commands above a form without what may differ. */
    static String canonical(CommandScript.Line line, RawReply reply) {
        return switch (line.name()) {
            case "keys" -> reply.children().isEmpty() ? reply.escaped() : reply.sorted().escaped();
            case "info", "time" -> shape(reply);
            case "command" -> line.lowerArg(1).equals("count") ? shape(reply) : reply.escaped();
            case "client" -> Set.of("id", "info", "list").contains(line.lowerArg(1)) ? shape(reply) : reply.escaped();
            case "hello" -> masked(reply, Set.of("id", "version"));
            default -> reply.escaped();
        };
    }

    /** The reply as a report shows it: its escaped bytes, KEYS sorted so that two lists read side by side. */
    static String display(CommandScript.Line line, RawReply reply) {
        return line.name().equals("keys") && !reply.children().isEmpty() ? reply.sorted().escaped() : reply.escaped();
    }

    /** Only the reply's type and, for aggregates, its elements' shapes: "*[$,$]" for TIME. */
    private static String shape(RawReply reply) {
        String type = String.valueOf((char) reply.type());
        if (reply.children().isEmpty()) {
            return type;
        }
        return type + reply.children().stream().map(ReplyNormalizer::shape).toList();
    }

    /** A map reply (RESP3 map or RESP2 flat array) with the values of {@code fields} replaced by "?". */
    private static String masked(RawReply reply, Set<String> fields) {
        List<RawReply> c = reply.children();
        if (c.size() % 2 != 0) {
            return reply.escaped();
        }
        StringBuilder s = new StringBuilder(RawReply.leaf(reply.header()).escaped());
        for (int i = 0; i < c.size(); i += 2) {
            s.append(c.get(i).escaped());
            boolean hide = c.get(i).type() == '$' && fields.contains(new String(c.get(i).bulk(),
                    StandardCharsets.UTF_8));
            s.append(hide ? "?" : c.get(i + 1).escaped());
        }
        return s.toString();
    }
}
