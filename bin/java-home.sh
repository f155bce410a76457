# Sourced by ./kvtier and .ci/run: exports JAVA_HOME pointing at a JDK 25 or newer, or fails with a clear message.
kvtier_java_major() { "$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = \([0-9]*\).*/\1/p'; }
kvtier_find_java() {
  local candidate
  for candidate in "${JAVA_HOME:-}" /usr/lib/jvm/temurin-25* /usr/lib/jvm/*-25* /usr/lib/jvm/*25* /usr/lib/jvm/* \
                   "$(dirname "$(dirname "$(readlink -f "$(command -v java 2>/dev/null || echo /nonexistent)")")")"; do
    [ -n "$candidate" ] && [ -x "$candidate/bin/java" ] && [ -x "$candidate/bin/javac" ] || continue
    local major; major=$(kvtier_java_major "$candidate")
    if [ -n "$major" ] && [ "$major" -ge 25 ]; then export JAVA_HOME="$candidate"; return 0; fi
  done
  echo "kvtier: no JDK 25 or newer found (looked at \$JAVA_HOME, /usr/lib/jvm/* and the java on PATH)." >&2
  echo "kvtier: install one (e.g. Temurin 25) and set JAVA_HOME to it." >&2
  return 1
}
