#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# A push to a repository on this machine (a path or a file:// URL) goes
# through that repository's own `git receive-pack`, as git push's does, so
# that its rules hold for kistore as for git:
#   (a) its pre-receive hook runs: `kistore hook pre-receive` checks the push,
#       and a hook that declines stops it (exit 4, the hook's words shown,
#       the repository byte for byte as it was);
#   (b) core.sharedRepository: a --shared=group repository gets group-writable
#       folders and files, as git makes them;
#   (c) receive.denyCurrentBranch, receive.fsckObjects: git's own checks;
#   (d) nothing of kistore's environment redirects it (GIT_DIR,
#       GIT_OBJECT_DIRECTORY), and without git on PATH the push says so and
#       sends nothing.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). A few seconds.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in local-push
"$PY" "$SRC/bench/gen.py" 4 --out "$W/runs.jsonl" >/dev/null
split -l 1 -d -a 1 "$W/runs.jsonl" "$W/run_"
S=$W/store
assert_exit 0 ks init "$S"
assert_exit 0 ks --store "$S" add "$W/run_0"

# (a) A hook that declines: exit 4, its words, nothing taken.
R=$W/declines.git
git init -q --bare -b main "$R"
printf '#!/bin/sh\necho "FATAL: W any evidence reader DENIED" >&2\nexit 1\n' >"$R/hooks/pre-receive"
chmod +x "$R/hooks/pre-receive"
assert_exit_unchanged 4 "$R" "a declining hook" ks --store "$S" push "$R"
assert_contains "$ERR" "pre-receive hook declined" "the rejection is git's"
assert_contains "$ERR" "FATAL: W any evidence reader DENIED" "the hook's own words reach the pusher"
assert_exit_unchanged 4 "$R" "a declining hook, file://" ks --store "$S" push "file://$R"
assert_contains "$ERR" "pre-receive hook declined" "file://: the rejection is git's"
rm "$R/hooks/pre-receive"
assert_exit 0 ks --store "$S" push "file://$R"
assert_eq "$(head_of "$R")" "$(head_of "$S")" "once the hook is gone the push lands"
pass "a path push runs the repository's pre-receive hook: declined is exit 4 with its words, nothing written"

# kistore's own guard as the hook: it checks kistore's push and says so.
G=$W/guarded.git
git init -q --bare -b main "$G"
printf '#!/bin/sh\nexec %q hook pre-receive\n' "$KISTORE" >"$G/hooks/pre-receive"
chmod +x "$G/hooks/pre-receive"
assert_exit 0 ks --store "$S" push "$G"
assert_contains "$ERR" "kistore: 1 new commit" "the guard checked the path push"
assert_eq "$(head_of "$G")" "$(head_of "$S")" "the guarded repository took it"
pass "kistore hook pre-receive guards a path push as it guards a network one"

# (b) core.sharedRepository=group: what the push made is group-writable.
SH=$W/shared.git
git init -q --bare -b main --shared=group "$SH"
assert_exit 0 ks --store "$S" push "$SH"
assert_exit 0 ks --store "$S" add "$W/run_1"
assert_exit 0 ks --store "$S" push "$SH"
assert_eq "$(head_of "$SH")" "$(head_of "$S")" "the shared repository took both pushes"
private=$(find "$SH/objects" "$SH/refs" -type d ! -perm -g+ws -printf '%p %M\n')
[[ -z $private ]] || fail "folders a group member could not write: $private"
private=$(find "$SH/refs" -type f ! -perm -g+w -printf '%p %M\n')
[[ -z $private ]] || fail "refs a group member could not move: $private"
private=$(find "$SH/objects" -type f ! -perm -g+r -printf '%p %M\n')
[[ -z $private ]] || fail "objects a group member could not read: $private"
pass "core.sharedRepository=group: folders g+ws, refs g+w, objects g+r, as git makes them"

# (c) git's own receive checks apply: a non-bare repository with the branch
# checked out refuses, and receive.fsckObjects runs over kistore's pack.
git -C "$SH" config receive.fsckObjects true
assert_exit 0 ks --store "$S" add "$W/run_2"
assert_exit 0 ks --store "$S" push "$SH"
assert_eq "$(head_of "$SH")" "$(head_of "$S")" "a repository that fscks what it receives takes kistore's pack"
git -C "$SH" fsck --strict --no-progress >/dev/null 2>&1 || fail "git fsck --strict of the shared repository"
pass "receive.fsckObjects: kistore's pushed objects pass git's checks on the way in"

