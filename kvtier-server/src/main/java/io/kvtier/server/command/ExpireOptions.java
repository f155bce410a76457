package io.kvtier.server.command;

import io.kvtier.resp.RespCommand;
import io.kvtier.server.reply.CommandException;
import io.kvtier.store.ExpireCondition;

/**
 * The NX XX GT LT options of EXPIRE and its siblings, parsed and checked as Redis 7.0's
 * parseExtendedExpireArgumentsOrReply. XX combines with GT or LT: GT already requires an expiry, so XX GT is GT; XX LT
 * is LT plus {@code requiresExpiry}, which the command checks before asking the store (the store's LT alone also
 * applies to keys without expiry). That check and the store's change are two steps, so a PERSIST from another
 * connection in between can let XX LT set an expiry; the store has no combined condition to close that window.
 */
record ExpireOptions(ExpireCondition condition, boolean requiresExpiry) {

    static ExpireOptions parse(RespCommand c) {
        boolean nx = false;
        boolean xx = false;
        boolean gt = false;
        boolean lt = false;
        for (int i = 3; i < c.argCount(); i++) {
            byte[] o = c.bytes(i);
            if (Args.is(o, "nx")) {
                nx = true;
            } else if (Args.is(o, "xx")) {
                xx = true;
            } else if (Args.is(o, "gt")) {
                gt = true;
            } else if (Args.is(o, "lt")) {
                lt = true;
            } else {
                throw new CommandException("ERR Unsupported option " + Args.quoted(o));
            }
        }
        if (nx && (xx || gt || lt)) {
            throw new CommandException("ERR NX and XX, GT or LT options at the same time are not compatible");
        }
        if (gt && lt) {
            throw new CommandException("ERR GT and LT options at the same time are not compatible");
        }
        if (nx) {
            return new ExpireOptions(ExpireCondition.NX, false);
        } else if (gt) {
            return new ExpireOptions(ExpireCondition.GT, false);
        } else if (lt) {
            return new ExpireOptions(ExpireCondition.LT, xx);
        }
        return new ExpireOptions(xx ? ExpireCondition.XX : ExpireCondition.ALWAYS, false);
    }
}
