#!/usr/bin/env bash
# Coverage-guided fuzzing campaign (Jazzer + libFuzzer) over the parsers of untrusted bytes; docs/hardening.md,
# "Fuzzing", has the figures of the last campaign.
#   bench/fuzz.sh [target ...]        targets: request limits reply inline stamp (default: all, one after another)
# Environment: RUNS (inputs per target, default 10000000), MAX_LEN (longest input, default 1024), MAVEN_ARGS (e.g. -o).
#
# Each target starts from its committed corpus (src/test/resources/.../<Test>Inputs/<method>/), which `./kvtier test`
# replays in every build, and fuzzes with Jazzer's agent instrumenting io.kvtier.** for coverage (Jazzer 0.30.0 reads
# Java 25 class files). Then libFuzzer's -merge=1 adds to that directory the smallest of the new inputs that reach
# coverage it lacks (review and commit them), and the committed corpus is replayed once for a JaCoCo line and branch
# coverage report (bench-out/fuzz/<target>.coverage.txt), whose figures for the target's own classes are printed.
# A finding stops the target: its input is written to bench-out/fuzz/<target>/ (crash-*, timeout-*, slow-unit-*) and
# the log names it; fix the code, add a regression test, then copy the input into the corpus directory. One target
# at a time, one process: the machine is shared.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/bin/java-home.sh"
kvtier_find_java
runs="${RUNS:-10000000}"
max_len="${MAX_LEN:-1024}"
out="$root/bench-out/fuzz"
mkdir -p "$out"

# target name -> module, test class, method
declare -A module=([request]=kvtier-resp [limits]=kvtier-resp [reply]=kvtier-resp [inline]=kvtier-resp [stamp]=kvtier-server)
declare -A class=([request]=io.kvtier.resp.RespDecoderFuzzTest [limits]=io.kvtier.resp.RespDecoderFuzzTest
                  [reply]=io.kvtier.resp.RespReplyDecoderFuzzTest
                  [inline]=io.kvtier.resp.InlineSplitterFuzzTest [stamp]=io.kvtier.server.command.PeerStampFuzzTest)
# target name -> the main-code files it is about, whose coverage the summary shows
declare -A covers=([request]='RespDecoder LineScanner RequestBudget InlineSplitter RedisLong'
                   [limits]='RespDecoder RequestBudget'
                   [reply]='RespReplyDecoder RedisLong' [inline]='InlineSplitter' [stamp]='PeerStamp Args')
declare -A method=([request]=decoderNeverThrowsAnythingButRespException
                   [limits]=decoderWithinRequestMemoryLimitsNeverThrowsAnythingButRespException
                   [reply]=replyDecoderNeverThrowsAnythingButRespReplyException
                   [inline]=splitsLikeSdssplitargsAndRoundTrips
                   [stamp]=parsesStampsExactlyAndNeverOverflowsTheDeadline)
# target name -> another target whose corpus it starts from as well (same input format, plus a trailer)
declare -A seeds=([limits]=request)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(request limits reply inline stamp)
for t in "${targets[@]}"; do
  [ -n "${module[$t]:-}" ] || { echo "fuzz: unknown target '$t' (request limits reply inline stamp)" >&2; exit 2; }
done

cd "$root"
echo "fuzz: compiling kvtier-resp and kvtier-server with their tests ..." >&2
./mvnw -B -q ${MAVEN_ARGS:-} -pl kvtier-resp,kvtier-server -am test-compile dependency:build-classpath \
  -Dmdep.includeScope=test -Dmdep.outputFile=target/fuzz-classpath.txt

for t in "${targets[@]}"; do
  m="${module[$t]}"; c="${class[$t]}"
  corpus="$root/$m/src/test/resources/$(dirname "${c//.//}")/${c##*.}Inputs/${method[$t]}"
  work="$out/$t"; rm -rf "$work"; mkdir -p "$work/corpus" "$corpus"
  cp "$corpus"/. "$work/corpus/" -r
  if [ -n "${seeds[$t]:-}" ]; then
    s="${seeds[$t]}"; sc="${class[$s]}"
    cp "$root/${module[$s]}/src/test/resources/$(dirname "${sc//.//}")/${sc##*.}Inputs/${method[$s]}"/. "$work/corpus/" -r
  fi
  cp_="$(cat "$m/target/fuzz-classpath.txt"):$root/$m/target/test-classes:$root/$m/target/classes"
  jazzer=("$JAVA_HOME/bin/java" -Xmx2g -XX:+EnableDynamicAgentLoading -Xshare:off
          --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow
          -cp "$cp_" com.code_intelligence.jazzer.Jazzer --target_class="$c" --target_method="${method[$t]}"
          --instrumentation_includes='io.kvtier.**' --reproducer_path="$work")
  echo "fuzz: $t: $runs inputs of at most $max_len bytes from $(ls "$work/corpus" | wc -l) corpus files; log $work.log" >&2
  start=$(date +%s)
  # --max_executions and --max_duration, not libFuzzer's -runs: Jazzer appends its own -runs and -max_total_time (the
  # @FuzzTest's maxDuration, 5 minutes) after ours, and the last one counts.
  (cd "$work" && "${jazzer[@]}" --max_executions="$runs" --max_duration=24h -max_len="$max_len" -timeout=10 \
     -artifact_prefix="$work/" -print_final_stats=1 "$work/corpus") >"$work.log" 2>&1 \
    || { echo "fuzz: $t FAILED after $(( $(date +%s) - start )) s; see $work.log and $work/" >&2; exit 1; }
  secs=$(( $(date +%s) - start ))
  # Minimize: of the inputs found, add to the committed corpus only the smallest that reach coverage it lacks.
  (cd "$work" && "${jazzer[@]}" -merge=1 -max_len="$max_len" "$corpus" "$work/corpus") >"$work.merge.log" 2>&1
  # Line and branch coverage (JaCoCo, through Jazzer) of the committed corpus, replayed once.
  (cd "$work" && "${jazzer[@]}" --coverage_report="$work.coverage.txt" -runs=0 "$corpus") >"$work.cov.log" 2>&1
  for f in ${covers[$t]}; do
    echo "fuzz: $t: $f.java: branches $(sed -n '/^Branch coverage:/,/^$/p' "$work.coverage.txt" \
      | sed -n "s/^$f.java: //p"), lines $(sed -n '/^Line coverage:/,/^$/p' "$work.coverage.txt" \
      | sed -n "s/^$f.java: //p")" >&2
  done
  done_line="$(grep -a '^#[0-9]*[[:space:]]*DONE' "$work.log" | tail -1)"
  eps="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work.log")"
  echo "fuzz: $t: $secs s, $eps exec/s; $done_line; committed corpus $(ls "$corpus" | wc -l) files," \
       "$(cat "$corpus"/* | wc -c) bytes" >&2
done
