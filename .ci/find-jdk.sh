# Sourced by .ci/run and stress/run-jcstress.sh: finds the newest JDK >= 25 on this machine
# ($JAVA_HOME, /usr/lib/jvm/*, /usr/local/*jdk*, java on PATH), exports JAVA_HOME and PATH, or
# exits 1 with a message saying where it looked.
shopt -s nullglob

# Prints the feature version of the JDK in directory $1 (8, 17, 25...), or nothing if it has no java.
feature_version() {
    [[ -x "$1/bin/java" ]] || return 0
    local line
    line=$("$1/bin/java" -XshowSettings:properties -version 2>&1 | grep java.specification.version) || return 0
    line=${line##*= }
    echo "${line#1.}" # 1.8 -> 8
}

candidates=()
[[ -n "${JAVA_HOME:-}" ]] && candidates+=("$JAVA_HOME")
candidates+=(/usr/lib/jvm/* /usr/local/*jdk*)
if command -v java >/dev/null; then
    candidates+=("$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")")
fi

best="" best_version=0 seen=()
for dir in "${candidates[@]}"; do
    version=$(feature_version "$dir")
    seen+=("$dir${version:+ ($version)}")
    if [[ "$version" =~ ^[0-9]+$ ]] && (( version >= 25 && version > best_version )); then
        best=$dir best_version=$version
    fi
done

if [[ -z "$best" ]]; then
    printf -v found '%s, ' "${seen[@]}"
    echo "Weft needs a JDK 25 or newer; none found (looked in \$JAVA_HOME, /usr/lib/jvm/*, /usr/local/*jdk*" \
        "and java on PATH: ${found%, })" >&2
    exit 1
fi

export JAVA_HOME=$best
export PATH="$JAVA_HOME/bin:$PATH"
echo "Using JDK $best_version at $JAVA_HOME"
