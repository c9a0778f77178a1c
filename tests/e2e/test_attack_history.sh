#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153,SC2016
# Attacks from a hostile remote on what the other attack tests leave out, each
# built with stock git plumbing (hash-object, read-tree, update-index,
# commit-tree) and stock zstd, offered to a victim over a path remote:
#   (a) an attestation whose subject is a document the store holds but not a
#       run (a protocol): `kistore add` refuses it, and so must a pull, or the
#       pulled store no longer verifies; the same commit with a run as the
#       subject is taken (the construction is sound);
#   (b) thousands of merge commits, each joining the victim's own tree with a
#       tiny root commit (a few hundred bytes each on the wire): the checks
#       of a merge against a parent must not cost the whole tree every time,
#       or a small pack keeps a pull busy for hours; the pull must end within
#       seconds, refused or taken, with the store byte for byte as it was when
#       refused and verifying when taken;
#   (c) `kistore clone` into a link that leads nowhere, a link to a full
#       folder, a file: refused and left as they were (a refused clone once
#       removed the dangling link); into a link to an empty folder.
# Each refused pull must exit 1, name what it refused and leave the store byte
# for byte as it was (lib/fingerprint.sh).
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs with stdin
# closed, as root or not; everything lives in a temp dir it removes.
# E2E_KEEP_GOING=1 records a failed check and goes on (to see every failure).
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in w
ks() { timeout -k 2 120 "$KISTORE" --no-progress "$@" </dev/null; }
export GIT_AUTHOR_NAME=forger GIT_AUTHOR_EMAIL=forger@example.invalid
export GIT_COMMITTER_NAME=forger GIT_COMMITTER_EMAIL=forger@example.invalid

# forge BASE "PARENT..." MESSAGE EDIT... : a commit in F made with stock git:
# BASE's tree with each EDIT ("path=blob"), the given parents and message.
forge() {
    local base=$1 parents=$2 msg=$3 e p tree
    shift 3
    local idx=$W/forge.index
    GIT_INDEX_FILE=$idx git --git-dir="$F" read-tree "$base"
    for e in "$@"; do
        GIT_INDEX_FILE=$idx git --git-dir="$F" update-index --add --cacheinfo "100644,${e#*=},${e%%=*}"
    done
    tree=$(GIT_INDEX_FILE=$idx git --git-dir="$F" write-tree)
    rm -f "$idx"
    local args=()
    for p in $parents; do args+=(-p "$p"); done
    printf '%s\n' "$msg" | git --git-dir="$F" commit-tree "$tree" "${args[@]}"
}
# blob < BYTES : a blob in F
blob() { git --git-dir="$F" hash-object -w --stdin; }

# The victim V: the Liger sample. The attacker's remote F: a stock-git copy.
assert_exit 0 ks --store V init
assert_exit 0 ks --store V import liger "$DATA/liger-sample.csv"
F=$W/evil.git
git clone -q --bare V "$F"
assert_exit 0 ks --store V remote add evil "$F"
H=$(head_of V)
assert_exit 0 ks --store V --json ls --kind BenchmarkRun
RUN=$(jv '.documents[0].digest')
assert_exit 0 ks --store V --json ls --kind BenchmarkProtocol
PROTO=$(jv '.documents[0].digest')
[[ $RUN == sha256:* && $PROTO == sha256:* ]] || fail "setup: no run or protocol digest ($RUN, $PROTO)"
pass "setup: the victim holds the Liger sample; the remote is a stock-git copy"

