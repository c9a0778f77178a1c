#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2016
# Attacks on evidence levels (issue 12 point 2, SPEC §1 "the level of a run is
# a function of the history"), each built with stock git (commit-tree,
# hash-object, update-index into a scratch index, update-ref; signed forgeries
# with `git -c gpg.format=ssh -c user.signingkey=KEY commit-tree -S`) or a few
# lines of python3, and offered to a victim store that trusts the test
# controller. The store is format 3: a run's level is a line of refs/levels/
# ({"@key":RUN,"evidence":RERUN,"level":...}, none at the default level),
# forged by editing the lines of those files (lib/index_lines.py):
#   (a) an unsigned merge that restores an old signed rerun's level over a
#       later signed dispute (pulled over a path and over git://);
#   (b) a merge that gives one run two levels (its key twice in its file);
#   (c) a controller-signed rerun commit that also changes another run's level;
#   (d) a controller-signed rerun commit whose level line names evidence that
#       is no stored rerun of the run;
#   (e) a controller's signature copied from its commit onto another one.
# Each pull must exit 1 naming the commit and the run and leave the victim
# byte for byte as it was; `verify` must report the same commit placed in a
# store directly (git update-ref). Then:
#   (f) two controllers rerun one run apart (reproduced, disputed): after push
#       and pull both stores say disputed, with the same line, and verify;
#   (g) after `trust remove` of the controller, rank, show and ls --level give
#       the default level verify computes, the stored line's level beside it.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs with stdin
# closed, as root or not; everything lives in a temp dir it removes.
# E2E_KEEP_GOING=1 records a failed check and goes on (to see every failure).
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

BASE=$SERVERS_DIR/repos
work_in w "$BASE"
ks() { timeout -k 2 60 "$KISTORE" --no-progress "$@" </dev/null; }

cp "$SRC/tests/data/keys/controller" "$SRC/tests/data/keys/controller.pub" \
   "$SRC/tests/data/keys/outsider" "$SRC/tests/data/keys/outsider.pub" .
chmod 600 controller outsider
# The victim's controllers; for (f) the second key is a controller too.
printf 'controller@example.org %s\n' "$(cut -d' ' -f1,2 controller.pub)" >signers
cp signers signers2
printf 'second@example.org %s\n' "$(cut -d' ' -f1,2 outsider.pub)" >>signers2

