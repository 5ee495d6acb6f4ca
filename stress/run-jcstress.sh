#!/usr/bin/env bash
# Builds Weft's jcstress tests and runs them: stress/run-jcstress.sh [jcstress options...]
# With no arguments: the RunQueue, Channel, IdleWorkers, Parker, RunnerAssignVsEnd, TaskCancelVs*, TaskGiveUpVs* and TaskOnDoneVs* tests (not the *Mutant* ones) in quick
# mode, the lost-wake-up ones without CPU pinning (see below). With arguments: one jcstress call with
# them, plus -t/-m defaults where not given (e.g. "-t Mutant -af NONE" runs the deliberately broken
# copies that show the lost-wake-up tests can fail).
# Finds a JDK 25 or newer the same way .ci/run does.
set -euo pipefail
shopt -s nullglob

source "$(dirname "${BASH_SOURCE[0]}")/../.ci/find-jdk.sh"

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# The stress module is not in the root <modules>: install what it depends on, then package it.
mvn -B -q install -DskipTests
mvn -B -q -f stress/pom.xml package

# jcstress writes its reports (results/, jcstress-results-*.bin.gz) into the working directory.
mkdir -p stress/target/jcstress-run
cd stress/target/jcstress-run
# JNA (CPU affinity) loads a native library: allow it rather than print a warning.
jcstress() {
    "$JAVA_HOME/bin/java" --add-opens java.base/java.lang=ALL-UNNAMED --enable-native-access=ALL-UNNAMED \
        -jar ../jcstress.jar "$@"
}

if [[ $# -gt 0 ]]; then
    # jopt-simple refuses an option given twice, so a default applies only when not given.
    defaults=()
    [[ " $* " == *" -t "* ]] || defaults+=(-t '^(?!.*Mutant).*(RunQueue|RunnerAssignVsEnd|IdleWorkers|Parker|Channel|Task)')
    [[ " $* " == *" -m "* ]] || defaults+=(-m quick)
    jcstress "${defaults[@]}" "$@"
    exit
fi

# The default run, in two calls. The RunQueue and Channel tests (two actors) keep jcstress's CPU
# pinning (the Channel wake-up flag tests are the Dekker shape, whose actors must race). The
# lost-wake-up tests are Termination tests with ONE actor, which jcstress pins to a single CPU:
# there the signal only runs while the actor is descheduled and never races it (their deliberately
# broken *Mutant copies then pass too). -af NONE lets actor and signal run on both cores.
jcstress -t '^(?!.*Mutant).*(RunQueue|Channel|TaskCancelVsComplete|TaskCancelVsShield|TaskCancelVsTaskAbove|TaskCancelVsHelpStart|TaskGiveUpVsHelpClaim|TaskOnDoneVsComplete|RunnerAssignVsEnd)' -m quick
jcstress -t '^(?!.*Mutant).*(IdleWorkers|Parker|TaskCancelVsPark)' -m quick -af NONE
