#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153,SC2016
# Attacks from a hostile remote, each built here with stock git or a few lines
# of Python (lib/craft_objects.py), served over a path remote and over git://
# (git daemon, or lib/hostile_git_daemon.py where git itself could not serve
# it). For each, `kistore pull` must exit 1 within seconds, name what it
# refused (commit, path), and leave the store's git directory byte for byte as
# it was (lib/fingerprint.sh: no pack, loose object, ref, reflog, config or
# temporary file); `kistore clone` of the same remote must exit 1 and leave no
# folder. The attacks:
#   (a) other bytes under the id of the puller's own head tree (a loose object
#       written by hand), reached from a new commit;
#   (b) a new document whose frame hashes to another digest, and a loose blob
#       whose bytes do not hash to its git id;
#   (c) a tree 100,000 levels deep;
#   (d) a document with mode 100755, and one with mode 120000;
#   (e) a pack entry declaring 1 TiB (in the remote's own pack, and sent by
#       a hostile server), a truncated pack and a corrupt one: kistore's peak
#       memory stays small.
# (A rewritten history is refused in test_sync.sh.) Afterwards the store still
# verifies and ranks as before.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs with stdin
# closed, as root or not; everything lives in a temp dir it removes.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

CRAFT=("$PY" "$here/lib/craft_objects.py")
BASE=$SERVERS_DIR/repos
work_in w "$BASE"
V=$W/victim
RUN=sha256:334face30acaee76778d58ce984b0b0c0d1e0749650f88ab778b4563c58241a0
objpath() { local h=${1#sha256:}; printf 'objects/sha256/%s/%s/%s' "${h:0:2}" "${h:2:2}" "${h:4}"; }
# kistore, bounded in time; /usr/bin/time (Debian's `time`) writes its peak
# resident size (KiB) to $W/rss; without it, under a 1 GiB address-space
# limit instead (rss then reads 0), except under AddressSanitizer, which
# reserves terabytes of address space and cannot start under `ulimit -v`:
# there only the time is bounded. scripts/deps.sh installs `time`, and where
# scripts/test.sh runs this test, its absence fails it (have_tool).
if have_tool time; then
    kst() { timeout -k 2 60 /usr/bin/time -f '%M' -o "$W/rss" "$KISTORE" --no-progress "$@" </dev/null; }
elif [[ ${KISTORE_SANITIZED:-0} == 1 ]]; then
    kst() { echo 0 >"$W/rss"; timeout -k 2 60 "$KISTORE" --no-progress "$@" </dev/null; }
else
    kst() { echo 0 >"$W/rss"; (ulimit -v 1048576 && timeout -k 2 60 "$KISTORE" --no-progress "$@" </dev/null); }
fi

start_git_daemon "$BASE"

# The victim's store: the seed run and one more, in two commits; pushed to
# origin, from which each attack starts.
assert_exit 0 ks init "$V"
assert_exit 0 ks --store "$V" add "$FX"
mkruns --start 1 --count 1 >"$W/v1.jsonl"
assert_exit 0 ks --store "$V" add "$W/v1.jsonl"
git init -q --bare -b main "$BASE/origin.git"
assert_exit 0 ks --store "$V" remote add origin "$BASE/origin.git"
assert_exit 0 ks --store "$V" push origin
H=$(head_of "$V")
HEAD_TREE=$(gd "$V" rev-parse 'main^{tree}')
assert_exit 0 ks --store "$V" rank "$RUN"
RANK_BEFORE=$OUT
# A document the victim does not have, and its frame, from a scratch store.
mkruns --start 5 --count 1 >"$W/v5.jsonl"
V5=$(mkruns --start 5 --count 1 --digests)
V5_PATH=$(objpath "$V5")
assert_exit 0 ks init "$W/scratch"
assert_exit 0 ks --store "$W/scratch" add "$W/v5.jsonl"
V5_BLOB=$(gd "$W/scratch" rev-parse "main:$V5_PATH")
gd "$W/scratch" cat-file blob "$V5_BLOB" >"$W/v5.frame"
pass "victim store with two runs; origin; a third document elsewhere"

# attack_repo NAME : a fresh bare copy of origin, $BASE/NAME.git (printed).
attack_repo() {
    rm -rf "$BASE/$1.git"
    cp -a "$BASE/origin.git" "$BASE/$1.git"
    printf '%s\n' "$BASE/$1.git"
}

# refused URL WHAT NEEDLE... : the victim pulls URL (as remote "atk"): exit 1
# within 10 s, stderr holds "refused" and every NEEDLE, peak memory under
# 256 MiB, the store unchanged; then a clone of URL exits 1 and leaves nothing.
refused() {
    local url=$1 what=$2 before t0 needle
    shift 2
    ks --store "$V" remote remove atk >/dev/null 2>&1 || true
    assert_exit 0 ks --store "$V" remote add atk "$url"
    before=$(store_fingerprint "$V")
    t0=$SECONDS
    assert_exit 1 kst --store "$V" pull atk
    ((SECONDS - t0 <= 10)) || fail "$what ($url): took $((SECONDS - t0)) s"
    assert_contains "$ERR" "refused" "$what ($url): says refused"
    for needle in "$@"; do assert_contains "$ERR" "$needle" "$what ($url): names $needle"; done
    local rss
    rss=$(tail -1 "$W/rss")
    ((rss < 262144)) || fail "$what ($url): peak memory ${rss} KiB"
    assert_store_unchanged "$before" "$V" "$what ($url)"
    rm -rf "$W/cloned"
    assert_exit 1 kst clone "$url" "$W/cloned"
    [[ ! -e $W/cloned ]] || fail "$what ($url): a refused clone left $W/cloned"
    pass "$what: refused over $url (${rss} KiB peak), the store unchanged, the clone left nothing"
}

# hostile_server NAME ARGS... : lib/hostile_git_daemon.py with ARGS; sets
# HOSTILE_URL=git://127.0.0.1:P/NAME.git.
hostile_server() {
    local name=$1 dir=$SERVERS_DIR/hostile-$1 i
    shift
    mkdir -p "$dir"
    _servers_spawn "hostile-$name" "$dir/log" "$PY" "$here/lib/hostile_git_daemon.py" --port-file "$dir/port" "$@"
    for ((i = 0; i < 100; i++)); do [[ -s $dir/port ]] && break; sleep 0.05; done
    [[ -s $dir/port ]] || fail "hostile server $name did not start: $(cat "$dir/log")"
    HOSTILE_URL=git://127.0.0.1:$(cat "$dir/port")/$name.git
}

# ---------------------------------------------------------------------------
# (a) Other bytes under the id of the victim's head tree. The remote's objects
# are all loose (no pack holds the real tree), the head tree's file holds the
# bytes of the tree before it, and a new commit reaches it at "zz". kistore
# never reads the remote's copy of an object the store has: the forgery
# cannot replace the store's tree, and the new commit is refused for its path.
R=$(attack_repo forged-tree)
mkdir -p "$W/packs"
find "$R/objects/pack" -type f -exec mv -t "$W/packs/" {} +  # none when receive-pack kept them loose
for p in "$W"/packs/*.pack; do [[ -e $p ]] || continue; gd "$R" unpack-objects -q <"$p"; done
rm -rf "$W/packs"
ROOT=$("${CRAFT[@]}" tree-plus "$R" "$HEAD_TREE" zz 40000 "$HEAD_TREE")
gd "$V" cat-file tree 'main~1^{tree}' | "${CRAFT[@]}" loose "$R" tree --as "$HEAD_TREE" >/dev/null
X=$("${CRAFT[@]}" commit "$R" "$ROOT" --parent "$H" --message "add: nothing to see")
gd "$R" update-ref refs/heads/main "$X"
[[ $(gd "$R" cat-file tree "$HEAD_TREE" | sha1sum) != $(gd "$V" cat-file tree "$HEAD_TREE" | sha1sum) ]] ||
    fail "(a): the forged tree is not forged"
refused "$R" "(a) forged head tree" "${X:0:12}" "zz/"
refused "$GIT_DAEMON_URL/forged-tree.git" "(a) forged head tree" "${X:0:12}" "zz/"
assert_exit 0 ks --store "$V" rank "$RUN"
assert_eq "$RANK_BEFORE" "$OUT" "(a): rank shows what it showed"

# (b) A new document path holding another document's frame (its bytes hash to
# another digest), with stock git.
R=$(attack_repo wrong-frame)
SEED_BLOB=$(gd "$R" rev-parse "main:$(objpath "$RUN")")
X=$(commit_with "$R" "add: forged object" "100644,$SEED_BLOB,$V5_PATH")
refused "$R" "(b) a frame under another digest" object-hash-mismatch "$V5_PATH" "${X:0:12}"
refused "$GIT_DAEMON_URL/wrong-frame.git" "(b) a frame under another digest" object-hash-mismatch "$V5_PATH" "${X:0:12}"

# (b) A loose blob whose bytes do not hash to its id: the id of the new
# document's real frame, other bytes in the file. Over a path kistore rehashes
# and refuses it; git daemon sends the bytes it has, under their own id, so
# the blob the tree names never arrives.
R=$(attack_repo forged-blob)
printf 'not the frame its id names' | "${CRAFT[@]}" loose "$R" blob --as "$V5_BLOB" >/dev/null
X=$(commit_with "$R" "add: forged blob" "100644,$V5_BLOB,$V5_PATH")
refused "$R" "(b) a blob whose bytes have another id" "holds bytes whose id is" "$V5_PATH" "${X:0:12}"
refused "$GIT_DAEMON_URL/forged-blob.git" "(b) a blob whose bytes have another id" "did not send the blob $V5_BLOB" "$V5_PATH" "${X:0:12}"

# ---------------------------------------------------------------------------
# (c) A tree 100,000 levels deep, reached from a new commit at "zz". git
# daemon would recurse through it to serve it; the hostile server sends it.
R=$(attack_repo deep)
TOP=$("${CRAFT[@]}" deep "$R" 100000)
ROOT=$("${CRAFT[@]}" tree-plus "$R" "$HEAD_TREE" zz 40000 "$TOP")
X=$("${CRAFT[@]}" commit "$R" "$ROOT" --parent "$H" --message "add: deep")
gd "$R" update-ref refs/heads/main "$X"
refused "$R" "(c) a tree 100,000 levels deep" "17 folders deep; the limit is 16" "zz/d/d/d" "${X:0:12}"
X=$("${CRAFT[@]}" pack-deep "$W/deep.pack" 100000 --parent "$H")
hostile_server deep --ref "$X" --pack "$W/deep.pack"
refused "$HOSTILE_URL" "(c) a tree 100,000 levels deep" "17 folders deep; the limit is 16" "zz/d/d/d" "${X:0:12}"

# ---------------------------------------------------------------------------
# (d) Modes: the new document as an executable, and as a symbolic link.
R=$(attack_repo mode-exec)
gd "$R" hash-object -w "$W/v5.frame" >/dev/null
X=$(commit_with "$R" "add: executable" "100755,$V5_BLOB,$V5_PATH")
refused "$R" "(d) mode 100755" "mode 100755" "$V5_PATH" "${X:0:12}"
refused "$GIT_DAEMON_URL/mode-exec.git" "(d) mode 100755" "mode 100755" "$V5_PATH" "${X:0:12}"
R=$(attack_repo mode-link)
gd "$R" hash-object -w "$W/v5.frame" >/dev/null
X=$(commit_with "$R" "add: link" "120000,$V5_BLOB,$V5_PATH")
refused "$R" "(d) mode 120000" "mode 120000" "$V5_PATH" "${X:0:12}"
refused "$GIT_DAEMON_URL/mode-link.git" "(d) mode 120000" "mode 120000" "$V5_PATH" "${X:0:12}"

# ---------------------------------------------------------------------------
# (e) A pack entry that declares 1 TiB: in the remote's own pack (with an
# index, so that it is the new document's blob), and sent by a server.
R=$(attack_repo huge-entry)
"${CRAFT[@]}" pack-idx-huge "$R" "$V5_BLOB"
X=$(commit_with "$R" "add: huge" "100644,$V5_BLOB,$V5_PATH")
refused "$R" "(e) a pack entry declaring 1 TiB" "is 1099511627776 bytes; the limit for a blob" "$V5_PATH" "${X:0:12}"
ID=$("${CRAFT[@]}" pack-huge "$W/huge.pack")
hostile_server huge --ref "$ID" --pack "$W/huge.pack"
refused "$HOSTILE_URL" "(e) a pack entry declaring 1 TiB" "declares 1099511627776"

# A truncated pack and a corrupt one: a real pack of a good new commit, cut
# in half, and with a byte flipped inside an entry.
assert_exit 0 ks clone "$BASE/origin.git" "$W/writer"
assert_exit 0 ks --store "$W/writer" add "$W/v5.jsonl"
GOOD=$(head_of "$W/writer")
printf '%s\n^%s\n' "$GOOD" "$H" | gd "$W/writer" pack-objects --revs -q --stdout >"$W/good.pack"
size=$(stat -c %s "$W/good.pack")
head -c $((size / 2)) "$W/good.pack" >"$W/truncated.pack"
hostile_server truncated --ref "$GOOD" --pack "$W/truncated.pack"
refused "$HOSTILE_URL" "(e) a truncated pack" "pack ends"
cp "$W/good.pack" "$W/corrupt.pack"
printf '\xff\xff\xff\xff' | dd of="$W/corrupt.pack" bs=1 seek=$((size / 2)) conv=notrunc status=none
hostile_server corrupt --ref "$GOOD" --pack "$W/corrupt.pack"
refused "$HOSTILE_URL" "(e) a corrupt pack" "pack"
# A pull killed while it receives (the server stops sending after NAK)
# leaves its quarantine behind; the next pull removes it.
hostile_server hang --ref "$GOOD" --pack "$W/good.pack" --hang
hang_url=$HOSTILE_URL
assert_exit 0 ks --store "$V" remote add hang "$HOSTILE_URL"
hostile_server truncated-again --ref "$GOOD" --pack "$W/truncated.pack"
assert_exit 0 ks --store "$V" remote add bad "$HOSTILE_URL"
before=$(store_fingerprint "$V")
"$KISTORE" --no-progress --store "$V" pull hang </dev/null >/dev/null 2>&1 &
puller=$!
for ((i = 0; i < 100; i++)); do
    [[ -n $(find "$V/objects" -maxdepth 1 -name 'incoming-*') ]] && break
    sleep 0.05
done
sleep 0.3
kill -9 "$puller"
wait "$puller" 2>/dev/null || true
[[ -n $(find "$V/objects" -maxdepth 1 -name "incoming-$puller-*") ]] || fail "the killed pull left no quarantine to clean"
assert_exit 1 kst --store "$V" pull bad
[[ -z $(find "$V/objects" -maxdepth 1 -name 'incoming-*') ]] || fail "the next pull did not remove the dead pull's quarantine"
assert_store_unchanged "$before" "$V" "a pull killed in the middle, then another"
pass "a pull killed while receiving leaves a quarantine that the next pull removes"

# A clone into a folder that was there, empty, is made in a folder of its own inside it and moved
# up only when whole: interrupted, it takes away only what it made, and a file put there meanwhile
# stays (emptying the folder took it too, and an interruption left a half store there).
mkdir "$W/into-empty"
"$KISTORE" --no-progress clone "$hang_url" "$W/into-empty" </dev/null >/dev/null 2>"$W/into-empty.err" &
cloner=$!
for ((i = 0; i < 100; i++)); do
    [[ -n $(find "$W/into-empty" -maxdepth 3 -name 'incoming-*') ]] && break
    sleep 0.05
done
[[ -n $(find "$W/into-empty" -maxdepth 1 -name '.kistore-clone-*') ]] || fail "the clone is not made in a folder of its own"
echo mine >"$W/into-empty/notes.txt"
kill -TERM "$cloner"
rc=0
wait "$cloner" || rc=$?
assert_eq 130 "$rc" "a clone into an empty folder, interrupted: exit 130"
assert_eq "notes.txt" "$(ls -A "$W/into-empty")" "interrupted: what the clone made is gone, the file put there stays"
pass "a clone into an empty folder, interrupted, takes away only what it made"

# The good pack itself is taken (the server is not what fails), and so is a
# thin pack of it, whose deltas name objects only the victim has.
printf '%s\n^%s\n' "$GOOD" "$H" | gd "$W/writer" pack-objects --revs --thin -q --stdout >"$W/thin.pack"
rm -rf "$W/empty.git" && git init -q --bare "$W/empty.git"
gd "$W/empty.git" index-pack --stdin <"$W/thin.pack" >/dev/null 2>&1 && fail "the thin pack is not thin"
for kind in good thin; do
    rm -rf "$W/victim-$kind" && cp -a "$V" "$W/victim-$kind"
    hostile_server "$kind" --ref "$GOOD" --pack "$W/$kind.pack"
    ks --store "$W/victim-$kind" remote remove atk >/dev/null 2>&1 || true
    assert_exit 0 ks --store "$W/victim-$kind" remote add atk "$HOSTILE_URL"
    assert_exit 0 ks --store "$W/victim-$kind" --json pull atk
    assert_contains "$OUT" '"result":"fast-forward"' "the $kind pack from the hostile server: taken"
    assert_eq "$GOOD" "$(head_of "$W/victim-$kind")" "the $kind pack: the victim has the commit"
    assert_exit 0 ks --store "$W/victim-$kind" verify
    gd "$W/victim-$kind" fsck --strict --no-progress >/dev/null 2>&1 || fail "git fsck after the $kind pack"
done
pass "the same server's good pack is taken, and a thin pack of it (bases from the store)"

# ---------------------------------------------------------------------------
# The same trees committed straight into a copy of the store (as stock git
# would let anyone do): verify reports them, quickly, without crashing.
# verify_finds WHAT KIND PATH NEEDLE : verify of $W/tampered exits 1 within
# 5 s with a problem KIND at PATH whose detail holds NEEDLE, and changes nothing.
verify_finds() {
    local before t0=$SECONDS
    before=$(store_fingerprint "$W/tampered")
    assert_exit 1 kst --store "$W/tampered" --json verify
    ((SECONDS - t0 <= 5)) || fail "$1: verify took $((SECONDS - t0)) s"
    assert_eq "true" "$(jv --arg k "$2" --arg p "$3" --arg n "$4" \
        '[.problems[] | select(.kind == $k and (.path | startswith($p)) and (.detail | contains($n)))] | length > 0')" \
        "$1: verify reports $2 at $3"
    assert_store_unchanged "$before" "$W/tampered" "$1: verify"
    pass "$1: verify reports $2 at $3"
}
rm -rf "$W/tampered"
cp -a "$V" "$W/tampered"
gd "$W/tampered" hash-object -w "$W/v5.frame" >/dev/null
commit_with "$W/tampered" "add: executable" "100755,$V5_BLOB,$V5_PATH" >/dev/null
verify_finds "a document with mode 100755 in the store" layout "$V5_PATH" "mode 100755"
TOP=$("${CRAFT[@]}" deep "$W/tampered" 100000)
ROOT=$("${CRAFT[@]}" tree-plus "$W/tampered" "$(gd "$W/tampered" rev-parse 'main^{tree}')" zz 40000 "$TOP")
gd "$W/tampered" update-ref refs/heads/main "$("${CRAFT[@]}" commit "$W/tampered" "$ROOT" --parent "$(head_of "$W/tampered")")"
verify_finds "a tree 100,000 levels deep in the store" layout "zz/d/d" "folders deep; the limit is 16"

# ---------------------------------------------------------------------------
assert_exit 0 ks --store "$V" verify
gd "$V" fsck --strict --no-progress >/dev/null 2>&1 || fail "git fsck --strict fails on the victim's store"
[[ -z $(find "$V/objects" -maxdepth 1 -name 'incoming-*') ]] || fail "a quarantine folder was left behind"
pass "the victim's store verifies and passes git fsck --strict"
finished_within test_attack_remote 180
summary