RUN=sha256:628643ba921878ef6035a1321da64c56f5b4a470a3fa12e9ab5239c742fec354 # the fixture's row: liger_tiled
RH=${RUN#sha256:}

# evidence_of STORE LEVEL RUN-HEX : the evidence of the run's level line when
# it says LEVEL ("none" without a line, "level L" when it says another)
evidence_of() {
    local line
    line=$(index_line "$1" levels "$3" 2>/dev/null) || { echo none; return 0; }
    jq -r --arg l "$2" 'if .level == $l then .evidence else "level \(.level)" end' <<<"$line"
}
# level_line LEVEL EVIDENCE RUN-HEX : the run's level line (JCS)
level_line() { printf '{"@key":"%s","evidence":"%s","level":"%s"}' "$3" "$2" "$1"; }
# make_rerun MEDIAN_NS OUT : a rerun of RUN's bundle with another median
make_rerun() { rerun_bundle bundle.json "$1" >"$2"; }

# forge BASE "PARENT..." MESSAGE KEY|- EDIT... : a commit in F made with stock
# git: BASE's tree with each EDIT ("RUN-HEX=LINE": the run's line of
# refs/levels/ replaced by LINE, or inserted in key order; "RUN-HEX=-": removed;
# "RUN-HEX=+LINE": LINE added after the run's line, the key then twice), the
# given parents and message, signed with KEY unless "-". Edits apply one after
# the other, so two may touch one file. Moves no branch.
forge() {
    local base=$1 parents=$2 msg=$3 key=$4 e p tree k l
    shift 4
    tree=$(git --git-dir="$F" rev-parse "$base^{tree}")
    for e in "$@"; do
        k=${e%%=*} l=${e#*=}
        if [[ $l == +* ]]; then
            # the file holding k, with LINE after k's line: the key twice
            p=$(INDEX_REF=$tree index_file "$F" levels "$k")
            tree=$(printf '100644 %s\t%s\n' "$(git --git-dir="$F" cat-file blob "$tree:$p" |
                awk -v k="\"@key\":\"$k\"" -v l="${l#+}" '{ print } index($0, k) { print l }' |
                git --git-dir="$F" hash-object -w --stdin)" "$p" | tree_with "$F" "$tree")
        else
            tree=$(INDEX_REF=$tree set_line "$F" levels "$k" "$l" | tree_with "$F" "$tree")
        fi
    done
    local args=() sign=()
    for p in $parents; do args+=(-p "$p"); done
    [[ $key == - ]] || sign=(-c gpg.format=ssh -c user.signingkey="$W/$key")
    printf '%s\n' "$msg" | git "${sign[@]}" --git-dir="$F" commit-tree ${sign:+-S} "$tree" "${args[@]}"
}

# ------------------------------------------------------------------------------
# The honest store A: the Liger sample, a controller, two signed reruns of RUN
# (C1 reproduced, then C2 disputed). The attacker's remote F is a stock-git
# copy of it; the victim V a kistore clone that trusts the controller.
assert_exit 0 ks --store A init
assert_exit 0 ks --store A import liger "$DATA/liger-sample.csv"
assert_exit 0 ks --store A trust add controller@example.org controller.pub
ks --store A show "$RUN" --canonical >bundle.json
make_rerun 2650000 close.json  # +1.7 %: reproduced
make_rerun 3400000 far.json    # +30 %: disputed
make_rerun 2620000 close2.json # +0.5 %
make_rerun 3500000 far2.json
assert_exit 0 ks --store A rerun "$RUN" close.json --sign controller
C1=$(head_of A) E1=$(evidence_of A reproduced "$RH")
[[ $E1 == sha256:* ]] || fail "setup: no reproduced line after the first rerun: $E1"
assert_exit 0 ks --store A rerun "$RUN" far.json --sign controller
C2=$(head_of A) E2=$(evidence_of A disputed "$RH")
[[ $E2 == sha256:* ]] || fail "setup: no disputed line after the second rerun: $E2"
assert_exit 0 ks --store A verify
F=$BASE/evil.git
git clone -q --bare A "$F"
assert_exit 0 ks clone --allowed-signers signers "$F" V
assert_exit 0 ks --store V verify
assert_eq "$E2" "$(evidence_of V disputed "$RH")" "V has the dispute"
start_git_daemon "$BASE"
assert_exit 0 ks --store V remote add evild "$GIT_DAEMON_URL/evil.git"
OTHER=$(ks --json --store A rank "$RUN" | jq -r '.members[] | select(.implementation == "huggingface") | .run')
OH=${OTHER#sha256:}
[[ $OH =~ ^[0-9a-f]{64}$ ]] || fail "no huggingface run in RUN's group: $OTHER"
pass "setup: two signed reruns (reproduced, then disputed); V trusts the controller and verifies"

# refused NAME COMMIT RUN-HEX [REMOTE] : F's main at COMMIT; V's pull exits 1
# naming the commit and the run, and leaves V byte for byte as it was.
refused() {
    local name=$1 c=$2 runhex=$3 remote=${4:-origin}
    git --git-dir="$F" update-ref refs/heads/main "$c"
    assert_exit_unchanged 1 V "$name ($remote)" ks --store V pull "$remote"
    assert_contains "$ERR" "level-unjustified" "$name: the problem kind"
    assert_contains "$ERR" "commit ${c:0:12}" "$name: names the commit"
    assert_contains "$ERR" "$runhex" "$name: names the run"
    assert_contains "$ERR" "the store is unchanged" "$name: says the store is unchanged"
    assert_contains "$ERR" "hint: a level moves only by a rerun commit signed by a controller this store trusts" \
        "$name: says how a level moves"
    assert_contains "$ERR" "kistore trust add PRINCIPAL KEY.pub" "$name: names the command that trusts a signer"
}
# reported NAME COMMIT RUN-HEX : the commit placed in a copy of V with
# update-ref (its objects through an alternate); verify exits 1 with a
# problem of KIND (default level-unjustified) on the run's level line
# ("refs/levels/<file> @RUN-HEX"; for a layout problem, at the file that holds
# the run's line).
reported() {
    local name=$1 c=$2 runhex=$3 kind=${4:-level-unjustified} path
    rm -rf Vd && cp -a V Vd
    echo "$F/objects" >>Vd/objects/info/alternates
    git --git-dir=Vd update-ref refs/heads/main "$c"
    path=$(index_file Vd levels "$runhex")
    [[ $kind == layout ]] || path="$path @$runhex"
    assert_exit 1 ks --store Vd --json verify
    [[ $(jv --arg k "$kind" --arg p "$path" '[.problems[] | select(.kind == $k and .path == $p)] | length') -ge 1 ]] ||
        fail "$name: verify does not report $kind at $path: $OUT"
}

# (a) The unsigned merge of the issue: parents (C2, C1), C2's tree with RUN put
# back at reproduced naming E1. C1 is C2's ancestor: C2's dispute decides.
a=$(forge "$C2" "$C2 $C1" $'merge: restore\n\nKistore-Op: merge' - "$RH=$(level_line reproduced "$E1" "$RH")")
refused "(a) unsigned merge restoring an old rerun" "$a" "$RH"
assert_contains "$ERR" "expected disputed {\"evidence\":\"$E2\"} (decided by rerun commit $C2)" \
    "(a) says what the history gives and which commit decided"
refused "(a) over git://" "$a" "$RH" evild
reported "(a)" "$a" "$RH"
pass "(a) an unsigned merge restoring an old signed rerun's level: refused over a path and git://, reported by verify"

# (b) A merge giving RUN two levels: C2's disputed line kept, C1's reproduced
# one added after it. Format 3 has one line per run, so the two levels are its
# key twice in one file: refused as the file's layout (not as a level), naming
# the commit, the file and the run.
b=$(forge "$C2" "$C2 $C1" $'merge: both\n\nKistore-Op: merge' - "$RH=+$(level_line reproduced "$E1" "$RH")")
LEVELS_FILE=$(index_file "$F" levels "$RH")
git --git-dir="$F" update-ref refs/heads/main "$b"
assert_exit_unchanged 1 V "(b) two levels" ks --store V pull
assert_contains "$ERR" "commit ${b:0:12}" "(b) names the commit"
assert_contains "$ERR" "layout" "(b) the problem kind"
assert_contains "$ERR" "$LEVELS_FILE" "(b) names the file"
assert_contains "$ERR" "expected each key once, found $RH again" "(b) says the run has two lines"
assert_contains "$ERR" "the store is unchanged" "(b) says the store is unchanged"
reported "(b)" "$b" "$RH" layout
pass "(b) a merge giving one run two levels (its key twice): refused, reported by verify"

# A genuine third rerun, made by the controller in a scratch store X on top of
# C2, is the material for (c) and (e).
git --git-dir="$F" update-ref refs/heads/main "$C2"
assert_exit 0 ks clone --allowed-signers signers "$F" X
assert_exit 0 ks --store X rerun "$RUN" close2.json --sign controller
C3=$(head_of X) E3=$(evidence_of X reproduced "$RH")
git --git-dir="$F" fetch -q X main:refs/scratch/x

# (c) C3's change, and the other run promoted too, signed by the controller.
c=$(forge "$C3" "$C2" "$(git --git-dir=X log -1 --format=%B "$C3")" controller "$OH=$(level_line reproduced "$E3" "$OH")")
git --git-dir="$F" cat-file commit "$c" | grep -q 'BEGIN SSH SIGNATURE' || fail "(c) is not signed"
refused "(c) signed rerun changing two runs" "$c" "$RH"
assert_contains "$ERR" "changes the levels of 2 runs" "(c) says why the rerun commit is not valid"
reported "(c)" "$c" "$OH"
pass "(c) a controller-signed rerun commit that also changes another run's level: refused, reported"

# (d) A controller-signed rerun commit promoting the other run with evidence
# that is no stored rerun of it (no such document at all).
ghost=sha256:$(printf 'no such rerun' | sha256sum | cut -c1-64)
d=$(forge "$C2" "$C2" $'rerun: promote\n\nKistore-Op: rerun' controller "$OH=$(level_line reproduced "$ghost" "$OH")")
refused "(d) dangling evidence" "$d" "$OH"
assert_contains "$ERR" "adds no rerun of this run" "(d) says why the rerun commit is not valid"
reported "(d)" "$d" "$OH"
pass "(d) a controller-signed rerun commit naming evidence that is no stored rerun: refused, reported"

# (e) C3's tree and message under another author, with C3's signature copied in.
e_unsigned=$(GIT_AUTHOR_NAME=Mallory GIT_AUTHOR_EMAIL=m@example.invalid \
    forge "$C3" "$C2" "$(git --git-dir=X log -1 --format=%B "$C3")" -)
e=$("$PY" - "$F" "$C3" "$e_unsigned" <<'PY'
import subprocess, sys
gd, signed, target = sys.argv[1:]
raw = lambda c: subprocess.check_output(["git", "--git-dir=" + gd, "cat-file", "commit", c])
head = raw(signed).split(b"\n\n", 1)[0].split(b"\n")
i = next(k for k, l in enumerate(head) if l.startswith(b"gpgsig "))
j = i + 1
while j < len(head) and head[j].startswith(b" "):
    j += 1
th, tb = raw(target).split(b"\n\n", 1)
forged = th + b"\n" + b"\n".join(head[i:j]) + b"\n\n" + tb
print(subprocess.run(["git", "--git-dir=" + gd, "hash-object", "-t", "commit", "-w", "--stdin"],
                     input=forged, capture_output=True, check=True).stdout.decode().strip())
PY
)
git --git-dir="$F" cat-file commit "$e" | grep -q 'BEGIN SSH SIGNATURE' || fail "(e) carries no signature"
refused "(e) replayed signature" "$e" "$RH"
assert_contains "$ERR" "INVALID signature" "(e) says the signature is invalid"
reported "(e)" "$e" "$RH"
pass "(e) a controller's signature replayed onto another commit: refused, reported"

# The genuine C3 is taken, and verifies.
git --git-dir="$F" update-ref refs/heads/main "$C3"
assert_exit 0 ks --store V --json pull
assert_eq "fast-forward" "$(jv .result)" "the genuine rerun is taken"
assert_eq "$E3" "$(evidence_of V reproduced "$RH")" "V has the genuine rerun's level"
assert_exit 0 ks --store V verify
pass "the controller's genuine rerun commit is taken and verifies"

# ------------------------------------------------------------------------------
# (f) Two controllers rerun RUN apart: P reproduces, Q disputes. Q pushes
# first; P's push merges; Q pulls. Both end disputed, with the same entry.
git clone -q --bare A "$BASE/shared.git"
assert_exit 0 ks clone --allowed-signers signers2 "$GIT_DAEMON_URL/shared.git" P
assert_exit 0 ks clone --allowed-signers signers2 "$GIT_DAEMON_URL/shared.git" Q
assert_exit 0 ks --store P rerun "$RUN" close2.json --sign controller
assert_exit 0 ks --store Q rerun "$RUN" far2.json --sign outsider
EQ=$(evidence_of Q disputed "$RH")
assert_exit 0 ks --store Q push
assert_exit 0 ks --store P --json push
assert_contains "$OUT" '"result":"merge"' "(f) P merges Q's dispute before pushing"
assert_exit 0 ks --store Q --json pull
assert_eq "fast-forward" "$(jv .result)" "(f) Q takes P's merge"
assert_eq "$(head_of P)" "$(head_of Q)" "(f) same head"
for s in P Q; do
    assert_eq "$EQ" "$(evidence_of $s disputed "$RH")" "(f) $s: RUN disputed, naming Q's rerun"
    assert_eq "$RH" "$(index_keys $s levels "$RH")" "(f) $s: RUN has one level line (not still reproduced beside it)"
    assert_exit 0 ks --store $s verify
    assert_exit 0 ks --store $s --json rank "$RUN"
    assert_eq "disputed true" "$(jv --arg r "$RUN" '.members[] | select(.run == $r) | "\(.level) \(.verified)"')" \
        "(f) $s: rank shows the dispute as verified"
done
pass "(f) concurrent reruns by two controllers: disputed on both sides after push and pull, verify clean"

# ------------------------------------------------------------------------------
# (g) V drops the controller: its levels fall back to what the history gives
# under the trust list (the default), with the stored entry beside; verify says so.
assert_exit 0 ks --store V trust remove controller@example.org
assert_exit 0 ks --store V rank "$RUN"
assert_contains "$OUT" "source-native (stored: reproduced, not justified by the trust list: signer not trusted)" "(g) rank"
assert_exit 0 ks --store V --json rank "$RUN"
assert_eq "source-native false reproduced signer not trusted" \
    "$(jv --arg r "$RUN" '.members[] | select(.run == $r) | "\(.level) \(.verified) \(.storedLevel) \(.why)"')" "(g) rank --json"
assert_exit 0 ks --store V show "$RUN"
assert_contains "$OUT" "level: source-native (stored: reproduced, not justified by the trust list: signer not trusted)" "(g) show"
assert_exit 0 ks --store V --json show "$RUN"
assert_eq "source-native false signer not trusted" "$(jv '"\(.evidence.level) \(.evidence.verified) \(.evidence.why)"')" "(g) show --json"
assert_exit 0 ks --store V ls --level reproduced
assert_not_contains "$OUT" "$RUN" "(g) ls --level reproduced no longer lists the run"
assert_exit 0 ks --store V ls --level source-native
assert_contains "$OUT" "$RUN BenchmarkRun" "(g) ls --level source-native lists it"
assert_contains "$OUT" "[source-native (stored: reproduced, not justified by the trust list: signer not trusted)]" "(g) ls --level marks it"
assert_exit 0 ks --store V --json ls --level source-native
assert_eq "false reproduced" "$(jv --arg r "$RUN" '.documents[] | select(.digest == $r) | "\(.verified) \(.storedLevel)"')" "(g) ls --json"
assert_exit 1 ks --store V verify
assert_contains "$ERR" "level-unjustified: $(index_file V levels "$RH") @$RH" "(g) verify reports the level line"
assert_contains "$ERR" "no valid rerun commit: default level source-native" "(g) verify says why"
pass "(g) after trust remove: rank, show and ls --level give the default level, the stored entry beside; verify agrees"

summary
