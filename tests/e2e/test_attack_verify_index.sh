#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153,SC2016
# Attacks on verify's index check and on its pack reads (store/verify/verify.cc,
# store/git/packread.cc): the index is checked on every core in blocks whose
# findings are appended in order, source entries are a vector with a hash
# index, and the pack reader inflates deflated whole objects itself. Stores
# are damaged with stock git plumbing and lib/craft_objects.py; verify must
# report each damage (exit 1, naming the path), never crash, give the same
# report whatever the number of cores, and keep its memory to what the pack
# holds, not to what an entry's header claims:
#   (a) a tree listing one source path twice (the second naming another
#       run), and one listing an object path twice: reported by verify and
#       refused by pull;
#   (b) source claims: two runs claiming one source id (a warning naming the
#       first claim), an entry naming a run whose id it is not (naming the
#       run that claims it), an id that is a file and a folder;
#   (c) hundreds of problems at once: the same report, byte for byte, from
#       two runs and from one core (taskset) and every core;
#   (d) a deflated pack entry of an index blob: read (clean), declaring 1 GiB
#       over a short stream (reported, peak memory far below 1 GiB), a stream
#       shorter or longer than declared, a flipped byte, other bytes under
#       the id: each reported, exit 1.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs with stdin
# closed, as root or not; everything lives in a temp dir it removes.
# E2E_KEEP_GOING=1 records a failed check and goes on (to see every failure).
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

CRAFT=("$PY" "$here/lib/craft_objects.py")
work_in w
ks() { timeout -k 2 60 "$KISTORE" --no-progress "$@" </dev/null; }
SEED=sha256:334face30acaee76778d58ce984b0b0c0d1e0749650f88ab778b4563c58241a0

# S0: the seed and runs 1-3; a bare copy of it is each attack's start.
S0=$W/s0.git
assert_exit 0 ks init "$S0"
assert_exit 0 ks --store "$S0" add "$FX"
mkruns --start 1 --count 3 >r3.jsonl
assert_exit 0 ks --store "$S0" add r3.jsonl
fresh() { rm -rf "$1" && git clone -q --bare "$S0" "$1"; }
SOURCE1=$(gd "$S0" ls-tree -r --name-only main refs/sources/ | grep -- '-v1$')
SOURCE2=${SOURCE1%1}2
SOURCES=${SOURCE1%/*}

# graft STORE PATH TREE : on STORE's main, a commit whose tree is main's with
# the folder PATH replaced by TREE (parents rebuilt with git mktree, which
# keeps what the listing gives, duplicates and all).
graft() {
    local store=$1 path=$2 t=$3 parent base c
    while :; do
        if [[ $path == */* ]]; then parent=${path%/*}; base=${path##*/}; else parent=""; base=$path; fi
        t=$(gd "$store" ls-tree "main${parent:+:$parent}" |
            awk -v b="$base" -v t="$t" -F'\t' '{ split($1, a, " "); if ($2 == b) printf "%s %s %s\t%s\n", a[1], a[2], t, $2; else print }' |
            gd "$store" mktree --missing)
        [[ -z $parent ]] && break
        path=$parent
    done
    c=$(gd "$store" commit-tree "$t" -p main -m "add: grafted")
    gd "$store" update-ref refs/heads/main "$c"
}

# ---- (a) an entry listed twice ---------------------------------------------------
S=$W/twice.git
fresh "$S"
graft "$S" "$SOURCES" "$("${CRAFT[@]}" tree-plus "$S" "$(gd "$S" rev-parse "main:$SOURCES")" "${SOURCE1##*/}" 100644 \
    "$(gd "$S" rev-parse "main:$SOURCE2")")"
assert_exit 1 ks --store "$S" --json verify
assert_eq "object-corrupt $SOURCES" "$(jv -r '.problems[] | select(.detail | contains("out of order or twice")) | "\(.kind) \(.path)"')" \
    "(a) verify reports the source folder that lists ${SOURCE1##*/} twice"
