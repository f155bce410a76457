package io.kvtier.server.script;

import org.luaj.vm2.Globals;
import org.luaj.vm2.LuaError;
import org.luaj.vm2.LuaValue;

/**
 * The global table of a script thread's interpreter, protected once {@link #seal sealed} as Redis 7.0 protects it:
 * a script can neither create or change a global ("Attempt to modify a readonly table") nor read one that does not
 * exist ("Script attempted to access nonexistent global variable"). KEYS and ARGV are set from Java with
 * {@link #install}. It must be a {@link Globals}: LuaJ calls the instruction hook only for closures over one.
 */
final class ScriptGlobals extends Globals {
    private final ScriptClock clock;
    private boolean sealed;

    ScriptGlobals(ScriptClock clock) {
        this.clock = clock;
    }

    void seal() {
        sealed = true;
    }

    boolean sealed() {
        return sealed;
    }

    /** Sets a global past the protection (KEYS and ARGV before each run). */
    void install(String name, LuaValue value) {
        boolean was = sealed;
        sealed = false;
        try {
            super.rawset(LuaValue.valueOf(name), value);
        } finally {
            sealed = was;
        }
    }

    private void refuse() {
        if (sealed) {
            throw new LuaError(LuaValue.valueOf(clock.position() + "Attempt to modify a readonly table"));
        }
    }

    @Override
    public LuaValue get(LuaValue key) {
        LuaValue v = rawget(key);
        if (v.isnil() && sealed) {
            throw new LuaError(LuaValue.valueOf(clock.position()
                    + "Script attempted to access nonexistent global variable '" + key.tojstring() + "'"));
        }
        return v;
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