# ---- (a) an attestation of a protocol ----------------------------------------
# attestation SUBJECT : a commit on H adding an attestation of SUBJECT, its
# frame made by stock zstd (checksum and content size on), its index line
# (format 3: the line keyed by subject and attestation in the attestations
# file its digits lead to, set_line).
attestation() {
    local subject=$1 doc digest hex frame entry
    doc=$(printf '{"apiVersion":"kernelindex.dev/v1alpha1","kind":"Attestation","spec":{"author":"forger","body":"looks fine","subject":"%s","type":"note"}}' "$subject")
    printf '%s' "$doc" >att.json
    "$KISTORE" canon att.json >att.jcs
    digest=$("$KISTORE" digest att.json | cut -d' ' -f1)
    hex=${digest#sha256:}
    [[ $(sha256sum <att.jcs | cut -c1-64) == "$hex" ]] || fail "attestation: kistore digest and sha256sum disagree"
    zstd -q -f --check -o att.zst att.jcs
    frame=$(blob <att.zst)
    entry=$(INDEX_REF=$H set_line "$F" attestations "${subject#sha256:}$hex" \
        "{\"@key\":\"${subject#sha256:}$hex\",\"author\":\"forger\",\"type\":\"note\"}")
    [[ $entry == 100644\ * ]] || fail "attestation: no attestations file: $entry"
    entry=${entry#100644 }
    forge "$H" "$H" "attest: a note on ${subject:7:8}

Kistore-Op: attest" "objects/sha256/$(fan "$hex")=$frame" "${entry#*$'\t'}=${entry%%$'\t'*}"
}

# add refuses such an attestation: the local rule the remote must meet too.
before=$(store_fingerprint V)
"$KISTORE" canon <<<"{\"apiVersion\":\"kernelindex.dev/v1alpha1\",\"kind\":\"Attestation\",\"spec\":{\"author\":\"forger\",\"body\":\"looks fine\",\"subject\":\"$PROTO\",\"type\":\"note\"}}" >att-proto.json
assert_exit 2 ks --store V add att-proto.json
assert_contains "$ERR" "expected a run in the store" "add: an attestation of a protocol is refused"
assert_store_unchanged "$before" V "add of an attestation of a protocol"

C=$(attestation "$PROTO")
git --git-dir="$F" update-ref refs/heads/main "$C"
assert_exit_unchanged 1 V "pull of an attestation of a protocol" ks --store V pull evil
assert_contains "$ERR" "commit ${C:0:12}" "pull: names the commit"
assert_contains "$ERR" "${PROTO#sha256:}" "pull: names the subject"
assert_contains "$ERR" "not a run" "pull: says the subject is not a run"
assert_exit 1 ks clone "$F" "$W/clone-a"
[[ ! -e $W/clone-a ]] || fail "a refused clone left its folder"
pass "(a) an attestation whose subject is a protocol: add exits 2, pull and clone exit 1 naming it, store unchanged"

C=$(attestation "$RUN")
git --git-dir="$F" update-ref refs/heads/main "$C"
assert_exit 0 ks --store V pull evil
assert_exit 0 ks --store V verify
assert_eq "$C" "$(head_of V)" "the honest attestation fast-forwards"
pass "(a) the same construction with a run as the subject is taken and verifies"
H=$(head_of V)

# ---- (b) thousands of cheap merges -------------------------------------------
# A bigger victim, so that its tree costs something to walk: 3,000 more runs.
mkruns --count 3000 --format jsonl --run-only --no-metadata >more.jsonl
assert_exit 0 ks --store V add more.jsonl
git --git-dir="$F" fetch -q "$W/V" main:main
H=$(head_of V)
# merges TIP N MODE : N merge commits on TIP, written as loose objects by a
# few lines of Python: each has the tip's tree and two parents, the previous
# commit and a root commit whose tree holds FORMAT alone (MODE "same": one
# such root for all; "distinct": one each). Prints the last one.
merges() {
    "$PY" - "$F" "$1" "$2" "$3" <<'PY'
import hashlib, os, subprocess, sys, zlib
git, tip, n, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
def put(kind, data):
    body = b"%s %d\0" % (kind, len(data)) + data
    oid = hashlib.sha1(body).hexdigest()
    d = os.path.join(git, "objects", oid[:2]); os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, oid[2:]), "wb") as f: f.write(zlib.compress(body, 1))
    return oid
tree = subprocess.check_output(["git", "--git-dir", git, "rev-parse", tip + "^{tree}"]).decode().strip()
fmt = put(b"blob", b"kistore 3\n")
small = put(b"tree", b"100644 FORMAT\0" + bytes.fromhex(fmt))
who = b"forger <forger@example.invalid> %d +0000"
def commit(tree, parents, msg, t):
    return put(b"commit", b"tree %s\n" % tree.encode() + b"".join(b"parent %s\n" % p.encode() for p in parents)
               + b"author " + who % t + b"\ncommitter " + who % t + b"\n\n" + msg)
root = commit(small, [], b"add: nothing\n\nKistore-Op: add\n", 1000000000)
prev = tip
for i in range(n):
    if mode == "distinct":
        root = commit(small, [], b"add: nothing %d\n\nKistore-Op: add\n" % i, 1000000000 + i)
    prev = commit(tree, [prev, root], b"merge: %d\n\nKistore-Op: merge\n" % i, 1800000000 + i)
print(prev)
PY
}
for mode in same distinct; do
    rm -rf Vb && cp -a V Vb
    M=$(merges "$H" 3000 "$mode")
    git --git-dir="$F" update-ref refs/heads/main "$M"
    start=$SECONDS
    assert_exit 0 ks --store Vb pull evil
    took=$((SECONDS - start))
    ((took <= 60)) || fail "(b) $mode: a pull of 3,000 merges took ${took} s"
    assert_eq "$M" "$(head_of Vb)" "(b) $mode: the merges are taken (nothing in them breaks a rule)"
    start=$SECONDS
    assert_exit 0 ks --store Vb verify
    took=$((SECONDS - start))
    ((took <= 60)) || fail "(b) $mode: verify of 3,000 merges took ${took} s"
    pass "(b) 3,000 merges joining the victim's tree with a tiny root commit ($mode): pull and verify end within a minute"
done
git --git-dir="$F" update-ref refs/heads/main "$H"

# ---- (c) clone into what is already there -----------------------------------
# A link that leads nowhere, a link to a folder that is not empty, a file:
# each refused (exit 2) and left as it was; a link to an empty folder is
# cloned into, and emptied again when the clone is refused.
ln -s "$W/nowhere" dangling
mkdir full && echo keep >full/f && ln -s full to-full
echo keep >a-file
for target in dangling to-full a-file; do
    before=$(ls -la --time-style=+ "$target"; cat "$target" 2>/dev/null || true)
    assert_exit 2 ks clone "$F" "$target"
    assert_contains "$ERR" "already exists" "clone into $target: says why"
    assert_eq "$before" "$(ls -la --time-style=+ "$target"; cat "$target" 2>/dev/null || true)" "clone into $target: left as it was"
done
[[ -L dangling && ! -e nowhere ]] || fail "the dangling link was touched"
mkdir empty && ln -s empty to-empty
assert_exit 0 ks clone "$F" to-empty
assert_exit 0 ks --store to-empty verify
[[ -L to-empty ]] || fail "the link to an empty folder was replaced"
mkdir empty2 && ln -s empty2 to-empty2
git --git-dir="$F" update-ref refs/heads/main "$(attestation "$PROTO")"
assert_exit 1 ks clone "$F" to-empty2
[[ -L to-empty2 && -d empty2 && -z $(ls -A empty2) ]] || fail "a refused clone into a link to an empty folder left it changed"
# Into folders not there yet: the leading ones are made (and left, as git clone leaves them),
# and a refused clone removes only the folder it made itself.
assert_exit 1 ks clone "$F" deep/er/store
[[ -d deep/er && ! -e deep/er/store ]] || fail "a refused clone into deep/er/store: expected deep/er left and no store"
git --git-dir="$F" update-ref refs/heads/main "$H"
assert_exit 0 ks clone "$F" deep/er/store
assert_exit 0 ks --store deep/er/store verify
pass "(c) clone into a dangling link, a link to a full folder or a file: exit 2, each left as it was; into a link to an empty folder: cloned, or emptied again when refused; into new nested folders: only its own folder removed when refused"

summary
