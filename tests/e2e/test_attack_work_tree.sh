#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# Attacks on kistore's own checkout into the work tree of a plain `git clone`
# (store/git/work_tree.h, docs/security.md): what a user, a script or
# another program may leave in the work tree or in .git before a pull.
#   - a FIFO where the pull adds a file: libgit2's checkout, which kistore's
#     hands the unusual cases to, opens it for writing and blocks for ever;
#     refused outright, as a link is: the pull ends, nothing written;
#   - a .gitattributes in the work tree (untracked, at the top or in a
#     changed file's folder) or staged: git's checkout applies it (eol=crlf
#     writes CRLF); kistore's wrote the blob's bytes and their status, git
#     status clean over files git would write otherwise; now declined, so
#     that libgit2's checkout, which reads attributes as git does, writes them;
#   - a FIFO as .git/index (or a link to one): kistore's own reading of the
#     index, then libgit2's, blocked for ever; refused outright;
#   - a FIFO as .gitattributes, .git/info/attributes, .gitignore or
#     .git/info/exclude: libgit2's checkout reads it and blocked for ever;
#     refused outright;
#   - git's index.lock held (a git at work, or one that crashed): libgit2's
#     checkout writes the files and then fails on the lock, leaving the work
#     tree ahead of an index it could not write; refused, nothing written,
#     and the checkout owed (refs/kistore/checkout-owed) is made by the next
#     pull once the lock is gone, where it once said "Already up to date";
# and, held already, kept held:
#   - the top folder `refs` replaced by a link to a copy elsewhere: nothing
#     written through it;
#   - an index with entries git itself refuses to add (`../evil`,
#     `.git/config`): kept as they were, nothing written at those paths;
#   - an index cut short, with a wrong checksum, claiming 2^32-1 entries, or
#     with an extension longer than the file: left byte for byte as it was,
#     no file of the work tree written, no hang;
#   - a remote whose tree holds `..` and `.git`: the pull refuses it before
#     any checkout, HEAD and the work tree as they were;
#   - a linked worktree (`git worktree add`) of a clone: its git folder holds
#     no objects (they are the clone's); every command refuses it, naming
#     the clone, where verify once said "ok: 0 objects".
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
export KISTORE_AUTHOR="Work Tree Attack <work-tree-attack@example.org>"
work_in attack_work_tree
S=$W/store
assert_exit 0 ks init "$S"
assert_exit 0 ks --store "$S" import liger "$DATA/liger-sample.csv"
git init -q --bare "$W/served.git"
assert_exit 0 ks --store "$S" push "$W/served.git"

next=100
# publish: adds 5 new runs to the store elsewhere and pushes them.
publish() {
    mkruns --start "$next" --count 5 >"$W/runs$next.jsonl"
    assert_exit 0 ks --store "$S" add "$W/runs$next.jsonl"
    assert_exit 0 ks --store "$S" push "$W/served.git"
    next=$((next + 100))
}
# fresh NAME: a new clone of the served repository at $W/NAME.
fresh() { git clone -q "$W/served.git" "$W/$1"; }
# changed NAME FILTER: the paths main changes since clone NAME's HEAD.
changed() { git --git-dir="$W/served.git" diff --name-only --diff-filter="$2" "$(git -C "$W/$1" rev-parse HEAD)" main; }
# pull_in NAME: `kistore pull` in clone NAME, within 60 s (exit 124: it hung).
pull_in() { (cd "$W/$1" && assert_exit 0 timeout 60 "$KISTORE" --no-progress pull) || fail "pull into $1 (exit $RC)"; }
# untouched NAME WHAT: the work tree of clone NAME holds what its index says
# (the checkout wrote nothing), and after a reset it is in step with HEAD.
untouched() {
    assert_eq "" "$(git -C "$W/$1" diff --name-only)" "$2: the work tree is what the index says"
}
in_step() {
    git -C "$W/$1" reset -q --hard
    assert_eq "" "$(git -C "$W/$1" status --porcelain --untracked-files=all)" "$2: git status after git reset --hard"
}

