#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# Many pushers converge on their own. Eight stores, cloned from one git
# daemon, each add a run and push at once, three waves of it: git's
# receive-pack refuses all but one update of the branch at a time ("failed to
# update ref" while another holds its lock, or an old value that no longer
# holds), and every kistore push must take that as a lost race: wait, pull
# what won, merge, push again, until it is in. Every push exits 0, one pull
# each leaves all stores on the server's head, and the server's history
# verifies in a clone. A rejection that is no race (a hook that declines) is
# the server's answer: exit 4 at once, no pull, nothing merged.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). About half a
# minute.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in push_race served
N=8
WAVES=3
"$PY" "$SRC/bench/gen.py" $((N * WAVES + 3)) --out "$W/runs.jsonl" >/dev/null
split -l 1 -d -a 3 "$W/runs.jsonl" "$W/run_"
assert_exit 0 ks init "$W/seed"
assert_exit 0 ks --store "$W/seed" add "$W/run_000"
git init -q --bare -b main "$W/served/ev.git"
assert_exit 0 ks --store "$W/seed" push "$W/served/ev.git"
start_git_daemon "$W/served"
URL=$GIT_DAEMON_URL/ev.git
for ((i = 1; i <= N; i++)); do assert_exit 0 ks clone "$URL" "$W/s$i"; done

k=1
for ((wave = 1; wave <= WAVES; wave++)); do
    for ((i = 1; i <= N; i++)); do
        f=$(printf '%s/run_%03d' "$W" "$k")
        "$KISTORE" --no-progress --quiet --store "$W/s$i" add "$f" >/dev/null || fail "add $f"
        k=$((k + 1))
    done
    pids=()
    for ((i = 1; i <= N; i++)); do
        "$KISTORE" --no-progress --store "$W/s$i" --json push "$URL" >"$W/out.$wave.$i" 2>"$W/err.$wave.$i" &
        pids+=($!)
    done
    for ((i = 1; i <= N; i++)); do
        rc=0
        wait "${pids[$((i - 1))]}" || rc=$?
        [[ $rc == 0 ]] || fail "wave $wave, pusher $i: exit $rc: $(cat "$W/err.$wave.$i")"
        [[ $(jq -r .result "$W/out.$wave.$i") =~ ^(pushed|up-to-date)$ ]] ||
            fail "wave $wave, pusher $i: result $(jq -r .result "$W/out.$wave.$i")"
    done
done
pulls=$(cat "$W"/out.* | jq -s '[.[] | .pulls | length] | add')
pass "$N pushers at once, $WAVES waves: all $((N * WAVES)) pushes exit 0 ($pulls pulls on the way)"

for ((i = 1; i <= N; i++)); do assert_exit 0 ks --store "$W/s$i" pull "$URL"; done
server=$(git --git-dir="$W/served/ev.git" rev-parse main)
for ((i = 1; i <= N; i++)); do assert_eq "$server" "$(head_of "$W/s$i")" "store $i is on the server's head"; done
merges=$(git --git-dir="$W/served/ev.git" rev-list --merges --count main)
((merges <= pulls)) || fail "$merges merge commits for $pulls lost races"
assert_exit 0 ks clone "$URL" "$W/check"
assert_exit 0 ks --store "$W/check" verify
assert_eq $((N * WAVES + 1)) "$(ks --store "$W/check" --json ls | jq '[.documents[] | select(.kind == "BenchmarkRun")] | length')" "every run of every pusher is on the server"
pass "then one pull each: all $N stores on the server's head; $merges merges for $pulls lost races; a clone verifies"

# A hook that declines: the server's answer, not a race.
cat >"$W/served/ev.git/hooks/pre-receive" <<'HOOK'
#!/bin/sh
echo "pushes are closed for the audit" >&2
exit 1
HOOK
chmod +x "$W/served/ev.git/hooks/pre-receive"
assert_exit 0 ks --store "$W/s1" add "$(printf '%s/run_%03d' "$W" $((N * WAVES + 1)))"
before=$(git --git-dir="$W/served/ev.git" rev-parse main)
assert_exit 4 ks --store "$W/s1" push "$URL"
assert_contains "$ERR" "rejected the push" "a declined push says the remote rejected it"
assert_contains "$ERR" "pre-receive hook declined; the remote said: pushes are closed for the audit" \
    "and the hook's own words, as git shows them"
assert_not_contains "$ERR" "gave up" "a declined push is no lost race"
assert_eq "$before" "$(git --git-dir="$W/served/ev.git" rev-parse main)" "the server's branch did not move"
assert_eq "$server" "$(git --git-dir="$W/s1" rev-parse 'main^')" "no merge was made on the way"
pass "a pre-receive hook that declines: exit 4 at once with the hook's words, no retry, no merge"

# A hook that takes the push and says something: the person sees it, escaped.
printf '#!/bin/sh\necho "audit log updated \033[31m(red)"\nexit 0\n' >"$W/served/ev.git/hooks/pre-receive"
assert_exit 0 ks --store "$W/s1" push "$URL"
assert_contains "$ERR" 'remote: audit log updated \x1b[31m(red)' "a taking hook's notice is shown as git shows it, escaped"
assert_exit 0 ks --store "$W/s1" add "$(printf '%s/run_%03d' "$W" $((N * WAVES + 2)))"
assert_exit 0 ks --store "$W/s1" --json push "$URL"
assert_eq "pushed" "$(jv .result)" "--json: pushed"
assert_eq $'audit log updated \e[31m(red)' "$(jv '.remote_messages[0]')" "--json: the notice as the server sent it"
pass "a hook that takes the push and speaks: its words on stderr as remote: lines, escaped"

summary
