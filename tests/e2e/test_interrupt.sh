#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# Ctrl-C at any point of a long command (store/edge/interrupt.h): SIGINT or
# SIGTERM sent to a large add, a pull, a clone and a site build at several
# moments ends kistore within a second, with exit 130 and "error: interrupted;
# nothing was written" -- and then the store is byte for byte as it was (no
# tmp_pack_kistore_* file, no quarantine, no half-made clone or site folder) --
# or, when the commit was already made, exit 130 naming that commit, which
# verifies. A command that finished before the signal exits 0.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). About a minute.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in interrupt
S=$W/store
"$PY" "$SRC/bench/gen.py" 30000 --out "$W/runs.jsonl" >/dev/null
assert_exit 0 ks init "$S"
# Under the sanitizers everything is slower, exiting included.
LIMIT=1
[[ ${KISTORE_SANITIZED:-0} == 1 ]] && LIMIT=10

# interrupt SIGNAL DELAY ARGS... : starts kistore ARGS (the binary itself, not
# a shell around it, so that the signal reaches it), sends SIGNAL after DELAY
# seconds, waits; sets RC, ERR and TOOK (seconds from the signal to the end).
interrupt() {
    local sig=$1 delay=$2 pid t0
    shift 2
    # With SIGINT and SIGTERM at their defaults: a shell without job control
    # starts a background command with SIGINT ignored, and kistore, as every
    # program should, leaves a signal its parent ignores ignored (nohup).
    env --default-signal=INT,TERM "$KISTORE" --no-progress "$@" >/dev/null 2>"$W/err" &
    pid=$!
    sleep "$delay"
    t0=$EPOCHREALTIME
    kill "-$sig" "$pid" 2>/dev/null || true
    RC=0
    wait "$pid" || RC=$?
    TOOK=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
    ERR=$(cat "$W/err")
    # A signal that arrives before main set up its handling (a slow start
    # under the sanitizers) ends kistore by the default action: 128 + the
    # signal's number (143 for SIGTERM), silent, nothing begun. Judged as an
    # interruption that wrote nothing; the caller then checks the store.
    if [[ $RC == $((128 + $(kill -l "$sig"))) && -z $ERR ]]; then
        RC=130
    fi
}

# judged WHAT DIR BEFORE : after an interruption, exactly one of: exit 130,
# "nothing was written", DIR unchanged; exit 130 naming a commit that DIR's
# branch now is; exit 0 (done before the signal). Prints which.
judged() {
    local what=$1 dir=$2 before=$3
    if [[ $RC == 130 ]]; then
        awk -v t="$TOOK" -v l="$LIMIT" 'BEGIN { exit !(t <= l) }' || fail "$what: ended $TOOK s after the signal"
        # A signal before main set up its handling (a slow start under the
        # sanitizers) ends kistore by the default action: nothing was begun.
        if [[ -z $ERR || $ERR == *"error: interrupted; nothing was written"* ]]; then
            assert_store_unchanged "$before" "$dir" "$what: interrupted"
            echo nothing
        else
            assert_contains "$ERR" "error: interrupted; commit " "$what: names what was written"
            local id=${ERR#*commit }
            id=${id%% *}
            [[ $(head_of "$dir") == "$id"* ]] || fail "$what: said commit $id, the branch is at $(head_of "$dir")"
            echo committed
        fi
    else
        assert_eq 0 "$RC" "$what: exit 130 when interrupted, else 0 ($ERR)"
        echo done
    fi
}

# ---- add ----------------------------------------------------------------------------
stopped=0
for sig in INT TERM; do
    for delay in 0.2 0.6 1.0 1.5; do
        before=$(store_fingerprint "$S")
        interrupt "$sig" "$delay" --store "$S" add "$W/runs.jsonl"
        outcome=$(judged "add, SIG$sig after $delay s" "$S" "$before")
        [[ $outcome == nothing ]] && stopped=$((stopped + 1))
        if [[ $outcome != nothing ]]; then break 2; fi
    done
done
((stopped >= 2)) || fail "add: interrupted at least twice before its commit (got $stopped)"
# Whatever happened, the store verifies, and an add after it completes.
assert_exit 0 ks --store "$S" add "$W/runs.jsonl"
assert_exit 0 ks --store "$S" verify
pass "add interrupted at $stopped moments: exit 130 within ${LIMIT} s, nothing written, the store unchanged; then verifies"

# ---- pull and clone -------------------------------------------------------------------
git init -q --bare "$W/remote.git"
assert_exit 0 ks --store "$S" push "$W/remote.git"
assert_exit 0 ks init "$W/puller"
stopped=0
for delay in 0.2 0.8 1.5; do
    before=$(store_fingerprint "$W/puller")
    interrupt INT "$delay" --store "$W/puller" pull "$W/remote.git"
    outcome=$(judged "pull after $delay s" "$W/puller" "$before")
    [[ $outcome == nothing ]] && stopped=$((stopped + 1))
    [[ $outcome == nothing ]] || break
done
((stopped >= 1)) || fail "pull: interrupted at least once"
for delay in 0.2 1.0; do
    interrupt INT "$delay" clone "$W/remote.git" "$W/clone-$delay"
    if [[ $RC == 130 ]]; then
        [[ ! -e $W/clone-$delay ]] || fail "an interrupted clone left $W/clone-$delay"
        [[ -z $ERR ]] || assert_contains "$ERR" "interrupted; nothing was written" "clone after $delay s"
    fi
done
pass "pull and clone interrupted: exit 130, the store unchanged, no clone folder left"

# ---- site -----------------------------------------------------------------------------
for delay in 0.5 1.5; do
    interrupt INT "$delay" --store "$S" site "$W/site-$delay"
    if [[ $RC == 130 ]]; then
        [[ ! -e $W/site-$delay ]] || fail "an interrupted first site build left $W/site-$delay"
    fi
done
mkdir "$W/site-empty"
interrupt TERM 1.0 --store "$S" site "$W/site-empty"
if [[ $RC == 130 ]]; then
    assert_eq "" "$(ls -A "$W/site-empty")" "an interrupted build in an empty folder leaves it empty"
    assert_exit 0 ks --store "$S" site "$W/site-empty"
fi
pass "site interrupted: a first build leaves no half site, and the folder takes a build after"

# ---- no temporary file anywhere ---------------------------------------------------------
left=$(find "$S" "$W/puller" \( -name 'tmp_*' -o -name 'incoming-*' \) -print | head -5)
assert_eq "" "$left" "no temporary file or quarantine left"
pass "no temporary file left by any interruption"

summary
