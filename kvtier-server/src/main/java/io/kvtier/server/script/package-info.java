/**
 * Lua scripting (EVAL, EVALSHA, SCRIPT): a sandboxed LuaJ interpreter per script thread, the script cache, and
 * Redis's conversions between Lua values and replies. Commands a script calls run through the command package.
 */
package io.kvtier.server.script;
