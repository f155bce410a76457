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
        for pattern, label in NOT_APPLICABLE:
            m = pattern.search(context)
            if m:
                not_applicable[label.format(*m.groups())] += 1
                break
        else:
            applicable.append((line, lines[i + 1] if i + 1 < len(lines) else ""))
    timed_out = "[TIMEOUT]" in text
    name = path.rsplit("/", 1)[-1].removesuffix(".log")
    print(f"{name}: {passed} passed, {tagged} left out by tags, {sum(not_applicable.values())} not applicable, "
          f"{len(applicable)} applicable failures{' (the unit timed out)' if timed_out else ''}")
    for label, n in sorted(not_applicable.items()):
        print(f"    n/a {n:3d}  {label}")
    for line, detail in applicable:
        print(f"    FAIL {line}\n         {detail[:220]}")


for p in sys.argv[1:]:
    classify(p)
