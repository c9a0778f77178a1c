#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# Clones kistore cannot read whole say so: a shallow clone (`git clone
# --depth`) lacks the history a run's level is read from, a partial clone
# (`git clone --filter`) lacks objects. Every command on one exits 3 naming
# what is missing and the git command that fixes it, and writes nothing:
# never an empty `log` or "0 commits" as if the store were complete. After
# `git fetch --unshallow` the same clone reads and verifies.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). A few seconds.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in incomplete_clones
S=$W/store
assert_exit 0 ks init "$S"
assert_exit 0 ks --store "$S" add "$FX"
assert_exit 0 ks --store "$S" import liger "$DATA/liger-sample.csv"
git init -q --bare -b main "$W/served.git"
assert_exit 0 ks --store "$S" push "$W/served.git"
git --git-dir="$W/served.git" config uploadpack.allowFilter true

# ---- shallow -------------------------------------------------------------------------------
git clone -q --bare --depth 1 "file://$W/served.git" "$W/shallow.git"
[[ -s $W/shallow.git/shallow ]] || fail "stock git made no shallow clone"
for cmd in "log" "stats" "verify" "ls" "groups" "rank 334face3" "show 334face3" "add $FX"; do
    # shellcheck disable=SC2086
    assert_exit_unchanged 3 "$W/shallow.git" "$cmd in a shallow clone" ks --store "$W/shallow.git" $cmd
    assert_contains "$ERR" "$W/shallow.git: a shallow clone" "$cmd names the store and what it is"
    assert_contains "$ERR" "git fetch --unshallow" "$cmd says the command that fixes it"
    assert_eq "" "$OUT" "$cmd prints nothing on stdout"
done
pass "a shallow clone: log, stats, verify, ls, groups, rank, show and add exit 3 naming it and git fetch --unshallow; nothing written"

# A work-tree clone (found from inside it, as git finds .git) says the same.
git clone -q --depth 1 "file://$W/served.git" "$W/shallow-wt"
before=$(store_fingerprint "$W/shallow-wt")
OUT=$(cd "$W/shallow-wt" && "$KISTORE" --no-progress log 2>"$W/err") && RC=0 || RC=$?
ERR=$(cat "$W/err")
assert_eq 3 "$RC" "log in a shallow work-tree clone exits 3"
assert_contains "$ERR" "a shallow clone" "and says why"
assert_store_unchanged "$before" "$W/shallow-wt" "log in a shallow work-tree clone"
pass "a shallow work-tree clone, found from inside it: exit 3, the same words, nothing written"

git --git-dir="$W/shallow.git" fetch -q --unshallow "file://$W/served.git" main
assert_exit 0 ks --store "$W/shallow.git" verify
assert_exit 0 ks --store "$W/shallow.git" log --format tsv
assert_eq 3 "$(nlines "$OUT")" "after git fetch --unshallow, log lists both commits (and its header)"
pass "after git fetch --unshallow, as the message says, the clone verifies and log lists its whole history"

# ---- partial -------------------------------------------------------------------------------
git clone -q --bare --filter=blob:none "file://$W/served.git" "$W/partial.git"
for cmd in "log" "stats" "verify" "ls"; do
    # shellcheck disable=SC2086
    assert_exit_unchanged 3 "$W/partial.git" "$cmd in a partial clone" ks --store "$W/partial.git" $cmd
    assert_contains "$ERR" "$W/partial.git: a partial clone" "$cmd names the store and what it is"
    assert_contains "$ERR" "without --filter" "$cmd says how to get a whole one"
    assert_not_contains "$ERR" "object not found" "$cmd does not blame a missing object"
done
pass "a partial clone (--filter=blob:none): exit 3 naming it and how to clone whole; nothing written"

# A whole clone of the same server is unaffected.
assert_exit 0 ks clone "$W/served.git" "$W/whole"
assert_exit 0 ks --store "$W/whole" verify
pass "a whole clone of the same server verifies"

summary
