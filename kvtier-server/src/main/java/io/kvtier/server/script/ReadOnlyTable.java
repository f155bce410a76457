package io.kvtier.server.script;

import org.luaj.vm2.LuaError;
import org.luaj.vm2.LuaTable;
import org.luaj.vm2.LuaValue;

/**
 * A Lua table scripts cannot change once {@link #seal sealed}, as Redis 7.0 protects its library tables ({@code redis},
 * {@code string}, {@code table}, {@code math}): a script thread's interpreter is reused by the scripts that follow, so
 * none may leave anything behind for them (and the string library is shared by all of them).
 */
class ReadOnlyTable extends LuaTable {
    private boolean sealed;

    /** A sealed copy of {@code source}'s entries. */
    static ReadOnlyTable copyOf(LuaTable source) {
        ReadOnlyTable t = new ReadOnlyTable();
        LuaValue k = LuaValue.NIL;
        while (true) {
            org.luaj.vm2.Varargs next = source.next(k);
            if ((k = next.arg1()).isnil()) {
                break;
            }
            t.rawset(k, next.arg(2));
        }
        t.seal();
        return t;
    }

    void seal() {
        sealed = true;
    }

    boolean sealed() {
        return sealed;
    }

    private void refuse() {
        if (sealed) {
            throw new LuaError(LuaValue.valueOf(ScriptClock.currentPosition() + "Attempt to modify a readonly table"));
        }
    }

    @Override
    public void set(int key, LuaValue value) {
        refuse();
        super.set(key, value);
    }

    @Override
    public void set(LuaValue key, LuaValue value) {
        refuse();
        super.set(key, value);
    }

    @Override
    public void rawset(int key, LuaValue value) {
        refuse();
        super.rawset(key, value);
    }

    @Override
    public void rawset(LuaValue key, LuaValue value) {
        refuse();
        super.rawset(key, value);
    }

    @Override
    public void hashset(LuaValue key, LuaValue value) {
        refuse();
        super.hashset(key, value);
    }

    @Override
    public LuaValue setmetatable(LuaValue metatable) {
        refuse();
        return super.setmetatable(metatable);
    }
}