# ---- a FIFO where the pull adds a file ---------------------------------------------
fresh fifo
publish
target=$(changed fifo A | head -1)
mkdir -p "$W/fifo/$(dirname "$target")"
mkfifo "$W/fifo/$target"
pull_in fifo
[[ -p $W/fifo/$target ]] || fail "the FIFO at $target was replaced"
untouched fifo "a FIFO in the way"
rm "$W/fifo/$target"
in_step fifo "a FIFO in the way"
pass "a FIFO where the pull adds a file: the pull ends, nothing written, the FIFO left as it was"

# ---- a FIFO in place of git's index, or a link to one ------------------------------
for how in fifo link; do
    fresh "index-$how"
    publish
    C=$W/index-$how
    mv "$C/.git/index" "$W/index-$how.saved"
    if [[ $how == fifo ]]; then
        mkfifo "$C/.git/index"
    else
        mkfifo "$W/index-fifo-elsewhere"
        ln -s "$W/index-fifo-elsewhere" "$C/.git/index"
    fi
    pull_in "index-$how"
    rm "$C/.git/index" && mv "$W/index-$how.saved" "$C/.git/index"
    untouched "index-$how" "a $how as the index"
    in_step "index-$how" "a $how as the index"
done
pass "a FIFO as git's index, or a link to one: the pull ends, nothing written"

# ---- git's index.lock held ------------------------------------------------------------
fresh locked
publish
: >"$W/locked/.git/index.lock"
cp "$W/locked/.git/index" "$W/locked.index"
pull_in locked
cmp -s "$W/locked.index" "$W/locked/.git/index" || fail "the index changed while git held index.lock"
[[ -e $W/locked/.git/index.lock ]] || fail "git's index.lock was taken away"
untouched locked "index.lock held"
for path in $(changed locked A | head -3); do
    [[ ! -e $W/locked/$path ]] || fail "$path was written while git held index.lock"
done
git -C "$W/locked" rev-parse -q --verify refs/kistore/checkout-owed >/dev/null || fail "no checkout owed after the declined one"
rm "$W/locked/.git/index.lock"
# Once git lets go of the index, the next pull (which brings nothing) makes the
# checkout owed: it once said "Already up to date" and left the work tree behind.
assert_exit 0 timeout 60 bash -c 'cd "$1" && shift && exec "$@"' _ "$W/locked" "$KISTORE" --no-progress pull
assert_contains "$OUT" "Already up to date" "nothing new to pull"
assert_eq "" "$(git -C "$W/locked" status --porcelain --untracked-files=all)" "the owed checkout, made by the next pull"
! git -C "$W/locked" rev-parse -q --verify refs/kistore/checkout-owed >/dev/null || fail "the checkout is still owed"
in_step locked "index.lock held"
pass "git's index.lock held: nothing written, the index and the lock as they were; the next pull makes the checkout"

