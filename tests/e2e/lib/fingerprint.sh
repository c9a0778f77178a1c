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
        find . -mindepth 1 ! -type d -printf '%p\0' | LC_ALL=C sort -z |
            while IFS= read -r -d '' f; do
                if [[ -L $f ]]; then
                    printf 'l %s -> %s\n' "$f" "$(readlink "$f")"
                else
                    printf 'f %s %s %s\n' "$f" "$(stat -c %a "$f")" "$(sha256sum <"$f" | cut -c1-64)"
                fi
            done
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