# (d) kistore's environment does not steer git receive-pack elsewhere.
DECOY=$W/decoy.git
git init -q --bare -b main "$DECOY"
before=$(store_fingerprint "$DECOY")
assert_exit 0 ks --store "$S" add "$W/run_3"
assert_exit 0 env GIT_DIR="$DECOY" GIT_OBJECT_DIRECTORY="$DECOY/objects" GIT_QUARANTINE_PATH="$DECOY/objects" \
    "$KISTORE" --no-progress --store "$S" push "$SH"
assert_eq "$(head_of "$SH")" "$(head_of "$S")" "the push went to the repository named"
assert_store_unchanged "$before" "$DECOY" "GIT_DIR and GIT_OBJECT_DIRECTORY in kistore's environment"
# No git on PATH: said, exit 4, nothing sent.
N=$W/nogit.git
git init -q --bare -b main "$N"
assert_exit_unchanged 4 "$N" "no git on PATH" env PATH=/nonexistent "$KISTORE" --no-progress --store "$S" push "$N"
assert_contains "$ERR" "git was not found on PATH" "no git: says what is missing"
assert_contains "$ERR" "nothing was sent" "no git: says nothing was sent"
pass "GIT_* in kistore's environment reach no git; without git on PATH a path push sends nothing"

# (e) kistore's own writes in a store shared with a group (core.sharedRepository):
# what an add makes is the group's to write too, as git makes it; in a store
# that is not shared, the umask's modes stay.
umask 022
SS=$W/shared-store
assert_exit 0 ks init "$SS"
git -C "$SS" config core.sharedRepository group
chmod -R g+rwX "$SS"
find "$SS" -type d -exec chmod g+s {} +
touch "$W/mark"
assert_exit 0 ks --store "$SS" add "$W/runs.jsonl"
made=$(find "$SS" -newer "$W/mark" | wc -l)
((made > 2)) || fail "the add made no files to look at"
private=$(find "$SS" -newer "$W/mark" -type d ! -perm -g+ws -printf '%p %M\n')
[[ -z $private ]] || fail "folders an add made that the group cannot write: $private"
private=$(find "$SS" -newer "$W/mark" -type f ! -perm -g+r -printf '%p %M\n')
[[ -z $private ]] || fail "files an add made that the group cannot read: $private"
[[ $(stat -c %a "$SS/refs/heads/main") == 664 ]] || fail "the branch's ref is $(stat -c %a "$SS/refs/heads/main"), expected 664"
PS=$W/private-store
assert_exit 0 ks init "$PS"
assert_exit 0 ks --store "$PS" add "$W/runs.jsonl"
[[ $(stat -c %a "$PS/refs/heads/main") == 644 ]] || fail "a store that is not shared: ref $(stat -c %a "$PS/refs/heads/main"), expected 644"
[[ -z $(find "$PS/objects" -type d -perm -g+w) ]] || fail "a store that is not shared got group-writable folders"
git -C "$PS" config core.sharedRepository sometimes
assert_exit_unchanged 2 "$PS" "a core.sharedRepository git refuses" ks --store "$PS" add "$W/run_0"
assert_contains "$ERR" "core.sharedRepository: expected umask, group, all or an octal mode" "a bad setting: says what it expects"
pass "core.sharedRepository=group: an add's folders g+ws, files g+r, the ref 664; unshared stores keep the umask; a bad value is exit 2"

# A repository with many refs lists them all before its report (20,000 tags:
# ~1.7 MB of advertisement, beyond the 1 MiB once kept): the push, here of a
# store with another history (so a pull and a merge come first), still reads
# the report and lands.
T=$W/tagged.git
git clone -q --bare "$SH" "$T"
head=$(git -C "$T" rev-parse HEAD)
for i in $(seq 1 20000); do printf 'create refs/tags/release-with-a-long-name-%05d %s\n' "$i" "$head"; done |
    git -C "$T" update-ref --stdin
git -C "$T" pack-refs --all
assert_exit 0 ks --store "$SS" push "$T"
assert_eq "$(head_of "$SS")" "$(head_of "$T")" "the push to a repository of 20,000 tags landed"
pass "a receiving repository that lists 20,000 refs before its report"