# ---- a checkout killed while it wrote ----------------------------------------------
# What kill -9 of a pull leaves midway through its checkout, made step by step
# with stock git: the branch moved, the index and most of the work tree at the
# commit before, some added files written whole, one cut short, one empty, a
# modified file removed and not yet written again, another written; the
# checkout owed. The next pull (which brings nothing) finishes it: the files
# it wrote, whole or cut short, are its own.
killed_state() {  # NAME: the clone NAME left as a checkout killed midway leaves it
    local c=$W/$1 from to
    fresh "$1"
    from=$(git -C "$c" rev-parse HEAD)
    publish
    git -C "$c" fetch -q origin
    to=$(git -C "$c" rev-parse origin/main)
    git -C "$c" update-ref refs/heads/main "$to"
    git -C "$c" update-ref refs/kistore/checkout-owed "$from"
    mapfile -t added < <(git -C "$c" diff --name-only --diff-filter=A "$from" "$to")
    mapfile -t modified < <(git -C "$c" diff --name-only --diff-filter=M "$from" "$to")
    ((${#added[@]} >= 4 && ${#modified[@]} >= 2)) || fail "too few changes to kill a checkout among"
    for k in 0 1 2; do mkdir -p "$c/$(dirname "${added[$k]}")"; done
    git -C "$c" show "$to:${added[0]}" >"$c/${added[0]}"
    git -C "$c" show "$to:${added[1]}" | head -c 100 >"$c/${added[1]}"
    : >"$c/${added[2]}"
    rm "$c/${modified[0]}"
    git -C "$c" show "$to:${modified[1]}" >"$c/${modified[1]}"
}
killed_state killed
assert_exit 0 timeout 60 bash -c 'cd "$1" && shift && exec "$@"' _ "$W/killed" "$KISTORE" --no-progress pull
assert_contains "$OUT" "Already up to date" "nothing new to pull"
assert_eq "" "$ERR" "no warning: the checkout was finished"
assert_eq "" "$(git -C "$W/killed" status --porcelain --untracked-files=all)" "the killed checkout, finished by the next pull"
! git -C "$W/killed" rev-parse -q --verify refs/kistore/checkout-owed >/dev/null || fail "the checkout is still owed"
pass "a checkout killed while it wrote (files whole, cut short, empty, removed): the next pull finishes it"
# A file of someone else's at a path the checkout adds (not the start of the
# commit's bytes) is not taken for its own: kept, the checkout still owed.
killed_state killed-mine
mine=${added[3]:-}  # killed_state's list of the paths the commit adds
[[ -n $mine ]] || fail "too few added paths"
mkdir -p "$W/killed-mine/$(dirname "$mine")"
echo "notes of mine" >"$W/killed-mine/$mine"
assert_exit 0 timeout 60 bash -c 'cd "$1" && shift && exec "$@"' _ "$W/killed-mine" "$KISTORE" --no-progress pull
assert_contains "$ERR" "a checkout of an earlier kistore write" "says a checkout is still owed"
assert_eq "notes of mine" "$(cat "$W/killed-mine/$mine")" "the other file at an added path is kept"
git -C "$W/killed-mine" rev-parse -q --verify refs/kistore/checkout-owed >/dev/null || fail "the checkout is no longer owed"
pass "a file that is not the start of the commit's bytes, at a path the owed checkout adds: kept, still owed"

# ---- the top folder replaced by a link ---------------------------------------------
fresh toplink
publish
mv "$W/toplink/refs" "$W/refs.elsewhere"
ln -s "$W/refs.elsewhere" "$W/toplink/refs"
before=$(cd "$W/refs.elsewhere" && find . -type f -exec sha256sum {} + | sort)
pull_in toplink
assert_eq "$before" "$(cd "$W/refs.elsewhere" && find . -type f -exec sha256sum {} + | sort)" \
    "nothing written through the link refs"
[[ -L $W/toplink/refs ]] || fail "the link refs was replaced"
rm "$W/toplink/refs" && mv "$W/refs.elsewhere" "$W/toplink/refs"
in_step toplink "a link at the top folder"
pass "the top folder refs replaced by a link: nothing written through it"

# ---- entries git refuses, in the index -----------------------------------------------
fresh entries
publish
empty=$(git -C "$W/entries" hash-object -w --stdin </dev/null)
# git update-index refuses these; written straight into the index.
"$PY" - "$W/entries/.git/index" "$empty" <<'PY'
import hashlib, struct, sys
path, blob = sys.argv[1], bytes.fromhex(sys.argv[2])
data = open(path, "rb").read()
version, count = struct.unpack(">II", data[4:12])
assert version == 2
pos, entries = 12, []
for _ in range(count):
    n = struct.unpack(">H", data[pos + 60:pos + 62])[0] & 0xFFF
    size = (62 + n + 8) & ~7
    entries.append((data[pos + 62:pos + 62 + n], data[pos:pos + size]))
    pos += size
for name in (b"../evil", b".git/config", b"zz/../../evil2"):
    e = struct.pack(">10I", 0, 0, 0, 0, 0, 0, 0o100644, 0, 0, 0) + blob + struct.pack(">H", len(name)) + name
    entries.append((name, e + b"\0" * (((62 + len(name) + 8) & ~7) - len(e))))
entries.sort()
out = data[:8] + struct.pack(">I", len(entries)) + b"".join(e for _, e in entries)
open(path, "wb").write(out + hashlib.sha1(out).digest())
PY
listed=$(git -C "$W/entries" ls-files | grep -v '^objects/\|^refs/\|^FORMAT$' || true)
pull_in entries
assert_eq "$listed" "$(git -C "$W/entries" ls-files | grep -v '^objects/\|^refs/\|^FORMAT$' || true)" \
    "the entries git refuses, as they were"
[[ ! -e $W/evil && ! -e $W/evil2 ]] || fail "a file was written outside the work tree"
assert_eq "" "$(git -C "$W/entries" diff-index --name-only HEAD -- objects refs FORMAT)" \
    "the pull's own paths in step in an index with entries git refuses"
pass "entries git refuses (../evil, .git/config) in the index: kept as they were, nothing written there"

# ---- an index git cannot read --------------------------------------------------------
for kind in truncated checksum count extension; do
    fresh "index-$kind"
    publish
    "$PY" - "$W/index-$kind/.git/index" "$kind" <<'PY'
import hashlib, struct, sys
path, kind = sys.argv[1], sys.argv[2]
data = bytearray(open(path, "rb").read())
if kind == "truncated":
    data = data[:len(data) // 2]
elif kind == "checksum":
    data[-1] ^= 1
else:
    body = data[:-20]
    if kind == "count":
        body[8:12] = struct.pack(">I", 0xFFFFFFFF)
    else:
        body += b"zzzz" + struct.pack(">I", 0xFFFFFFF0)
    data = body + hashlib.sha1(body).digest()
open(path, "wb").write(data)
PY
    cp "$W/index-$kind/.git/index" "$W/index-$kind.before"
    pull_in "index-$kind"
    cmp -s "$W/index-$kind.before" "$W/index-$kind/.git/index" || fail "an index $kind: changed"
    for path in $(changed "index-$kind" A | head -3); do
        [[ ! -e $W/index-$kind/$path ]] || fail "an index $kind: $path was written"
    done
done
pass "an index cut short, with a wrong checksum, 2^32-1 entries or an extension past its end: left as it was, nothing written"

# ---- a .gitattributes the work tree holds, untracked or staged ---------------------
# git's checkout reads every .gitattributes above a path it writes, in the
# work tree (tracked or not) or in the index: eol=crlf makes it write CRLF.
# A checkout that writes the blob's bytes and records their status leaves
# git status clean over a file git's own checkout would write otherwise.
for where in top folder staged; do
    fresh "attributes-$where"
    publish
    C=$W/attributes-$where
    target=$(changed "attributes-$where" M | grep '^refs/' | head -1)
    [[ -n $target ]] || fail "the pull modifies no index file"
    case $where in
    top) printf 'refs/** text eol=crlf\n' >"$C/.gitattributes" ;;
    folder) printf '* text eol=crlf\n' >"$C/$(dirname "$target")/.gitattributes" ;;
    staged)
        printf 'refs/** text eol=crlf\n' >"$C/.gitattributes"
        git -C "$C" add .gitattributes && rm "$C/.gitattributes"
        ;;
    esac
    pull_in "attributes-$where"
    cp "$C/$target" "$W/pulled"
    rm "$C/$target" && git -C "$C" checkout -q -- "$target"
    cmp -s "$W/pulled" "$C/$target" || fail "a .gitattributes ($where): $target is not what git's checkout writes there"
done
pass "a .gitattributes at the top, in a changed file's folder, or staged: the files are what git's checkout writes"

# ---- a FIFO where git reads attributes -----------------------------------------------
# libgit2's checkout (which a .gitattributes hands the checkout over to)
# reads them, and blocks for ever on a FIFO.
for where in top folder info; do
    fresh "attributes-fifo-$where"
    publish
    C=$W/attributes-fifo-$where
    target=$(changed "attributes-fifo-$where" M | grep '^refs/' | head -1)
    case $where in
    top) fifo=$C/.gitattributes ;;
    folder) fifo=$C/$(dirname "$target")/.gitattributes ;;
    info) mkdir -p "$C/.git/info" && fifo=$C/.git/info/attributes ;;
    esac
    mkfifo "$fifo"
    pull_in "attributes-fifo-$where"
    rm "$fifo"
    untouched "attributes-fifo-$where" "a FIFO as attributes ($where)"
    in_step "attributes-fifo-$where" "a FIFO as attributes ($where)"
