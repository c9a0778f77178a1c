#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# A site's folder, attacked: someone who can write into the folder a site is
# built in (a shared gh-pages checkout) plants symbolic links and manifest
# entries, and waits for the next `kistore site` to delete or overwrite files
# of the user's elsewhere (a fake HOME here).
#
# Planted entries of site-manifest.json, each with the sha256 of the file it
# names (so that "is it still what was written?" would say yes): "../../victim"
# and "runs/../../../victim" (out of the folder by ".."), an absolute path, a
# file of the folder that is a link to a file in HOME, a path through a link
# to HOME, and a file the user edited after the site wrote it. A rebuild exits
# 0, removes none of them, names each on stderr ("warning: ... left alone"),
# and still removes a page it wrote that is gone and unchanged. A page's
# place (groups/<hex>.html) and its temporary name (….tmp) planted as links to
# HOME: the rebuild replaces the link by the page, HOME is untouched. A
# folder of the site (runs/, groups/) replaced by a link to a folder in HOME,
# the manifest replaced by a link, the site's folder itself a link: refused
# with exit 2 naming the link, nothing written through it. HOME is byte for
# byte as before after each (lib/fingerprint.sh).
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs in seconds.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in work
use_store "$SERVERS_DIR/store"
V=$W/home            # the user's files, outside the site
O=$W/pub/site        # the site: $O/../.. is $W
mkdir -p "$V/www" "$V/docs"
echo "my victim" >"$V/victim"
echo "my second victim" >"$V/victim2"
echo "my notes" >"$V/docs/notes.txt"
echo "served elsewhere" >"$V/www/index.html"
sha() { sha256sum "$1" | cut -c1-64; }
home_before=$(store_fingerprint "$V")

assert_exit 0 ks init
assert_exit 0 ks import liger "$SRC/tests/data/liger/sample.csv"
assert_exit 0 ks site "$O"
run=$(jq -r '.files | keys[] | select(startswith("groups/") and endswith(".html"))' "$O/site-manifest.json" | head -1)
[[ -n $run ]] || fail "the site has group pages"
pass "a site of the Liger sample"

# ---- planted manifest entries --------------------------------------------------------
# plant PATH HASH... : adds PATH -> HASH to the manifest's files.
plant() {
    local args=() i=0
    while (($#)); do args+=(--arg "p$i" "$1" --arg "h$i" "$2"); shift 2; i=$((i + 1)); done
    local expr='.' k
    for ((k = 0; k < i; k++)); do expr+=" | .files[\$p$k] = \$h$k"; done
    jq -c "${args[@]}" "$expr" "$O/site-manifest.json" >"$W/manifest.new"
    mv "$W/manifest.new" "$O/site-manifest.json"
}
ln -s "$V/victim" "$O/linked.html"                  # a link in the folder to a file in HOME
ln -s "$V/docs" "$O/docs"                           # a link in the folder to a folder in HOME
echo "the site wrote this" >"$O/edited.html"
edited_hash=$(sha "$O/edited.html")
echo "and the user edited it afterwards" >>"$O/edited.html"
echo "a page of an earlier build" >"$O/gone.html"   # listed and unchanged: the one to remove
plant "../../home/victim" "$(sha "$V/victim")" \
      "runs/../../../home/victim2" "$(sha "$V/victim2")" \
      "$V/victim" "$(sha "$V/victim")" \
      "linked.html" "$(sha "$V/victim")" \
      "docs/notes.txt" "$(sha "$V/docs/notes.txt")" \
      "edited.html" "$edited_hash" \
      "gone.html" "$(sha "$O/gone.html")"
assert_exit 0 ks site "$O"
for needle in '"../../home/victim", a path that has a ".." component' \
              '"runs/../../../home/victim2", a path that has a ".." component' \
              "\"$V/victim\", a path that is absolute" \
              '"linked.html", which is a symbolic link' \
              '"docs/notes.txt", which is not a regular file beneath the folder' \
              '"edited.html", a file changed since the site wrote it'; do
    assert_contains "$ERR" "$needle" "the rebuild names the entry it left: $needle"
done
assert_contains "$ERR" "left alone" "says what it did"
assert_store_unchanged "$home_before" "$V" "planted manifest entries"
[[ -L $O/linked.html && -L $O/docs ]] || fail "the planted links are left where they are"
assert_eq "$(printf 'the site wrote this\nand the user edited it afterwards')" "$(cat "$O/edited.html")" \
    "the edited file is left as the user made it"
[[ ! -e $O/gone.html ]] || fail "a page the site wrote, unchanged and gone from the site, is removed"
assert_contains "$OUT" "1 removed" "one file removed"
pass "planted manifest entries (.., absolute, a link, a path through a link, an edited file): left alone with a warning, exit 0; HOME unchanged"

# ---- a page's place and its temporary name planted as links -------------------------
rm "$O/linked.html" "$O/docs" "$O/edited.html"
rm "$O/$run" && ln -s "$V/victim" "$O/$run"
ln -s "$V/victim2" "$O/$run.tmp"
assert_exit 0 ks site "$O"
[[ -f $O/$run && ! -L $O/$run ]] || fail "the page is a file again, not the planted link"
[[ ! -e $O/$run.tmp && ! -L $O/$run.tmp ]] || fail "the planted temporary link is gone"
assert_contains "$(cat "$O/$run")" "<!DOCTYPE html>" "the page is the page"
assert_store_unchanged "$home_before" "$V" "a page's place planted as a link"
pass "a link at a page's place or its temporary name is replaced by the page, never written through"

# ---- a folder of the site, the manifest, the folder itself as links ----------------
site_before=$(store_fingerprint "$O")
for sub in runs groups documents; do
    mv "$O/$sub" "$W/$sub.real"
    ln -s "$V/www" "$O/$sub"
    assert_exit 2 ks site "$O"
    assert_contains "$ERR" "$O/$sub: is a symbolic link or not a folder" "$sub/ as a link: named"
    assert_store_unchanged "$home_before" "$V" "$sub/ as a link to a folder in HOME"
    rm "$O/$sub" && mv "$W/$sub.real" "$O/$sub"
done
assert_store_unchanged "$site_before" "$O" "refused rebuilds"
pass "runs/, groups/, documents/ as links to a folder in HOME: exit 2 naming the link, nothing written through it"

mv "$O/site-manifest.json" "$W/manifest.real"
cp "$W/manifest.real" "$V/manifest.json"
home_with_manifest=$(store_fingerprint "$V")
ln -s "$V/manifest.json" "$O/site-manifest.json"
assert_exit 2 ks site "$O"
assert_contains "$ERR" "site-manifest.json: expected the manifest of a site (a file), found a symbolic link" \
    "the manifest as a link: named"
assert_store_unchanged "$home_with_manifest" "$V" "the manifest as a link"
rm "$O/site-manifest.json" "$V/manifest.json" && mv "$W/manifest.real" "$O/site-manifest.json"

ln -s "$O" "$W/pub/link-to-site"
assert_exit 2 ks site "$W/pub/link-to-site"
assert_contains "$ERR" "link-to-site: is a symbolic link; name the folder itself" "the folder as a link: named"
assert_store_unchanged "$site_before" "$O" "the folder as a link"
assert_exit 0 ks site "$O"
assert_store_unchanged "$home_before" "$V" "the last rebuild"
pass "the manifest or the site's folder as a link: exit 2 naming it; a rebuild afterwards works"

summary
