#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# The demo is a guided tour (issue 14): scripts/demo.sh with the binary under
# test (KISTORE: nothing installed or built) on the published Liger corpus.
# Every command it runs is preceded by its sentence; every note or warning it
# prints is named in the sentence of its step; it ends well. scripts/deps.sh
# installs for the demo only what building and running kistore needs, the test
# servers only for the tests, and sends apt-get's output to a log file with one
# line saying so (checked with stand-ins for dpkg-query and apt-get). The
# README's tour lists the demo's commands.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
shared="$SRC/../shared"
[[ -f $shared/data/liger/all_benchmark_data.csv && -f $shared/fixtures/seed-run-tiled-geglu-backward.json ]] ||
    fail "the Liger corpus and fixture are not in $shared"

# ---- the tour ----------------------------------------------------------------------
# stdout and stderr as one stream, in the order a terminal shows them.
assert_exit 0 sh -c 'exec "$@" 2>&1' demo env KISTORE="$KISTORE" KISTORE_SHARED="$shared" bash "$SRC/scripts/demo.sh"
tour=$(sed 's/\x1b\[[0-9;]*m//g' <<<"$OUT")
report=$(awk '
    /^\$ / { steps++; if (prev !~ /[.:]$/ || prev ~ /^\$ /) print "a command without its sentence: " $0; said = prev; next }
    /^(warning|note|hint): / { kind = $1; sub(":", "", kind); if (said !~ kind) print "a " kind " its step does not explain: " substr($0, 1, 120) }
    { prev = $0 }
    END { print steps " steps" }' <<<"$tour")
assert_eq "15 steps" "$report" "every command has its sentence first; every note and warning is explained in its step"
assert_contains "$tour" "ok: 4278 objects, 0 problems, 3 warnings" "the tour's verify: sound, three warnings"
assert_contains "$tour" "verify re-hashes every object and recomputes the index, offline; its three warnings" "the verify step says there are three"
assert_contains "$tour" "is now reproduced: rerun sha256:" "the signed rerun reproduces the run"
assert_contains "$tour" 'Good "git" signature for controller@example.org' "stock git verifies the rerun commit"
assert_eq 1 "$(grep -c '^note: ' <<<"$tour")" "one note on the whole tour (the fixture's source id)"
assert_not_contains "$tour" "error:" "the tour"
# The README's tour is the demo's: the same commands in the same order (its
# paths from the repository, ../shared, are the demo's shared/).
normalise() {
    sed -E -e 's#\.\./shared/#shared/#g' -e 's#allowedSignersFile=(\$\([^)]*\)|[^ ]*)#allowedSignersFile=F#' \
        -e 's#shared/data/liger/[^ ]*\.csv( shared/data/liger/[^ ]*\.csv)*#shared/data/liger/*.csv#' \
        -e 's/ +#.*$//' -e 's/ +$//'
}
readme_tour=$(awk '/^## A five-minute tour/ { t = 1 } t && /^```sh/ { c = 1; next } c && /^```/ { exit }
    c && /^(kistore|git) / { print }' "$SRC/README.md" | normalise)
demo_tour=$(sed -n 's/^\$ //p' <<<"$tour" | normalise)
assert_eq "$demo_tour" "$readme_tour" "the README's tour and the demo's steps"
pass "the demo: 15 steps, each with its sentence before the command; its one note and three warnings explained; verify sound"

# ---- deps.sh: what the demo installs, what the tests add, where apt's output goes --
fake=$SERVERS_DIR/fake-bin
mkdir -p "$fake"
# Every package is missing; apt-get prints a lot and records what it was asked.
printf '#!/bin/sh\nexit 1\n' >"$fake/dpkg-query"
cat >"$fake/apt-get" <<EOF2
#!/bin/sh
i=0; while [ \$i -lt 670 ]; do echo "Get:\$i http://deb.debian.org/debian bookworm/main some-package"; i=\$((i + 1)); done
echo "\$*" >>"$SERVERS_DIR/apt-asked"
EOF2
printf '#!/bin/sh\nexec "$@"\n' >"$fake/sudo"
chmod +x "$fake"/*
for what in demo test; do
    : >"$SERVERS_DIR/apt-asked"
    assert_exit 0 env PATH="$fake:$PATH" KISTORE_APT_LOG="$SERVERS_DIR/apt-$what.log" bash "$SRC/scripts/deps.sh" "$what"
    assert_eq "" "$OUT" "deps.sh $what: nothing on stdout"
    assert_eq 1 "$(wc -l <<<"$ERR")" "deps.sh $what: one line on stderr"
    assert_contains "$ERR" "; apt-get's output goes to $SERVERS_DIR/apt-$what.log" "deps.sh $what: says where apt's output went"
    assert_eq 1340 "$(grep -c '^Get:' "$SERVERS_DIR/apt-$what.log")" "deps.sh $what: apt's output is in the log"
    declare "asked_$what=$(grep '^install' "$SERVERS_DIR/apt-asked")"
done
for server in openssh-server nginx-light fcgiwrap clang jq; do
    [[ " $asked_demo " != *" $server "* ]] || fail "deps.sh demo installs $server, which only the tests need"
    [[ " $asked_test " == *" $server "* ]] || fail "deps.sh test does not install $server"
done
for needed in build-essential cmake libgit2-dev catch2 openssh-client python3; do
    [[ " $asked_demo " == *" $needed "* ]] || fail "deps.sh demo does not install $needed"
done
printf '#!/bin/sh\necho "E: Unable to locate package libgit2-dev" >&2\nexit 100\n' >"$fake/apt-get"
assert_exit 1 env PATH="$fake:$PATH" KISTORE_APT_LOG="$SERVERS_DIR/apt-fail.log" bash "$SRC/scripts/deps.sh" demo
assert_contains "$ERR" "apt-get failed; the end of $SERVERS_DIR/apt-fail.log:" "a failed install says so"
assert_contains "$ERR" "E: Unable to locate package libgit2-dev" "a failed install shows apt's last lines"
assert_exit 2 bash "$SRC/scripts/deps.sh" everything
assert_eq "usage: deps.sh demo|test" "$ERR" "deps.sh with an unknown set"
pass "deps.sh: the demo's set lacks the test servers, test's has them; apt's output goes to a log named in one line, shown when apt fails"

# ---- README: the table for git users and the exit codes, each example true ----------
readme=$(cat "$SRC/README.md")
git_table=$(awk '/^## For git users/ { t = 1; next } t && /^## / { exit } t && /^\| `git/' <<<"$readme")
assert_eq 12 "$(wc -l <<<"$git_table")" "the table for git users: twelve rows"
for cmd in $(grep -o '`kistore [a-z]*' <<<"$git_table" | cut -d' ' -f2 | sort -u); do
    assert_exit 0 ks help "$cmd"
done
codes=$(awk '/^## Exit codes/ { t = 1; next } t && /^## / { exit } t && /^\| [0-4] \|/ { print $2 }' <<<"$readme")
assert_eq "0 1 2 3 4" "$(tr '\n' ' ' <<<"$codes" | sed 's/ $//')" "the exit codes table: 0 to 4, one row each"
cd "$SERVERS_DIR"
assert_exit 0 ks init readme-store
export KISTORE_DIR=$SERVERS_DIR/readme-store
example() { # CODE MESSAGE COMMAND... : the README shows MESSAGE for COMMAND, which exits CODE with it
    local code=$1 message=$2
    shift 2
    assert_contains "$readme" "\`kistore $*\` → \`$message" "README: the example of exit code $code"
    assert_exit "$code" ks "$@"
    assert_contains "$ERR" "$message" "kistore $*: what README says"
}
example 1 'error: REF "deadbeef": no object in the store matches' show deadbeef
example 2 'error: nope.json: no such file or folder' add nope.json
example 2 'error: unknown command "pusj"; did you mean "push"?' pusj
assert_contains "$readme" '`kistore push git://127.0.0.1:1/evidence.git` → `error: cannot connect to remote' "README: the example of exit code 4"
port=$(free_port)
assert_exit 0 ks add "$FX"
# libgit2 1.5 leaks a remote when a push cannot connect (tests/sanitizers/lsan.supp names it by
# git_remote_connect_ext): under the sanitizers, whole stacks let the suppression see it.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0" \
    assert_exit 4 ks push "git://127.0.0.1:$port/evidence.git"
assert_contains "$ERR" "error: cannot connect to remote git://127.0.0.1:$port/evidence.git" "push to a port where nothing listens"
assert_contains "$ERR" "Connection refused" "push to a port where nothing listens: why"
unset KISTORE_DIR
pass "README: a row per git habit, each kistore command there; exit codes 0-4 each with an example that holds"

summary
