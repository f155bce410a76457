package io.kvtier.server.command;

import io.kvtier.server.reply.CommandException;

/** Turns Redis expiry arguments (EX, PX, EXAT, PXAT and EXPIRE's seconds) into absolute epoch milliseconds. */
final class Expiry {
    enum Unit { EX, PX, EXAT, PXAT }

    private Expiry() {
    }

    /**
     * Parses the expiry argument for SET/GETEX/SETEX/PSETEX as Redis's getExpireMillisecondsOrReply: a non-integer
     * is "not an integer"; zero, negative or overflowing is "invalid expire time in '{command}' command".
     */
    static long absolute(byte[] arg, Unit unit, String command) {
        long v = Args.parseLong(arg);
        String invalid = "ERR invalid expire time in '" + command + "' command";
        if (v <= 0) {
            throw new CommandException(invalid);
        }
        boolean seconds = unit == Unit.EX || unit == Unit.EXAT;
        if (seconds && v > Long.MAX_VALUE / 1000) {
            throw new CommandException(invalid);
        }
        long ms = seconds ? v * 1000 : v;
        if (unit == Unit.EX || unit == Unit.PX) {
            long now = System.currentTimeMillis();
            if (ms > Long.MAX_VALUE - now) {
                throw new CommandException(invalid);
            }
            ms += now;
        }
        return ms;
    }
}
