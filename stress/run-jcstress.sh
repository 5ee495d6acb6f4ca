#!/usr/bin/env bash
# Builds Weft's jcstress tests and runs them: stress/run-jcstress.sh [jcstress options...]
# Defaults to the RunQueue tests in quick mode (-t RunQueue -m quick); other arguments are passed to
# jcstress as they are, and a -t or -m among them replaces that default (e.g. -m default, -v).
# Finds a JDK 25 or newer the same way .ci/run does.
set -euo pipefail
shopt -s nullglob

source "$(dirname "${BASH_SOURCE[0]}")/../.ci/find-jdk.sh"

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# The stress module is not in the root <modules>: install what it depends on, then package it.
mvn -B -q install -DskipTests
mvn -B -q -f stress/pom.xml package

# jopt-simple refuses an option given twice, so a default applies only when not given.
defaults=()
[[ " $* " == *" -t "* ]] || defaults+=(-t RunQueue)
[[ " $* " == *" -m "* ]] || defaults+=(-m quick)

# jcstress writes its reports (results/, jcstress-results-*.bin.gz) into the working directory.
mkdir -p stress/target/jcstress-run
cd stress/target/jcstress-run
# JNA (CPU affinity) loads a native library: allow it rather than print a warning.
exec "$JAVA_HOME/bin/java" --add-opens java.base/java.lang=ALL-UNNAMED --enable-native-access=ALL-UNNAMED \
    -jar ../jcstress.jar "${defaults[@]}" "$@"