done
pass "a FIFO as .gitattributes (at the top, in a changed file's folder) or .git/info/attributes: the pull ends, nothing written"

# A file the user changed at a path the pull changes hands the checkout to
# libgit2's, which reads the ignore files too.
for where in gitignore exclude; do
    fresh "ignore-fifo-$where"
    publish
    C=$W/ignore-fifo-$where
    target=$(changed "ignore-fifo-$where" M | head -1)
    echo "my notes" >>"$C/$target"
    case $where in
    gitignore) fifo=$C/.gitignore ;;
    exclude) mkdir -p "$C/.git/info" && rm -f "$C/.git/info/exclude" && fifo=$C/.git/info/exclude ;;
    esac
    mkfifo "$fifo"
    pull_in "ignore-fifo-$where"
    rm "$fifo"
    assert_eq "my notes" "$(tail -1 "$C/$target")" "a FIFO as $where: the user's change kept"
    in_step "ignore-fifo-$where" "a FIFO as $where"
done
pass "a FIFO as .gitignore or .git/info/exclude, with a change of the user's in the way: the pull ends"

# ---- a remote whose tree holds .. and .git --------------------------------------------
fresh hostile
git clone -q --bare "$W/served.git" "$W/evil.git"
E=(git --git-dir="$W/evil.git")
config=$(printf '[core]\n\tfsmonitor = touch PWNED\n' | "${E[@]}" hash-object -w --stdin)
sub=$(printf '100644 blob %s\tconfig\n' "$config" | "${E[@]}" mktree)
tree=$({ "${E[@]}" ls-tree main; printf '040000 tree %s\t.git\n040000 tree %s\t..\n' "$sub" "$sub"; } | "${E[@]}" mktree)
commit=$("${E[@]}" commit-tree "$tree" -p main -m "a tree a checkout would mishandle")
"${E[@]}" update-ref refs/heads/main "$commit"
head=$(git -C "$W/hostile" rev-parse HEAD)
cp "$W/hostile/.git/config" "$W/hostile.config"
assert_exit 1 ks --store "$W/hostile" pull "$W/evil.git"
assert_contains "$ERR" "refused to take" "the refusal"
assert_eq "$head" "$(git -C "$W/hostile" rev-parse HEAD)" "HEAD after the refused pull"
cmp -s "$W/hostile.config" "$W/hostile/.git/config" || fail "the clone's .git/config changed"
assert_eq "" "$(git -C "$W/hostile" status --porcelain --untracked-files=all)" "git status after the refused pull"
pass "a remote's tree with .. and .git: refused before any checkout, the clone as it was"

