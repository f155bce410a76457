#!/usr/bin/env bash
# Redis's own Tcl test suite against a kvtier node (issue 29): the units a string key-value store should pass, run in
# Redis's external-server mode (--host/--port), one fresh node per unit, then each result sorted into passed, left out
# by the suite's own tags (tests that need DEBUG, replication, a restart...), not applicable (a command or feature
# kvtier does not have, README "Redis compatibility"), and failures that apply. Needs Redis 7.0's source tree (tests/
# and runtest; e.g. `git archive 7.0.15 tests runtest | tar -x -C DIR` in a clone of redis/redis), tclsh 8.6 and
# redis-cli on PATH. Nothing here is in the README test command: the suite is not ours to ship, and it takes minutes.
#   bench/redis-tcl-suite.sh REDIS_SRC [out-dir] [unit ...]
# scripting runs EVAL only (the suite runs every scripting test once through FUNCTION/FCALL, which kvtier has not).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
src="${1:?usage: bench/redis-tcl-suite.sh REDIS_SRC [out-dir] [unit ...]}"
out="${2:-/tmp/kvtier-tcl}"
shift $(( $# >= 2 ? 2 : 1 ))
units=("$@")
[[ ${#units[@]} -gt 0 ]] || units=(unit/type/string unit/keyspace unit/expire unit/protocol unit/info unit/scan
  unit/introspection unit/multi unit/scripting)
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"; [[ -n "${pid:-}" ]] && kill "$pid" 2>/dev/null || true' EXIT
cp -r "$src/tests" "$src/runtest" "$work/"
mkdir -p "$work/src"
for tool in redis-cli redis-benchmark redis-server; do
  if command -v "$tool" >/dev/null; then ln -s "$(command -v "$tool")" "$work/src/$tool"; fi
done
sed -i 's/^foreach is_eval {0 1} {/foreach is_eval {1} {/' "$work/tests/unit/scripting.tcl"
port=$(( 21000 + RANDOM % 5000 ))
for unit in "${units[@]}"; do
  name="${unit//\//_}"
  rm -rf "$work/data"
  "$root/kvtier" server --port "$port" --dir "$work/data" --memory 256m --disk 1g >"$out/node-$name.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.2; done
  (cd "$work" && timeout 900 ./runtest --host 127.0.0.1 --port "$port" --singledb --single "$unit" --durable \
    --verbose --timeout 120 --tags -needs:debug --tags -needs:repl --tags -needs:config-maxmemory \
    --tags -needs:save --tags -needs:other-server --tags -needs:pfdebug --tags -needs:latency --tags -needs:reset \
    --tags -needs:load --tags -needs:config-resetstat) >"$out/$name.log" 2>&1 || true
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=
done
# A failure that looks like an earlier test's leftovers (a MULTI left open, a script left running) is run again alone,
# on a fresh node: the summary counts it by that result.
: >"$out/cascades.tsv"
for unit in "${units[@]}"; do
  name="${unit//\//_}"
  while IFS= read -r test; do
    [[ -n "$test" ]] || continue
    rm -rf "$work/data"
    "$root/kvtier" server --port "$port" --dir "$work/data" --memory 256m --disk 1g >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.2; done
    alone_log="$( (cd "$work" && timeout 300 ./runtest --host 127.0.0.1 --port "$port" --singledb --single "$unit" \
        --only "$test" --timeout 120 --durable) 2>&1 | sed 's/\x1b\[[0-9;]*m//g' || true)"
    result=fail
    grep -q '^\[ok\]' <<<"$alone_log" && result=ok
    why="$(grep -A3 -E '^\[(err|exception)\]' <<<"$alone_log" | tr '\n\t' '  ' | cut -c1-400 || true)"
    printf '%s\t%s\t%s\n' "$result" "$test" "$why" >>"$out/cascades.tsv"
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=
  done < <(/usr/bin/python3 "$root/bench/redis-tcl-classify.py" --cascades "$out/$name.log")
done
CASCADE_RESULTS="$out/cascades.tsv" /usr/bin/python3 "$root/bench/redis-tcl-classify.py" "$out"/unit_*.log \
  | tee "$out/summary.txt"
