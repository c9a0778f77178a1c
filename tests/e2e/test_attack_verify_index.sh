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
#   (a) a tree listing one source file twice (the second another file's
#       blob), one listing an object path twice, and a source file listing
#       one key twice (format 3's lines; the second naming another run):
#       reported by verify and refused by pull;
#   (b) source claims: two runs claiming one source id (a warning naming the
#       first claim), a claim line naming a run whose id it is not (naming
#       the run that claims it), a digit of refs/sources/ that is a file and
#       a folder;
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
# Format 3: the claims of runs 1 and 2 are lines keyed by sha256(source NUL
# externalId); SOURCE1 and SOURCE2 are the files that hold them.
claim_key() { printf 'liger-kernel-bench\0%s' "$1" | sha256sum | cut -c1-64; }
KEY1=$(claim_key "$(sed -n 1p r3.jsonl | jq -r .run.spec.sourceNative.externalId)")
KEY2=$(claim_key "$(sed -n 2p r3.jsonl | jq -r .run.spec.sourceNative.externalId)")
SOURCE1=$(index_file "$S0" sources "$KEY1")
SOURCE2=$(index_file "$S0" sources "$KEY2")
SOURCES=refs/sources
[[ $SOURCE1 != "$SOURCE2" && $SOURCE1 == "$SOURCES"/? && $SOURCE2 == "$SOURCES"/? ]] ||
    fail "setup: the claims of runs 1 and 2 are expected in two files of $SOURCES: $SOURCE1 $SOURCE2"

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
# Format 3's own form of an id listed twice: the file of run 1's claim lists
# its key twice, the second line naming run 2.
fresh "$S"
LINE1=$(index_line "$S" sources "$KEY1")
LINE1B=$(jq -c --arg r "$(index_line "$S" sources "$KEY2" | jq -r .run)" '.run = $r' <<<"$LINE1")
"$PY" - "$S" "$SOURCE1" "$LINE1" "$LINE1B" >twice.info <<'PY'
import subprocess, sys
S, path, line, second = sys.argv[1:]
text = subprocess.run(["git", "--git-dir", S, "cat-file", "blob", "main:" + path], capture_output=True, text=True, check=True).stdout
out = "".join(l + "\n" + (second + "\n" if l == line else "") for l in text.splitlines())
blob = subprocess.run(["git", "--git-dir", S, "hash-object", "-w", "--stdin"], input=out, capture_output=True, text=True, check=True).stdout.strip()
print("100644 %s\t%s" % (blob, path))
PY
commit_index_info "$S" "add: a key twice" <twice.info >/dev/null
assert_exit 1 ks --store "$S" --json verify
assert_contains "$(jv -r --arg p "$SOURCE1" '.problems[] | select(.path == $p) | "\(.kind) \(.detail)"')" \
    "layout $SOURCE1:2: /@key: expected each key once, found $KEY1 again" "(a) verify reports the file that lists a key twice"
fresh "$W/puller"
assert_exit_unchanged 1 "$W/puller" "(a) the refused pull of a key twice" ks --store "$W/puller" pull "$S"
assert_contains "$ERR" "$SOURCE1" "(a) pull names the file"
assert_contains "$ERR" "expected each key once" "(a) pull refuses a key twice"
pass "(a) a tree listing a source file twice, one listing an object twice, a file listing a key twice: verify reports it (exit 1), pull refuses"

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
RUN1=$(index_line "$S" sources "$KEY1" | jq -r .run)
RUN2=$(index_line "$S" sources "$KEY2" | jq -r .run)
AT1="$SOURCE1 @$KEY1"
assert_exit 0 ks --store "$S" --json verify
assert_eq 2 "$(jv '[.warnings[] | select(.kind == "source-claimed")] | length')" "(b) one warning per later claim"
assert_contains "$(jv -r --arg p "$AT1" '.warnings[] | select(.kind == "source-claimed" and .path == $p) | .detail')" \
    "claims this source id, which names $RUN1 (the first claim)" "(b) the warning at the id names the first claim"
# The claim line of run 1's id edited to name run 2: a mismatch naming run 1, which claims it.
set_line "$S" sources "$KEY1" "$(index_line "$S" sources "$KEY1" | jq -c --arg r "$RUN2" '.run = $r')" >swap.info
commit_index_info "$S" swap <swap.info >/dev/null
assert_exit 1 ks --store "$S" --json verify
assert_contains "$(jv -r --arg p "$AT1" '.problems[] | select(.path == $p) | "\(.kind) \(.detail)"')" \
    "source-mismatch the run $RUN2 does not have this source id; run " \
    "(b) a line naming another run: a mismatch naming the run that claims it"
