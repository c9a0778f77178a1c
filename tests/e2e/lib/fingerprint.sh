# shellcheck shell=bash
# store_fingerprint DIR : one line per file and folder below DIR (a store's git
# directory, or any folder), sorted: the folder's relative path, or the file's
# relative path, mode and sha256 of its bytes. Two fingerprints are equal when
# the folder is byte for byte the same: no file added, removed or changed
# (packs, loose objects, refs, reflogs, config, temporary files), no folder
# left behind. Used by the attack tests: a refused pull, clone or add must
# leave the store's fingerprint as it was.
store_fingerprint() {
    local dir=$1
    (
        cd "$dir" || exit 1
        find . -mindepth 1 -type d -printf 'd %p\n' | LC_ALL=C sort
        find . -mindepth 1 -type l -printf 'l %p -> %l\n' | LC_ALL=C sort
        find . -mindepth 1 ! -type d ! -type l ! -type f -printf 'o %p %y\n' | LC_ALL=C sort
        # Regular files: path and mode, then the sha256 of the bytes, a few
        # processes for the whole tree (not two per file: stores have
        # thousands of files). NUL-separated throughout, so any name is kept.
        files() { find . -mindepth 1 -type f -print0 | LC_ALL=C sort -z; }
        paste -z -d ' ' <(files | xargs -0 -r stat --printf 'f %n %a\0') \
            <(files | xargs -0 -r sha256sum -z | cut -z -c1-64) | tr '\0' '\n'
    )
}

# assert_store_unchanged BEFORE DIR WHAT : fails, showing the difference,
# unless DIR's fingerprint equals BEFORE (an earlier store_fingerprint).
assert_store_unchanged() {
    local before=$1 dir=$2 what=$3 after
    after=$(store_fingerprint "$dir")
    if [[ $before != "$after" ]]; then
        diff <(printf '%s\n' "$before") <(printf '%s\n' "$after") | head -20 >&2
        fail "$what: the store changed (above: < before, > after)"
    fi
}

# assert_exit_unchanged CODE DIR WHAT CMD ARGS... : assert_exit CODE CMD ARGS
# (setting $OUT, $ERR and $RC as it does), then assert_store_unchanged: DIR
# byte for byte as it was before CMD ran.
assert_exit_unchanged() {
    local code=$1 dir=$2 what=$3 before
    shift 3
    before=$(store_fingerprint "$dir")
    assert_exit "$code" "$@"
    assert_store_unchanged "$before" "$dir" "$what"
}

# pull_refused STORE SOURCE WHAT NEEDLE... : STORE pulls SOURCE: exit 1,
# "refused" and every NEEDLE on stderr, the store byte for byte as it was; the
# same with --json (result refused, error code 1). Leaves in $W/problems the
# refusal's distinct problem lines, commit ids and object paths left out (to
# compare two refusals). Uses ks and jv (lib/common.sh).
pull_refused() {
    local store=$1 src=$2 what=$3 before n
    shift 3
    before=$(store_fingerprint "$store")
    assert_exit 1 ks --store "$store" pull "$src"
    assert_contains "$ERR" "refused" "$what: says refused"
    for n in "$@"; do assert_contains "$ERR" "$n" "$what: names $n"; done
    assert_store_unchanged "$before" "$store" "$what"
    assert_exit 1 ks --store "$store" --json pull "$src"
    assert_eq "refused 1" "$(jv '"\(.result) \(.error.code)"')" "$what: --json says refused, code 1"
    printf '%s\n' "$ERR" | { grep '^refused: ' || true; } | sed -E 's/commit [0-9a-f]{12}/commit C/g; s|objects/sha256/[0-9a-f/]+|OBJ|g' |
        LC_ALL=C sort -u >"$W/problems"
    assert_store_unchanged "$before" "$store" "$what (--json)"
}
