#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# A shared repository guarded by `kistore hook pre-receive` (docs/hosting.md):
# git's receive-pack runs it before it takes a push, with the pushed objects
# still in git's quarantine. kistore's own pushes are taken; what stock git
# pushes that would break the store is refused with the reasons, shown to the
# pusher as remote: lines, and the server's branch does not move:
#   (a) a README.md added by a plain `git push`;
#   (b) a run's level moved to reproduced with no signed rerun;
#   (c) a forced push that drops the head;
#   (d) a second branch, and the deletion of the store's.
# Every kistore store that pulls from the server afterwards stays whole.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). A few seconds.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in hook served
"$PY" "$SRC/bench/gen.py" 3 --out "$W/runs.jsonl" >/dev/null
split -l 1 -d -a 1 "$W/runs.jsonl" "$W/run_"
S=$W/store
assert_exit 0 ks init "$S"
assert_exit 0 ks --store "$S" add "$W/run_0"
SERVER=$W/served/ev.git
git init -q --bare -b main "$SERVER"
printf '#!/bin/sh\nexec %q hook pre-receive\n' "$KISTORE" >"$SERVER/hooks/pre-receive"
chmod +x "$SERVER/hooks/pre-receive"
start_git_daemon "$W/served"
URL=$GIT_DAEMON_URL/ev.git

assert_exit 0 ks --store "$S" push "$URL"
assert_contains "$ERR" "remote: kistore: 1 new commit, " "the hook checked the first push"
assert_exit 0 ks --store "$S" add "$W/run_1"
assert_exit 0 ks --store "$S" push "$URL"
assert_eq "$(head_of "$S")" "$(head_of "$SERVER")" "the server took both pushes"
pass "kistore's own pushes pass the hook, which says what it checked"

# refused GIT-ARGS... : a stock git push from the clone $C; exit non-zero with
# "pre-receive hook declined", the server's branch where it was. $ERR holds
# what git printed.
refused() {
    local before rc=0
    before=$(head_of "$SERVER")
    ERR=$(git -C "$C" push "$@" 2>&1) || rc=$?
    [[ $rc != 0 ]] || fail "git push $* was taken"
    assert_contains "$ERR" "pre-receive hook declined" "git push $*: the hook declined it"
    assert_eq "$before" "$(head_of "$SERVER")" "git push $*: the server's branch did not move"
}

# (a) a README with stock git.
C=$W/checkout
git clone -q "$URL" "$C"
echo "Evidence for the lab." >"$C/README.md"
git -C "$C" add README.md
git -C "$C" commit -q -m "a readme"
refused origin main
assert_contains "$ERR" "remote: problem: layout: README.md" "the pusher sees the path and why"
assert_contains "$ERR" "kistore: push refused: 1 problem;" "and kistore's summary"
pass "(a) a README.md pushed with stock git is refused, naming it; the branch stays"

# (b) a level no controller signed: a run's default level entry moved to
# reproduced by hand.
git -C "$C" reset -q --hard origin/main
reported=$(git -C "$C" ls-tree -r --name-only HEAD refs/levels/source-native | head -1)
[[ -n $reported ]] || fail "no source-native level entry in the store"
forged=${reported/\/source-native\//\/reproduced\/}
blob=$(printf '{"evidence":null}' | git -C "$C" hash-object -w --stdin)
git -C "$C" rm -q --cached "$reported"
git -C "$C" update-index --add --cacheinfo "100644,$blob,$forged"
git -C "$C" commit -q -m "reproduced, trust me"
refused origin HEAD:main
assert_contains "$ERR" "level-unjustified" "the pusher sees the unjustified level"
pass "(b) a level moved to reproduced with no signed rerun is refused; the branch stays"

# (c) a forced push that drops the head.
git -C "$C" reset -q --hard 'origin/main~1'
refused --force origin HEAD:main
assert_contains "$ERR" "history-rewritten" "the pusher sees why"
pass "(c) a forced push that drops the store's head is refused"

# (d) a second branch; deleting the store's.
git -C "$C" reset -q --hard origin/main
refused origin HEAD:refs/heads/other
assert_contains "$ERR" "a kistore store is the one branch its HEAD names" "a second branch: says why"
refused origin :main
assert_contains "$ERR" "deletes the store's branch" "a deletion: says why"
pass "(d) a second branch and the deletion of the store's branch are refused"

# Every store that pulls from the server stays whole.
assert_exit 0 ks clone "$URL" "$W/clone"
assert_exit 0 ks --store "$W/clone" verify
assert_exit 0 ks --store "$S" add "$W/run_2"
assert_exit 0 ks --store "$S" push "$URL"
assert_exit 0 ks --store "$W/clone" pull "$URL"
assert_exit 0 ks --store "$W/clone" verify
assert_exit 0 git --git-dir="$SERVER" fsck --strict --no-dangling
pass "after every refusal the server verifies in a clone, takes kistore's next push, and passes git fsck --strict"

# The hook's own input: what receive-pack would never write is exit 2.
OUT=$(printf 'not a ref line\n' | GIT_DIR=$SERVER "$KISTORE" hook pre-receive 2>&1) && rc=0 || rc=$?
assert_eq 2 "$rc" "a malformed ref line is bad input"
assert_contains "$OUT" "standard input, line 1: expected" "naming the line and what was expected"
pass "a hook input that is not receive-pack's: exit 2 naming the line"

summary
