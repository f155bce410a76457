package io.kvtier.server.command;

import io.kvtier.resp.RespCommand;
import io.kvtier.store.PutOptions;
import io.kvtier.store.PutOptions.Condition;

/**
 * The options of SET (NX XX GET KEEPTTL EX PX EXAT PXAT) and GETEX (EX PX EXAT PXAT PERSIST), parsed with the same
 * acceptance rules as Redis 7.0's parseExtendedStringArgumentsOrReply.
 */
record SetArguments(Condition condition, boolean get, boolean keepTtl, boolean persist, long expireAt) {

    static SetArguments parse(RespCommand c, int from, boolean getex, String command) {
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
        long expireAt = unit == null ? 0 : Expiry.absolute(expiry, unit, command);
        Condition condition = nx ? Condition.IF_ABSENT : xx ? Condition.IF_PRESENT : Condition.ALWAYS;
        return new SetArguments(condition, get, keepTtl, persist, expireAt);
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

    PutOptions putOptions() {
        return new PutOptions(expireAt, condition, keepTtl, get);
    }

    boolean changesExpiry() {
        return persist || expireAt != 0;
    }
}
