#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# Concurrent writers and crashes.
#  1. Eight `kistore add` loops started at once, each adding its own small JSON
#     Lines files: every add succeeds, every document is there, the history is
#     linear with one commit per add, every reported commit is in it, verify is
#     clean.  Eight adds of the same input at once: each document is added
#     once, in one commit.
#  2. A large add killed with SIGKILL at several moments (early, during the
#     write of its pack): main stays at the previous commit (or at the complete
#     new one), the store verifies, git fsck --strict passes, and re-running
#     the add succeeds; after each crash the next add removes the temporary
#     files the killed writer left (and never a live writer's).  A lock left
#     by a crashed writer gets a clear error.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root); optional
# E2E_KILL_BUNDLES (size of the killed add, default 1500).  Runs in < 60 s,
# as root or not, with stdin closed; everything lives in a temp dir it removes.
# E2E_KEEP_GOING=1 records a failed check and goes on (to see every failure).
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
# ------------------------------------------------------------------------------

work_in w
PROT=sha256:080e6e66e4ec75a131aa0c9121c74b8e8eed64e7b6d621d567c6a28f79548be8
ENV=sha256:e2646efafa5e5fbd428b49a99b1c076c10d51654a549c4e50ec36da7662d4328

# Background jobs of this script, killed (by pid) if it stops early.
BG_PIDS=()
kill_bg() { local p; for p in "${BG_PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done; }
servers_on_exit kill_bg

# linear S : every commit of main has at most one parent
linear() { [[ -z $(git --git-dir="$1" rev-list --parents main | awk 'NF > 2') ]]; }

# ====================== 1. four writers at once ===============================
S=$W/shared
assert_exit 0 ks --store "$S" init
WRITERS=8 FILES=5 PER=2
for ((w = 0; w < WRITERS; w++)); do
    # in$w/part000.jsonl ... part011.jsonl, $PER bundles each
    mkruns --start $((w * 1000)) --count $((FILES * PER)) --tag "w$w-" --per-file $PER --out "$W/in$w"
    mkruns --start $((w * 1000)) --count $((FILES * PER)) --tag "w$w-" --digests >>"$W/expected"
done
printf '%s\n' "$PROT" "$ENV" >>"$W/expected"
pass "inputs: $WRITERS writers x $FILES JSON Lines files x $PER bundles"

writer() { # writer W : add its files one by one, --json output per add
    local w=$1 f rc
    for ((f = 0; f < FILES; f++)); do
        rc=0
        "$KISTORE" --no-progress --store "$S" --json add "$W/in$w/$(printf 'part%03d' "$f").jsonl" \
            >"$W/out$w.$f.json" 2>"$W/err$w.$f" || rc=$?
        ((rc == 0)) || echo "writer $w file $f: exit $rc: $(cat "$W/err$w.$f")" >>"$W/failures"
    done
}
: >"$W/failures"
t0=$SECONDS
for ((w = 0; w < WRITERS; w++)); do
    writer "$w" </dev/null &
    BG_PIDS+=($!)
done
for p in "${BG_PIDS[@]}"; do wait "$p" || true; done
BG_PIDS=()
assert_eq "" "$(cat "$W/failures")" "every concurrent add succeeds"
pass "$((WRITERS * FILES)) adds from $WRITERS concurrent writers all exit 0 ($((SECONDS - t0)) s)"

NADDS=$((WRITERS * FILES))
assert_eq "$NADDS" "$(git --git-dir="$S" rev-list --count main)" "one commit per add"
linear "$S" || fail "history of main is not linear"
assert_eq "" "$(git --git-dir="$S" rev-list --merges main)" "no merges"
pass "git log: linear, exactly $NADDS commits (one per add)"

cat "$W"/out*.json | jq -r .commit | sort >"$W/reported-commits"
assert_eq "$NADDS" "$(sort -u "$W/reported-commits" | grep -c '^[0-9a-f]\{40\}$')" "every add reports its own commit"
git --git-dir="$S" rev-list main | sort >"$W/history"
assert_eq "" "$(comm -23 "$W/reported-commits" "$W/history")" "every reported commit is in main's history"
assert_eq "$((NADDS * PER + 2))" "$(cat "$W"/out*.json | jq -s 'map(.added) | add')" "sum of added"
pass "every add's --json commit is on main; the adds together added each document once"

assert_exit 0 ks --store "$S" ls
awk '{print $1}' <<<"$OUT" | sort >"$W/listed"
sort "$W/expected" >"$W/expected.sorted"
assert_eq "" "$(comm -3 "$W/expected.sorted" "$W/listed")" "the store holds exactly the documents added"
pass "every document is present ($((NADDS * PER)) runs + protocol + environment), nothing else"
assert_exit 0 ks --store "$S" --json log
assert_eq "$NADDS" "$(jv '[.entries[] | select(.op == "add")] | length')" "log: one add entry per add"
assert_exit 0 ks --store "$S" --json verify
assert_eq true "$(jv .ok)" "verify after concurrent adds"
assert_eq 0 "$(jv '.problems | length')" "verify problems"
assert_exit 0 git --git-dir="$S" fsck --strict
pass "log has $NADDS add entries; verify clean; git fsck --strict clean"

# the same input eight times at once: the losers rebuild on the winner and find it present
SAME=8
for round in 1 2 3; do
    mkruns --start $((9000 + round * 100)) --count 20 --tag "same$round-" >"$W/same$round.jsonl"
    before=$(git --git-dir="$S" rev-list --count main)
    BG_PIDS=()
    for ((j = 0; j < SAME; j++)); do
        ks --store "$S" --json add "$W/same$round.jsonl" >"$W/same$round.$j" 2>&1 </dev/null &
        BG_PIDS+=($!)
    done
    codes=""
    for p in "${BG_PIDS[@]}"; do
        rc=0
        wait "$p" || rc=$?
        codes+="$rc "
    done
    BG_PIDS=()
    assert_eq "$(printf '0 %.0s' $(seq $SAME))" "$codes" "round $round: all $SAME adds of the same input succeed ($(cat "$W/same$round".*))"
    assert_eq 20 "$(cat "$W/same$round".* | jq -s 'map(.added) | add')" "round $round: the 20 runs are added once"
    assert_eq $((before + 1)) "$(git --git-dir="$S" rev-list --count main)" "round $round: one commit, no empty one"
done
linear "$S" || fail "history of main is not linear after same-input races"
assert_exit 0 ks --store "$S" verify
assert_exit 0 git --git-dir="$S" fsck --strict
pass "$SAME adds of the same input at once (3 rounds): all exit 0, each run added once, one commit, verify and fsck clean"

# ====================== 2. kill -9 of a large add =============================
K=$W/killed
N=${E2E_KILL_BUNDLES:-1500}
assert_exit 0 ks --store "$K" init
assert_exit 0 ks --store "$K" add "$FX"
# JSON Lines files of 1000 bundles (each file stays under kistore's 16 MiB cap)
mkruns --start 100000 --count "$N" --tag big- --per-file 1000 --out "$W/big"
pass "a store with the fixture, and $N bundles to add"

# after_crash WHAT : the store is at the previous commit or the complete new one
after_crash() {
    local what=$1 now
    now=$(head_of "$K")
    if [[ $now != "$PREV" ]]; then
        # the add finished before the kill: its commit must be complete
        assert_eq "$PREV" "$(git --git-dir="$K" rev-parse "$now^")" "$what: new head's parent is the previous commit"
        assert_exit 0 ks --store "$K" ls --kind BenchmarkRun
        assert_eq $((N + 1)) "$(nlines "$OUT")" "$what: a finished add has every run"
        PREV=$now
    fi
    assert_exit 0 ks --store "$K" --json verify
    assert_eq true "$(jv .ok)" "$what: verify ok"
    assert_exit 0 git --git-dir="$K" fsck --strict
    linear "$K" || fail "$what: history not linear"
}

# temp_files : kistore's temporary files in the store (none after a writer ran)
temp_files() { find "$K/objects" -maxdepth 2 -type f -name 'tmp_*_kistore_*' -printf '%P\n' | LC_ALL=C sort; }
# add_after_crash WHAT : the next writer (a one-document add) removes what the
# killed one left: no temporary file, verify and fsck clean, main at its commit
add_after_crash() {
    local what=$1 doc=$W/after-$RANDOM$RANDOM.json
    printf '{"apiVersion":"kernelindex.dev/v1alpha1","kind":"Implementation","spec":{"name":"%s"}}' "${doc##*/}" >"$doc"
    assert_exit 0 ks --store "$K" --json add "$doc"
    assert_eq "$(head_of "$K")" "$(jv .commit)" "$what: the next add's commit is main"
    assert_eq "$PREV" "$(git --git-dir="$K" rev-parse main^)" "$what: the next add is one commit on the previous head"
    PREV=$(head_of "$K")
    assert_eq "" "$(temp_files)" "$what: no temporary file left after the next add"
    assert_exit 0 ks --store "$K" --json verify
    assert_eq true "$(jv .ok)" "$what: verify ok after the next add"
    assert_exit 0 git --git-dir="$K" fsck --strict
}

PREV=$(head_of "$K")
for t in 0.1 0.3 0.6 1.0 0.05 0.2 0.45; do
    "$KISTORE" --no-progress --store "$K" add "$W/big" >/dev/null 2>"$W/killed.err" </dev/null &
    pid=$!
    BG_PIDS=("$pid")
    sleep "$t"
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    BG_PIDS=()
    was=$PREV
    after_crash "kill -9 after ${t}s"
    left=$(temp_files | wc -l)
    where=$([[ $PREV == "$was" ]] && echo "still at the previous commit" || echo "at the finished add's commit")
    add_after_crash "kill -9 after ${t}s"
    pass "kill -9 of the add after ${t}s: main $where, verify ok, fsck --strict ok; the next add removed its $left temporary file(s)"
done

# kill it while it writes its pack: poll for the pack being written, then kill
packs() { find "$K/objects/pack" -maxdepth 1 -type f -printf '%f\n' 2>/dev/null | LC_ALL=C sort; }
packs >"$W/packs.before"
"$KISTORE" --no-progress --store "$K" add "$W/big" >/dev/null 2>"$W/killed.err" </dev/null &
pid=$!
BG_PIDS=("$pid")
caught=no
{   # (bash's "Killed" job notice goes to this block's stderr)
    for ((i = 0; i < 3000; i++)); do
        if [[ -n $(packs | comm -13 "$W/packs.before" -) ]]; then
            kill -9 "$pid" || true
            caught=yes
            break
        fi
        kill -0 "$pid" || break
        sleep 0.01
    done
    wait "$pid" || true
} 2>/dev/null
BG_PIDS=()
was=$PREV
after_crash "kill -9 while writing the pack"
pass "kill -9 as soon as a new file appears in objects/pack (caught: $caught): main $([[ $PREV == "$was" ]] && echo "still at the previous commit" || echo "at the finished add's commit"), store intact"
add_after_crash "kill -9 while writing the pack"
pass "after the kill while writing the pack, the next add left no temporary file, verify and fsck clean"

# a live writer's temporary files are never removed; a dead one's are
sleep 60 &
LIVE=$!
BG_PIDS=("$LIVE")
: >"$K/objects/pack/tmp_pack_kistore_${LIVE}_live01"
: >"$K/objects/tmp_obj_kistore_${LIVE}_live02"
add_after_crash_live() {
    local doc=$W/live-$1.json
    printf '{"apiVersion":"kernelindex.dev/v1alpha1","kind":"Implementation","spec":{"name":"live-%s"}}' "$1" >"$doc"
    assert_exit 0 ks --store "$K" add "$doc"
    PREV=$(head_of "$K")
}
add_after_crash_live 1
assert_eq "$(printf '%s\n' "pack/tmp_pack_kistore_${LIVE}_live01" "tmp_obj_kistore_${LIVE}_live02")" "$(temp_files)" \
    "a running process's temporary files stay"
kill -9 "$LIVE" 2>/dev/null || true
wait "$LIVE" 2>/dev/null || true
BG_PIDS=()
add_after_crash_live 2
assert_eq "" "$(temp_files)" "once its process is gone, they are removed"
pass "temporary files named for a running process stay through an add; once it is gone, the next add removes them"

# re-run the add to the end
t0=$SECONDS
assert_exit 0 ks --store "$K" --json add "$W/big"
if [[ $(jv .added) != 0 ]]; then
    assert_eq "$N" "$(jv .added)" "re-run adds every run"
    assert_eq "$(head_of "$K")" "$(jv .commit)" "re-run commit"
    assert_eq "$PREV" "$(git --git-dir="$K" rev-parse main^)" "re-run: one commit on the previous head"
fi
assert_exit 0 ks --store "$K" ls --kind BenchmarkRun
assert_eq $((N + 1)) "$(nlines "$OUT")" "after the re-run every run is there"
assert_exit 0 ks --store "$K" --json verify
assert_eq true "$(jv .ok)" "verify after re-run"
assert_exit 0 git --git-dir="$K" fsck --strict
pass "re-running the add succeeds ($((SECONDS - t0)) s): $N runs added in one commit, verify and fsck clean"

# a lock left by a crashed writer: a prompt error that names the lock
touch "$K/refs/heads/main.lock"
mkruns --start 200000 --count 1 --tag lock- >"$W/lock.jsonl"
before=$(head_of "$K")
assert_exit 3 timeout -k 5 30 "$KISTORE" --no-progress --store "$K" add "$W/lock.jsonl"
assert_eq "$before" "$(head_of "$K")" "a locked branch is not moved"
assert_contains "$ERR" "main.lock" "the error names the stale lock file"
rm -f "$K/refs/heads/main.lock"
pass "a stale refs/heads/main.lock: exit 3 naming the lock, main unchanged"

summary