assert_exit 1 ks --store "$S" verify
assert_contains "$OUT$ERR" "out of order or twice" "(a) verify in text"
fresh "$W/puller"
assert_exit_unchanged 1 "$W/puller" "(a) the refused pull" ks --store "$W/puller" pull "$S"
assert_contains "$ERR" "out of order or twice" "(a) pull refuses the same tree"
OBJDIR=objects/sha256/33/4f
fresh "$S"
graft "$S" "$OBJDIR" "$("${CRAFT[@]}" tree-plus "$S" "$(gd "$S" rev-parse "main:$OBJDIR")" \
    "${SEED#sha256:334f}" 100644 "$(gd "$S" rev-parse "main:$OBJDIR/${SEED#sha256:334f}")")"
assert_exit 1 ks --store "$S" --json verify
assert_eq "object-corrupt $OBJDIR" "$(jv -r '.problems[] | select(.detail | contains("out of order or twice")) | "\(.kind) \(.path)"')" \
    "(a) verify reports the object folder that lists the seed twice"
pass "(a) a tree listing a source id twice, and one listing an object twice: verify reports the folder (exit 1), pull refuses"

# ---- (b) source claims ------------------------------------------------------------
# Runs 11-12 claim the source ids of runs 1-2 (add keeps the first claims).
S=$W/claims.git
fresh "$S"
mkruns --start 11 --count 2 | "$PY" -c '
import json, sys
for i, line in enumerate(sys.stdin):
    b = json.loads(line)
    n = b["run"]["spec"]["sourceNative"]
    n["externalId"] = n["externalId"].replace("-v%d" % (11 + i), "-v%d" % (1 + i))
    print(json.dumps(b))' >claims.jsonl
assert_exit 0 ks --store "$S" add claims.jsonl
RUN1=$(gd "$S" cat-file blob "main:$SOURCE1")
assert_exit 0 ks --store "$S" --json verify
assert_eq 2 "$(jv '[.warnings[] | select(.kind == "source-claimed")] | length')" "(b) one warning per later claim"
assert_contains "$(jv -r --arg p "$SOURCE1" '.warnings[] | select(.kind == "source-claimed" and .path == $p) | .detail')" \
    "claims this source id, which names $RUN1 (the first claim)" "(b) the warning at the id names the first claim"
# The entry of run 1 swapped for run 2's digest: a mismatch naming run 1, which claims it.
printf '100644 %s\t%s\n' "$(gd "$S" rev-parse "main:$SOURCE2")" "$SOURCE1" >swap.info
commit_index_info "$S" swap <swap.info >/dev/null
assert_exit 1 ks --store "$S" --json verify
assert_contains "$(jv -r --arg p "$SOURCE1" '.problems[] | select(.path == $p) | "\(.kind) \(.detail)"')" \
    "source-mismatch the run $(gd "$S" cat-file blob "main:$SOURCE2") does not have this source id; run " \
    "(b) an entry naming another run: a mismatch naming the run that claims it"
# Run 1's id as a file and as a folder holding run 2's entry.
S=$W/file-and-folder.git
fresh "$S"
SUB=$(printf '100644 blob %s\tx\n' "$(gd "$S" rev-parse "main:$SOURCE2")" | gd "$S" mktree)
graft "$S" "$SOURCES" "$("${CRAFT[@]}" tree-plus "$S" "$(gd "$S" rev-parse "main:$SOURCES")" "${SOURCE1##*/}" 40000 "$SUB")"
assert_exit 1 ks --store "$S" --json verify
assert_eq "source-mismatch $SOURCE1/x" "$(jv -r '.problems[] | "\(.kind) \(.path)"')" \
    "(b) an id that is a file and a folder: the entry below it names a run without that id"
pass "(b) source claims: a second claim warns naming the first; an entry naming another run names its claimant; a file and a folder of one id"

# ---- (c) many problems: one report whatever the cores --------------------------------
S=$W/many.git
fresh "$S"
mkruns --start 100 --count 300 >many.jsonl
assert_exit 0 ks --store "$S" add many.jsonl
"$PY" - "$S" >many.info <<'PY'
import subprocess, sys
S = sys.argv[1]
def git(*a, data=None):
    return subprocess.run(["git", "--git-dir", S] + list(a), input=data, capture_output=True, check=True).stdout.decode()
lines = git("ls-tree", "-r", "main", "refs").splitlines()
def under(d): return [l.split("\t", 1) for l in lines if l.split("\t", 1)[1].startswith(d)]
groups, levels, sources = under("refs/groups/"), under("refs/levels/"), under("refs/sources/")
junk = git("hash-object", "-w", "--stdin", data=b'{"metric":"latency","statistic":"median","unit":"ns","value":1}').strip()
other = git("hash-object", "-w", "--stdin", data=b"sha256:" + b"ab" * 32).strip()
gone = "0 " + "0" * 40
out = [gone + "\t" + p for _, p in groups[0:40]]                        # missing-group
out += ["100644 %s\t%s" % (junk, p) for _, p in groups[40:80]]         # group-mismatch
out += [gone + "\t" + p for _, p in levels[0:30]]                       # missing-level
out += ["100644 %s\t%s" % (m.split()[2], p.replace("/source-native/", "/reported/")) for m, p in levels[30:60]]
out += [gone + "\t" + p for _, p in sources[0:30]]                      # missing-source
out += ["100644 %s\t%s" % (other, p) for _, p in sources[30:60]]       # naming no run
out += ["100644 %s\t%s" % (sources[200][0].split()[2], p) for _, p in sources[60:90]]  # naming another run
print("\n".join(out))
PY
commit_index_info "$S" many <many.info >/dev/null
assert_exit 1 ks --store "$S" --json verify
cp "$OUT_FILE" many-1.json
assert_eq "group-mismatch 40 level-mismatch 30 level-unjustified 30 missing-group 40 missing-level 30 missing-source 30 source-mismatch 60" \
    "$(jq -r '[.problems[].kind] | group_by(.) | map("\(.[0]) \(length)") | join(" ")' many-1.json)" \
    "(c) every problem is reported, once"
assert_exit 1 ks --store "$S" --json verify
cmp -s many-1.json "$OUT_FILE" || fail "(c) two runs of verify --json differ"
if have_tool taskset && (($(nproc) > 1)); then
    assert_exit 1 taskset -c 0 "$KISTORE" --no-progress --store "$S" --json verify
    cmp -s many-1.json "$OUT_FILE" || fail "(c) verify on one core reports otherwise than on $(nproc)"
    assert_exit 1 ks --store "$S" verify
    cp "$OUT_FILE" many-1.txt
    assert_exit 1 taskset -c 0 "$KISTORE" --no-progress --store "$S" verify
    cmp -s many-1.txt "$OUT_FILE" || fail "(c) verify's text on one core differs"
    cores="one core and $(nproc)"
else
    cores="one machine's cores (no taskset here)"
fi
pass "(c) 260 problems at once: every one reported, the same report twice and from $cores"

# ---- (d) deflated pack entries of an index blob ------------------------------------
# META: the seed's metadata entry, JSON that deflates. deflated STORE ARGS... :
# a copy of S0 whose objects are loose but META's blob, which lives only in a
# pack written by craft_objects.py pack-idx-deflated ARGS (bytes: META's own
# unless -- OTHER-ID names another blob's).
META=refs/metadata/33/4f/${SEED#sha256:334f}
deflated() {
    local store=$1 blob bytes p
    shift
    fresh "$store"
    blob=$(gd "$store" rev-parse "main:$META")
    bytes=$blob
    if [[ ${1:-} == -- ]]; then bytes=$2; shift 2; fi
    gd "$store" cat-file blob "$bytes" >"$W/meta.bytes"
    mkdir -p "$W/packs" && mv "$store"/objects/pack/* "$W/packs/"
    for p in "$W"/packs/*.pack; do gd "$store" unpack-objects -q <"$p"; done
    rm -rf "$W/packs" "$store/objects/${blob:0:2}/${blob:2}"
    "${CRAFT[@]}" pack-idx-deflated "$store" blob "$blob" "$@" <"$W/meta.bytes"
}
deflated "$W/d.git"
assert_exit 0 ks --store "$W/d.git" --json verify
assert_eq true "$(jv .ok)" "(d) a deflated entry of the right size and bytes: verify clean"
assert_exit 0 ks --store "$W/d.git" --json show "$SEED"
assert_eq "$(gd "$S0" cat-file blob "main:$META" | jq -c .)" "$(jv -c .document.run.metadata)" "(d) show reads the deflated metadata"
META_BYTES=$(wc -c <"$W/meta.bytes")
if have_tool time; then measure=(/usr/bin/time -f %M -o "$W/rss"); else measure=(); fi
damaged() {
    local what=$1 needle=$2
    shift 2
    deflated "$W/d.git" "$@"
    echo 0 >"$W/rss"
    assert_exit 1 "${measure[@]}" "$KISTORE" --no-progress --store "$W/d.git" --json verify
    assert_contains "$(jv -r --arg p "$META" '.problems[] | select(.path == $p) | "\(.kind) \(.detail)"')" \
        "object-corrupt its git object" "$what: reported at $META"
    assert_contains "$OUT" "$needle" "$what: says why"
}
damaged "(d) an entry declaring 1 GiB over a short stream" "cannot be read" --declare $((1 << 30)) --filler 2
# (Under AddressSanitizer libgit2's calloc of the declared size is touched:
# a wider bound, still below what the claim would cost.)
rss=$(tail -1 "$W/rss") rss_limit=$((${KISTORE_SANITIZED:-0} == 1 ? 768 : 256))
((rss < rss_limit * 1024)) || fail "(d) verify of an entry declaring 1 GiB peaked at $((rss / 1024)) MiB"
damaged "(d) a stream shorter than declared" "cannot be read" --declare $((META_BYTES + 100))
damaged "(d) a stream longer than declared" "cannot be read" --declare $((META_BYTES - 10))
damaged "(d) a flipped byte in the stream" "cannot be read" --flip 9
damaged "(d) other bytes under the entry's id" "holds content with another id" -- "$(gd "$S0" rev-parse "main:$SOURCE1")"
pass "(d) deflated index blobs: read when sound; a 1 GiB claim over a short stream (peak ${rss:-?} KiB), short, long, flipped or other bytes: reported, exit 1"

finished_within test_attack_verify_index 60
summary
