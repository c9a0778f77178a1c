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
