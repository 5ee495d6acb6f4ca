#!/usr/bin/env bash
# Runs io.weft.benchmarks.OutOfMemoryProbe (a FiberIo program that fills a 64 MB heap; see its
# comment) RUNS times in each mode and counts the runs that end: stress/run-oom-probe.sh [RUNS]
# (default 10). A run not ended after 40 s is killed and counted as hung; its output stays in
# benchmarks/target/oom-probe/. Exits non-zero if any run hung or failed. Not part of the default
# test command: a run takes seconds, and what it shows is written in ARCHITECTURE.md ("Out of
# memory"). Finds a JDK 25 or newer the same way .ci/run does.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../.ci/find-jdk.sh"

cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs=${1:-10}
mvn -B -q -pl fiber-io,benchmarks -am package -DskipTests
jar=benchmarks/target/benchmarks.jar
out=benchmarks/target/oom-probe
mkdir -p "$out"
bad=0
for mode in task root; do
    ended=0
    for ((i = 1; i <= runs; i++)); do
        log="$out/$mode-$i.txt"
        timeout -s KILL 40 "$JAVA_HOME/bin/java" -Xmx64m --add-opens java.base/java.lang=ALL-UNNAMED \
            -cp "$jar" io.weft.benchmarks.OutOfMemoryProbe "$mode" >"$log" 2>&1 || true
        if grep -qx END "$log"; then
            ended=$((ended + 1))
        fi
    done
    echo "OutOfMemoryProbe $mode: $ended of $runs runs ended"
    if ((ended < runs)); then
        bad=1
    fi
done
exit $bad
