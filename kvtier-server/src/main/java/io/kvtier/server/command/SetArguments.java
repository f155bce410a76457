package io.kvtier.server.command;

import io.kvtier.resp.RespCommand;
import io.kvtier.server.reply.CommandException;
import io.kvtier.store.PutOptions;
import io.kvtier.store.PutOptions.Condition;

/**
 * The options of SET (NX XX GET KEEPTTL EX PX EXAT PXAT) and GETEX (EX PX EXAT PXAT PERSIST), parsed with the same
 * acceptance rules as Redis 7.0's parseExtendedStringArgumentsOrReply. The expiry value is kept unparsed: Redis
 * checks it later than the options (GETEX only once it found the key), see {@link #expireAt}.
 */
record SetArguments(Condition condition, boolean get, boolean keepTtl, boolean persist, Expiry.Unit unit,
                    byte[] expiry) {

    static SetArguments parse(RespCommand c, int from, boolean getex) {
        boolean nx = false;
        boolean xx = false;
        boolean get = false;
        boolean keepTtl = false;
        boolean persist = false;
        Expiry.Unit unit = null;
        byte[] expiry = null;
        for (int j = from; j < c.argCount(); j++) {
            byte[] opt = c.bytes(j);
            boolean hasNext = j + 1 < c.argCount();
            if (!getex && Args.is(opt, "nx") && !xx) {
                nx = true;
            } else if (!getex && Args.is(opt, "xx") && !nx) {
                xx = true;
            } else if (!getex && Args.is(opt, "get")) {
                get = true;
            } else if (!getex && Args.is(opt, "keepttl") && unit == null) {
                keepTtl = true;
            } else if (getex && Args.is(opt, "persist") && unit == null) {
                persist = true;
            } else if (hasNext && !keepTtl && !persist && (unit == null || unit == unitOf(opt))
                    && unitOf(opt) != null) {
                unit = unitOf(opt);
                expiry = c.bytes(++j);
            } else {
                throw new CommandException(CommandException.SYNTAX);
            }
        }
        Condition condition = nx ? Condition.IF_ABSENT : xx ? Condition.IF_PRESENT : Condition.ALWAYS;
        return new SetArguments(condition, get, keepTtl, persist, unit, expiry);
    }

    private static Expiry.Unit unitOf(byte[] opt) {
        if (Args.is(opt, "ex")) {
            return Expiry.Unit.EX;
        } else if (Args.is(opt, "px")) {
            return Expiry.Unit.PX;
        } else if (Args.is(opt, "exat")) {
            return Expiry.Unit.EXAT;
        } else if (Args.is(opt, "pxat")) {
            return Expiry.Unit.PXAT;
        }
        return null;
    }

    /** The expiry in epoch millis (0 = none); throws Redis's error for a bad value, naming {@code command}. */
    long expireAt(String command) {
        return unit == null ? 0 : Expiry.absolute(expiry, unit, command);
    }

    PutOptions putOptions(String command) {
        return new PutOptions(expireAt(command), condition, keepTtl, get);
    }

    boolean changesExpiry() {
        return persist || unit != null;
    }
}
