"""Sorts the results of Redis's Tcl suite run against kvtier (bench/redis-tcl-suite.sh): passed, left out by the
suite's tags, not applicable (what kvtier does not have, or does otherwise by design: README "Redis compatibility"),
and failures that apply, each listed with its message."""
import collections
import re
import sys

# A failure whose message says one of these is about something kvtier does not have or does otherwise on purpose.
NOT_APPLICABLE = [
    (re.compile(r"unknown command '([^']+)'"), "command not in kvtier: {}"),
    (re.compile(r"Unknown Redis command called from script"), "command not in kvtier (from a script)"),
    (re.compile(r"unknown subcommand '([^']+)'"), "subcommand not in kvtier: {}"),
    (re.compile(r"has no Redis functions"), "FUNCTION LOAD/FCALL"),
    (re.compile(r"which is not in KEYS"), "a script's undeclared keys (kvtier runs scripts on the keys they declare)"),
    (re.compile(r"nonexistent global variable '(cjson|cmsgpack|bit|struct|loadstring)'"), "Lua library not there: {}"),
    (re.compile(r"Unknown option or number of arguments for CONFIG SET - '([^']+)'"), "parameter not in kvtier: {}"),
    (re.compile(r"can't set immutable config"), "parameter fixed at start-up"),
]


# Tests whose failure is kvtier's design, by name (README "Redis's test suite" says why for each).
BY_DESIGN = [
    (re.compile(r"script timeout|^Timedout "), "a busy script holds only its keys: PING and other keys answer"),
    (re.compile(r"^CONFIG GET hidden configs$"), "Redis's own test-only parameters"),
    (re.compile(r"^CONFIG GET multiple args$"), "needs maxmemory-samples (Redis's eviction sampling; kvtier has none)"),
]
# What a failure looks like when an earlier test (not applicable, or by design) left its connection in MULTI or a
# script running: the test is run again alone on a fresh node (CASCADE_RESULTS) and counted by that result.
CASCADE = re.compile(r"calls can not be nested|WATCH inside MULTI is not allowed|BUSY Redis is busy running a script")


def test_name(line):
    m = re.match(r"\[(?:err|exception)\]: (.*) in tests/\S+\.tcl", line)
    return m.group(1) if m else line


def alone(name):
    """The result of {name} run alone on a fresh node (bench/redis-tcl-suite.sh), or None if it was not."""
    import os
    path = os.environ.get("CASCADE_RESULTS")
    if not path or not os.path.exists(path):
        return None
    for row in open(path):
        result, test, why = (row.rstrip("\n").split("\t") + ["", ""])[:3]
        if test == name:
            return result, why
    return None


def classify(path):
    text = re.sub(r"\x1b\[[0-9;]*m", "", open(path, errors="replace").read())
    lines = text.split("\n")
    passed = sum(1 for l in lines if l.startswith("[ok]"))
    tagged = sum(1 for l in lines if l.startswith("[ignore]") or l.startswith("[skip]"))
    not_applicable = collections.Counter()
    applicable = []
    seen = set()
    for i, line in enumerate(lines):
        if not (line.startswith("[err]") or line.startswith("[exception]")):
            continue
        if line in seen:  # --durable prints a failure twice
            continue
        seen.add(line)
        context = " ".join(lines[i:i + 4])
        name = test_name(line)
        design = next((label for pattern, label in BY_DESIGN if pattern.search(name)), None)
        if design:
            not_applicable["by design: " + design] += 1
            continue
        if CASCADE.search(context):
            result = alone(name)
            if result and result[0] == "ok":
                not_applicable["passes run alone (an earlier test left MULTI open or a script running)"] += 1
                continue
            if mode == "list":
                print(name)
                continue
            if result:  # judged by how it failed alone
                context = result[1]
                line = line + " (run alone)"
        for pattern, label in NOT_APPLICABLE:
            m = pattern.search(context)
            if m:
                not_applicable[label.format(*m.groups())] += 1
                break
        else:
            applicable.append((line, lines[i + 1] if i + 1 < len(lines) else ""))
    if mode == "list":
        return
    timed_out = "[TIMEOUT]" in text
    name = path.rsplit("/", 1)[-1].removesuffix(".log")
    print(f"{name}: {passed} passed, {tagged} left out by tags, {sum(not_applicable.values())} not applicable, "
          f"{len(applicable)} applicable failures{' (the unit timed out)' if timed_out else ''}")
    for label, n in sorted(not_applicable.items()):
        print(f"    n/a {n:3d}  {label}")
    for line, detail in applicable:
        print(f"    FAIL {line}\n         {detail[:220]}")


mode = "summary"
args = sys.argv[1:]
if args and args[0] == "--cascades":  # only the names of failures that look like another test's leftovers
    mode = "list"
    args = args[1:]
for p in args:
    classify(p)