# ---- a linked worktree of a clone (git worktree add) ----------------------------------
# Its git folder is .git/worktrees/NAME; the objects are the clone's (its
# commondir). kistore once opened the private folder alone: verify said
# "ok: 0 objects" with exit 0, and pull failed writing objects/ there.
fresh linked
git -C "$W/linked" worktree add -q -b side "$W/linked-wt" main
publish
before=$(store_fingerprint "$W/linked/.git")
for cmd in verify ls pull; do
    assert_exit 3 timeout 60 bash -c 'cd "$1" && shift && exec "$@"' _ "$W/linked-wt" "$KISTORE" --no-progress "$cmd"
    assert_contains "$ERR" "a linked worktree (git worktree add) of a store's clone" "$cmd: says what it is"
    assert_contains "$ERR" "$W/linked/.git/ is its git folder" "$cmd: names the clone's git folder"
done
assert_store_unchanged "$before" "$W/linked/.git" "a linked worktree: the clone's git folder is unchanged"
assert_exit 0 bash -c 'cd "$1" && shift && exec "$@"' _ "$W/linked" "$KISTORE" --no-progress verify
assert_contains "$OUT" "0 problems" "the clone itself verifies"
pass "a linked worktree of a clone: verify, ls and pull refuse it (exit 3), naming the clone; nothing written"

summary
