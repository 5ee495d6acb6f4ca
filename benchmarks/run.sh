#!/usr/bin/env bash
# Builds Weft's JMH benchmarks and runs them, every peer side by side in one run.
#
#   benchmarks/run.sh [quick|full|smoke] [extra JMH arguments...]
#
#   quick  (default) 3 forks, 2 × 1 s warm-up, 3 × 1 s measurement, -prof gc: 96 trials x 3 forks,
#          about 33 minutes on 2 cores (Memory, in SingleShotTime mode, runs 2 + 3 single
#          park/measure/release cycles per fork instead). Writes benchmarks/target/results.json and
#          BENCHMARKS.md at the repository root; rows whose error exceeds 25% are flagged inconclusive.
#          The report also gives the cache-line round trip between the cores before and after the
#          run (CoreToCore), which tells a run on a slow placement of the VM's cores from a regression,
#          and, for the task workloads, which read it before and after each iteration (CoreState), the
#          summary again over the iterations of each placement.
#   full   3 forks, 5 × 2 s warm-up, 5 × 2 s measurement, -prof gc: about 75 minutes on 2 cores; for
#          careful runs on a quiet machine. Writes the same files.
#   smoke  every benchmark for one tiny iteration (1 fork, no warm-up, 1 × 100 ms), so they cannot
#          rot; fails on any benchmark error; writes benchmarks/target/smoke.json, no report.
#
# Extra arguments go to JMH, e.g. a benchmark filter (`TokioSuite.pingPong`), `-p peer=fiber,vthread`
# or a profiler (`-prof gc`, `-prof stack`). MVN_OPTS adds Maven flags (e.g. MVN_OPTS=-o offline).
set -euo pipefail

mode=${1:-quick}
[[ $# -gt 0 ]] && shift
# A fixed, pre-touched heap for every fork of every peer: without it the first touch of each new
# heap page lands in the allocating code (page faults were ~5% of spawn_many_local's samples) and
# the heap's growth differs fork to fork, which widened the error bars of every allocating workload.
heap=(-jvmArgsPrepend "-Xms2g -Xmx2g -XX:+AlwaysPreTouch")
case "$mode" in
    quick) jmh=(-f 3 -wi 2 -w 1s -i 3 -r 1s -prof gc "${heap[@]}") ;;
    full)  jmh=(-f 3 -wi 5 -w 2s -i 5 -r 2s -prof gc "${heap[@]}") ;;
    smoke) jmh=(-f 1 -wi 0 -i 1 -r 100ms) ;;
    *) echo "usage: benchmarks/run.sh [quick|full|smoke] [extra JMH arguments...]" >&2; exit 2 ;;
esac

cd "$(dirname "$0")/.."
source .ci/find-jdk.sh

# Build the benchmarks and what they use in one reactor (tests skipped: this is not the test
# command) into benchmarks/target/benchmarks.jar.
mvn=(mvn -B -q ${MVN_OPTS:-})
"${mvn[@]}" -pl benchmarks -am package -DskipTests

jar=benchmarks/target/benchmarks.jar
if [[ $mode == smoke ]]; then
    results=benchmarks/target/smoke.json
else
    results=benchmarks/target/results.json
fi
# -foe: a benchmark that throws (a failed correctness check included) fails the whole run.
cmd=(java -jar "$jar" "${jmh[@]}" -foe true -rf json -rff "$results" "$@")
# The cache-line round trip between the two cores, before and after the run: the host moves the
# VM's cores, and iterations that run while it is slow run slower (CoreToCore's Javadoc).
# A failed probe must not cost the run (nor, after it, the report): it reads "unavailable".
core_to_core() {
    local readings
    readings=$(java -cp "$jar" io.weft.benchmarks.CoreToCore 3) || { echo unavailable; return 0; }
    awk '{ printf "%s%s", sep, $4; sep = ", " } END { print " ns" }' <<< "$readings"
}
[[ $mode == smoke ]] || c2c_before=$(core_to_core)
echo "Running: ${cmd[*]}"
start=$(date +%s)
if [[ $mode == smoke ]]; then
    # A benchmark that hangs must fail the smoke run, not stall it forever.
    timeout --foreground 30m "${cmd[@]}"
else
    "${cmd[@]}"
fi
echo "JMH finished in $(( $(date +%s) - start )) s"

if [[ $mode != smoke ]]; then
    command="benchmarks/run.sh $mode${*:+ $*}  (JMH: ${cmd[*]})"
    c2c="before the run ${c2c_before}; after it $(core_to_core)"
    java -cp "$jar" io.weft.benchmarks.Report "$results" BENCHMARKS.md "$command" "$c2c"
fi