# Format 2's id that is both a file and a folder has no meaning in format 3
# (an id is a line); its nearest: the digit of run 1's claim file listed both
# as a file and as a folder, the folder holding run 1's claim line (at its
# next digit) naming run 2. The key is then in two files, which only a trie
# of the wrong shape can hold: reported as the shape of refs/sources/.
S=$W/file-and-folder.git
fresh "$S"
D1=${KEY1:1:1}
SUB=$(printf '100644 blob %s\t%s\n' "$(index_line "$S" sources "$KEY1" | jq -c --arg r "$RUN2" '.run = $r' | gd "$S" hash-object -w --stdin)" "$D1" | gd "$S" mktree)
graft "$S" "$SOURCES" "$("${CRAFT[@]}" tree-plus "$S" "$(gd "$S" rev-parse "main:$SOURCES")" "${SOURCE1##*/}" 40000 "$SUB")"
assert_exit 1 ks --store "$S" --json verify
assert_contains "$(jv -r --arg p "$SOURCE1" '.problems[] | select(.path == $p) | "\(.kind) \(.detail)"')" \
    "layout expected a file or a folder, found both" "(b) a digit that is a file and a folder: reported at its path"
fresh "$W/puller"
assert_exit_unchanged 1 "$W/puller" "(b) the refused pull of a file and a folder" ks --store "$W/puller" pull "$S"
assert_contains "$ERR" "$SOURCE1" "(b) pull names the digit that is a file and a folder"
pass "(b) source claims: a second claim warns naming the first; a line naming another run names its claimant; a digit that is a file and a folder"

# ---- (c) many problems: one report whatever the cores --------------------------------
S=$W/many.git
fresh "$S"
mkruns --start 100 --count 300 >many.jsonl
assert_exit 0 ks --store "$S" add many.jsonl
# Format 3: lines edited in their files (a file left with no line goes; no
# family crosses 256 lines either way, so the trie's shape holds). Runs at
# their default level have no level line, so format 2's removed and moved
# level entries become level lines added: 30 that no signed rerun gives (the
# evidence another run), 30 for a run that is not in the store.
"$PY" - "$S" >many.info <<'PY'
import hashlib, json, subprocess, sys
S = sys.argv[1]
def git(*a, data=None):
    return subprocess.run(["git", "--git-dir", S] + list(a), input=data, capture_output=True, check=True).stdout.decode()
files = {}  # path -> [line]
for p in git("ls-tree", "-r", "--name-only", "main", "refs").split("\n"):
    if p:
        files[p] = git("cat-file", "blob", "main:" + p).splitlines()
def lines(family):  # [(path, index)] in key order
    return sorted(((p, i) for p in files if p.startswith("refs/%s/" % family) for i in range(len(files[p]))),
                  key=lambda pi: json.loads(files[pi[0]][pi[1]])["@key"])
changed = set()
def edit(pi, f):
    changed.add(pi[0])
    o = json.loads(files[pi[0]][pi[1]])
    files[pi[0]][pi[1]] = None if f is None else json.dumps(f(o), separators=(",", ":"), ensure_ascii=False)
groups, sources = lines("groups"), lines("sources")
assert len(groups) > 296 and len(sources) > 286 and not lines("levels"), (len(groups), len(sources))
def value(o): o["value"] = 1; return o
for pi in groups[0:40]: edit(pi, None)                                  # missing-group
for pi in groups[40:80]: edit(pi, value)                                # group-mismatch
for pi in sources[0:30]: edit(pi, None)                                 # missing-source
def other(o): o["run"] = "sha256:" + "ab" * 32; return o
for pi in sources[30:60]: edit(pi, other)                               # naming no run
another = json.loads(files[sources[200][0]][sources[200][1]])["run"]
def elsewhere(o): o["run"] = another; return o
for pi in sources[60:90]: edit(pi, elsewhere)                           # naming another run
runs = [json.loads(files[p][i])["@key"][64:] for p, i in groups[80:110]]
levels = {}
for r in runs:                                                          # level-unjustified
    levels[r] = {"@key": r, "evidence": another, "level": "reproduced"}
for n in range(30):                                                     # dangling-ref
    k = hashlib.sha256(b"no such run %d" % n).hexdigest()
    levels[k] = {"@key": k, "evidence": another, "level": "disputed"}
for k in sorted(levels):
    files.setdefault("refs/levels/" + k[0], []).append(json.dumps(levels[k], separators=(",", ":")))
    changed.add("refs/levels/" + k[0])
gone = "0 " + "0" * 40
for p in sorted(changed):
    kept = [l for l in files[p] if l is not None]
    if not kept:
        print(gone + "\t" + p)
    else:
        print("100644 %s\t%s" % (git("hash-object", "-w", "--stdin", data="".join(l + "\n" for l in kept).encode()).strip(), p))
PY
commit_index_info "$S" many <many.info >/dev/null
assert_exit 1 ks --store "$S" --json verify
cp "$OUT_FILE" many-1.json
assert_eq "dangling-ref 30 group-mismatch 40 level-unjustified 30 missing-group 40 missing-source 30 source-mismatch 60" \
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
pass "(c) 230 problems at once: every one reported, the same report twice and from $cores"

# ---- (d) deflated pack entries of an index blob ------------------------------------
# META: the file of the seed's metadata line, JSON that deflates. deflated STORE ARGS... :
# a copy of S0 whose objects are loose but META's blob, which lives only in a
# pack written by craft_objects.py pack-idx-deflated ARGS (bytes: META's own
# unless -- OTHER-ID names another blob's).
META=$(index_file "$S0" metadata "${SEED#sha256:}")
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
assert_eq "$(index_line "$S0" metadata "${SEED#sha256:}" | jq -c .metadata)" "$(jv -c .document.run.metadata)" "(d) show reads the deflated metadata"
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
