#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# What a newcomer who knows git tries, and the one line each mistake gets:
# exit code, the message (what is wrong, what to do), and nothing written.
# log --op with an unknown operation; log -n 0 (nothing, as git); clone and
# pull of a git repository that is no store (saying so, not a line per file); a
# path remote that does not exist; a Liger CSV whose header lacks a column; a
# REF in capitals; a push to `git init --bare` that git clone then checks out.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib/servers.sh
. "$here/lib/servers.sh"
servers_init
# shellcheck source=lib/common.sh
. "$here/lib/common.sh"
# shellcheck source=lib/fingerprint.sh
. "$here/lib/fingerprint.sh"
W=$SERVERS_DIR/newcomer
mkdir -p "$W" && cd "$W"
S=$W/store
assert_exit 0 ks init "$S"
assert_exit 0 ks --store "$S" add "$FX"
FP=$(store_fingerprint "$S")

# ---- log ---------------------------------------------------------------------------
assert_exit 2 ks --store "$S" log --op bogus
assert_contains "$ERR" '--op: expected one of add, import, attest, rerun, merge, upgrade, compact; found "bogus"' "log --op bogus"
assert_eq "" "$OUT" "log --op bogus prints no history"
assert_exit 0 ks --store "$S" log -n 0
assert_eq "" "$OUT" "log -n 0 prints nothing, as git log -n 0"
assert_exit 0 ks --store "$S" log -n 1
assert_contains "$OUT" "Op:     add" "log -n 1 prints the one commit"
assert_exit 2 ks --store "$S" log -n -3
assert_contains "$ERR" "-n: expected a number from 0" "log -n -3"
assert_store_unchanged "$FP" "$S" "log"
pass "log --op bogus and log -n -3: exit 2 saying what is expected; log -n 0 prints nothing"

# ---- a REF typed in capitals, or too short -----------------------------------------
assert_exit 0 ks --store "$S" show 334face3
want=$OUT
for ref in 334FACE3 sha256:334FaCe30A; do
    assert_exit 0 ks --store "$S" show "$ref"
    assert_eq "$want" "$OUT" "show $ref: the run 334face3 names"
    assert_exit 0 ks --store "$S" rank "$ref"
done
assert_exit 2 ks --store "$S" show 334face
assert_contains "$ERR" "at least 8 hex digits" "show 334face: says how many digits"
assert_store_unchanged "$FP" "$S" "show and rank"
pass "show and rank take a prefix typed in capitals; 7 digits is exit 2 saying 8 are needed"

# ---- a git repository that is no store ----------------------------------------------
ugit() { git -c user.name=u -c user.email=u@example.org -c init.defaultBranch=main "$@"; }
ugit init -q "$W/project"
mkdir -p "$W/project/src" "$W/project/docs"
for i in $(seq 1 60); do echo "$i" >"$W/project/src/f$i.c"; done
chmod +x "$W/project/src/f1.c"
echo hi >"$W/project/README.md" && echo guide >"$W/project/docs/guide.md"
ugit -C "$W/project" add . && ugit -C "$W/project" commit -q -m "my project"
assert_exit 1 ks clone "$W/project" "$W/cloned"
(($(grep -c '^refused' <<<"$ERR") <= 3)) || fail "clone of a project: more than what it is and two examples"
assert_contains "$(grep -m1 '^refused' <<<"$ERR")" \
    "not a kistore store: the remote's main holds README.md, docs/, src/ and nothing of kistore's" \
    "clone of a project: says first what it is"
[[ ! -e $W/cloned ]] || fail "a refused clone left $W/cloned"
assert_exit 1 ks --store "$S" pull "$W/project"
assert_contains "$(grep -m1 '^refused' <<<"$ERR")" "not a kistore store" "pull of a project: says first what it is"
(($(grep -c '^refused' <<<"$ERR") <= 3)) || fail "pull of a project: more than three refused lines"
assert_store_unchanged "$FP" "$S" "pull of a project"
pass "clone and pull of a git repository that is no store: exit 1, saying so first, two examples, nothing written"

# ---- a path remote that is not there ------------------------------------------------
for cmd in "pull $W/no-such.git" "push $W/no-such.git" "pull ./typo"; do
    # shellcheck disable=SC2086
    assert_exit 4 ks --store "$S" $cmd
    assert_contains "$ERR" "no such folder" "$cmd"
    assert_contains "$ERR" "git init --bare" "$cmd: says what a path remote is"
    assert_not_contains "$ERR" "unsupported URL protocol" "$cmd"
done
[[ ! -e $W/no-such.git ]] || fail "push made $W/no-such.git"
assert_store_unchanged "$FP" "$S" "a missing path remote"
pass "pull and push of a path that does not exist: exit 4, 'no such folder', nothing written"

# ---- plain git sees a normal repository ---------------------------------------------
# A bare repository as `git init --bare` makes it names refs/heads/master in
# HEAD; after the first push it names main, so that a stock clone checks the
# store out. Writing into that clone keeps its index and work tree in step.
git -c init.defaultBranch=master init -q --bare "$W/served.git"
assert_exit 0 ks --store "$S" push "$W/served.git"
assert_eq "refs/heads/main" "$(git --git-dir="$W/served.git" symbolic-ref HEAD)" "HEAD of the pushed-to repository"
git clone -q "$W/served.git" "$W/checkout"
[[ -f $W/checkout/FORMAT ]] || fail "a stock git clone of the pushed store checked out nothing"
assert_eq "" "$(git -C "$W/checkout" status --porcelain)" "git status of a fresh clone"
mkruns --start 7 --count 1 >one.jsonl
assert_exit 0 ks --store "$W/checkout" add one.jsonl
assert_eq "" "$(git -C "$W/checkout" status --porcelain)" "git status after kistore add in the clone"
assert_exit 0 ks --store "$W/checkout" verify
pass "push to a git init --bare repository points its HEAD at main: git clone checks out the store, git status stays clean after an add"
FP=$(store_fingerprint "$S")  # the push recorded what it synced

# ---- a CSV whose header lacks a column ----------------------------------------------
HEADER=kernel_name,kernel_provider,kernel_operation_mode,metric_name,metric_unit,x_name,x_label,x_value,y_value_50,y_value_20,y_value_80,extra_benchmark_config_str,gpu_name,timestamp,liger_version
{ echo "${HEADER/,gpu_name/}"; echo 'cross_entropy,liger,forward,speed,ms,V,vocab size,4096,0.53,0.52,0.54,"{}",2024-09-03 15:31:39,0.2.1'; } >short.csv
assert_exit 2 ks --store "$S" import liger short.csv
assert_contains "$ERR" "short.csv:1: the header lacks column gpu_name" "CSV without gpu_name"
assert_store_unchanged "$FP" "$S" "import of a CSV without gpu_name"
pass "import of a CSV whose header lacks gpu_name: exit 2 naming the column, nothing written"

summary
