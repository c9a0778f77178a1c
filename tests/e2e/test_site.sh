#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# `kistore site`, end to end: a site from the Liger sample with a controlled
# rerun (reproduced) and hostile attestations (a <script> note, an attribute
# break-out with an onerror handler, a bidi override in the author's name).
# Checks that every link and resource resolves inside the folder and nothing
# leaves it, that every page is well formed and valid to HTML Tidy (lib/site_check.py;
# a spoiled copy of the site proves each check fails when it should), that the JSON beside each page is exactly what
# `show --canonical` (the run; each document once, in documents/) and `rank --json` print (one implementation of ranking and
# levels), that a rebuild writes only what changed, that a folder of other files
# is refused, and, in a real browser (Debian's chromium, headless, file://), the
# rendered DOM: the rank row, the chart's bars, the hostile notes shown as text
# with no element injected; screenshots are kept in build/test-artifacts/site/.
# Without chromium installed the browser part is skipped, saying so; it never
# skips when chromium is there.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs in ~20 s.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in work
use_store "$SERVERS_DIR/store"
O=$W/site
CHECK="$PY $here/lib/site_check.py"
ART=${KISTORE_TEST_ARTIFACTS:-$(dirname "$KISTORE")/test-artifacts}/site
run=628643ba921878ef6035a1321da64c56f5b4a470a3fa12e9ab5239c742fec354   # liger_tiled, rank 3 of 4
script_note='<script>document.title="pwned"</script>'
onerror_note='"><img src=x onerror="document.title=1">'

assert_exit 0 ks init
assert_exit 0 ks import liger "$SRC/tests/data/liger/sample.csv"
assert_exit 0 ks attest "$run" --note "$script_note"
assert_exit 0 ks attest "$run" --note "$onerror_note" --author $'Eve \u202eevil <eve@example.org>'
cp "$SRC/tests/data/keys/controller" "$SRC/tests/data/keys/controller.pub" "$W/"
chmod 600 "$W/controller"
assert_exit 0 ks trust add controller@example.org "$W/controller.pub"
ks show "$run" --canonical >"$W/bundle.json"
"$PY" - "$W/bundle.json" >"$W/rerun.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
s = b["run"]["spec"]
s["timing"]["latencyNs"]["median"] = 2650000
s["observedAt"] = "2026-11-30T09:00:00.000Z"
del s["sourceNative"]
print(json.dumps(b))
PY
assert_exit 0 ks rerun "$run" "$W/rerun.json" --sign "$W/controller"
group=$(ks --json rank "$run" | jq -r .group | cut -d: -f2)
ranked=$(ks --json rank "$run" | jq '[.members[] | select(.rank != null)] | length')
pass "a store with a reproduced run and hostile attestations"

# A folder of other files is refused, and nothing is written there.
mkdir -p "$W/other" && echo keep >"$W/other/notes.txt"
assert_exit 2 ks site "$W/other"
assert_contains "$ERR" "is not empty and holds no site-manifest.json" "names why"
assert_eq "notes.txt" "$(ls "$W/other")" "nothing written into a folder of other files"
echo x >"$W/afile"
assert_exit 2 ks site "$W/afile"
assert_contains "$ERR" "not a folder" "a file is not a site folder"
pass "site into a folder of other files or a file: exit 2, nothing written"

assert_exit 0 ks --json site "$O"
assert_eq 17 "$(jv .runs)" "every sample run has a page"
files=$(jv .files)
assert_eq "$files" "$(jv .written)" "a first build writes every file"
assert_eq "$files" "$(find "$O" -type f | wc -l)" "the files it counts are the files there"
assert_exit 0 $CHECK links "$O"
assert_contains "$OUT" "$(find "$O" -name '*.html' | wc -l) pages" "every page of the site is checked"
pass "site: every link and resource resolves inside the folder; no script but site.js; JSON beside each page; every page well formed"

# Every page is valid HTML5 to a validator: HTML Tidy (Debian's tidy), with no error and no warning.
if have_tool tidy; then
  assert_exit 0 $CHECK tidy "$O"
  assert_contains "$OUT" "$(find "$O" -name '*.html' | wc -l) pages read by tidy" "tidy reads every page"
  pass "site: HTML Tidy reads every page with no error and no warning"
else
  echo "SKIP: tidy is not installed (apt-get install tidy; scripts/deps.sh installs it for tests): the pages were" \
       "not validated (site_check.py links still checks that each is well formed)"
fi

# The checks find what they look for: each case spoils one file of a copy of the site (a sed
# expression, or "delete") and names what the checker (links or tidy) must report about it.
spoiled() {  # spoiled MODE FILE EDIT EXPECTED
  rm -rf "$W/spoiled" && cp -r "$O" "$W/spoiled"
  if [[ $3 == delete ]]; then rm "$W/spoiled/$2"; else sed -i -E "$3" "$W/spoiled/$2"; fi
  cmp -s "$O/$2" "$W/spoiled/$2" && fail "spoiled $1 $2: the edit changed nothing"
  [[ $1 == tidy ]] && ! type -P tidy >/dev/null && return
  assert_exit 1 $CHECK "$1" "$W/spoiled"
  assert_contains "$OUT" "$4" "site_check.py $1 on $2 edited with $3"
}
r=runs/$run.html
spoiled links "$r" "s|href=\"../groups/$group.html\"|href=\"../groups/gone.html\"|" "$r: ../groups/gone.html: no such file"
spoiled links style.css delete "index.html: style.css: no such file"
spoiled links "$r" 's|</main>|<a href="https://example.org/">x</a></main>|' "$r: https://example.org/ leaves the site"
spoiled links "$r" 's|</main>|<a href="//example.org/x">x</a></main>|' "$r: //example.org/x leaves the site"
spoiled links "$r" 's|</main>|<a href="../../outside.html">x</a></main>|' "$r: ../../outside.html points outside the site"
spoiled links style.css '$ s|$|body{background:url(https://example.org/b.png)}|' "style.css: https://example.org/b.png leaves the site"
spoiled links "$r" 's|href="#compare"|href="#nowhere"|' "$r: #nowhere: no id 'nowhere' there"
spoiled links "$r" '0,/<\/h1>/s|</h1>||' "closes <h1>"
spoiled links "$r" 's|id="history"|id="cite"|' "id 'cite' twice"
spoiled links "$r" 's|<main>|<main class=wide>|' "<main> class=wide: not in double quotes"
spoiled links "$r" 's|<p class="rankline" id="rank">|&<div>x</div>|' "<div> inside <p> (it ends the <p> there)"
spoiled tidy "$r" '0,/<\/h1>/s|</h1>||' "Warning: missing </h1> before <p>"
spoiled tidy "$r" 's|id="history"|id="cite"|' 'anchor "cite" already defined'
spoiled tidy "$r" 's|<p class="rankline" id="rank">|&<div>x</div>|' "Warning: inserting implicit <p>"
pass "the checkers report a broken link, a missing style sheet, URLs that leave the site, a missing #anchor, an" \
     "unclosed element, an id twice, an unquoted attribute and a <div> inside a <p>"

# The JSON beside the pages is what show --canonical and rank --json print. A
# run's JSON is the run (the "run" of its `show --canonical` bundle), and each
# document the bundle holds is documents/<hex>.json, written once however many
# runs name it (`show DIGEST --canonical`): a bundle per run repeated a shared
# document once per run (tests/e2e/test_attack_output.sh).
ks show "$run" --canonical >"$W/bundle.canonical"
cmp -s <(jq '.run' "$W/bundle.canonical" | ks canon -) "$O/runs/$run.json" ||
  fail "run JSON differs from the run of show --canonical"
for role in $(jq -r 'keys[] | select(. != "run")' "$W/bundle.canonical"); do
  doc=$(jq -r ".run.spec.${role}Digest" "$W/bundle.canonical")
  cmp -s <(ks show "$doc" --canonical) "$O/documents/${doc#sha256:}.json" ||
    fail "documents/${doc#sha256:}.json ($role) differs from show --canonical"
  cmp -s <(jq ".$role" "$W/bundle.canonical" | ks canon -) "$O/documents/${doc#sha256:}.json" ||
    fail "documents/${doc#sha256:}.json differs from the $role of the run's bundle"
  grep -q "href=\"../documents/${doc#sha256:}.json\"" "$O/runs/$run.html" || fail "the run page links its $role's JSON"
done
for key in $(jq -r '.groups[].group' "$O/index.json" | cut -d: -f2); do
  cmp -s <(ks --json rank "$key") "$O/groups/$key.json" || fail "groups/$key.json differs from rank --json"
done
cmp -s <(ks canon "$O/site-manifest.json"; echo) "$O/site-manifest.json" ||
  fail "site-manifest.json is not canonical JSON (RFC 8785) and a newline"
pass "run JSON = the run of show --canonical, each document's JSON = show DIGEST --canonical, every group's JSON = rank --json, the manifest is canonical JSON"

page=$O/runs/$run.html
assert_contains "$(cat "$page")" '&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;' "the note is escaped"
assert_contains "$(cat "$page")" 'Eve \u{202e}evil' "the bidi override is shown, not obeyed"
assert_contains "$(cat "$page")" "Rank 3</strong> of 4" "ranked by its own median, not its rerun's"
pass "hostile text is escaped in the page source"

# A rebuild with nothing new writes nothing; after an attestation, only that run's page.
assert_exit 0 ks --json site "$O"
assert_eq 0 "$(jv .written)" "nothing changed, nothing written"
other=$(jq -r '.groups[] | select(.group != "sha256:'"$group"'") | .best.run' "$O/index.json" | head -1 | cut -d: -f2)
touch -d '2000-01-01' "$O/runs/$other.html"
cp "$O/site-manifest.json" "$W/manifest.before"
assert_exit 0 ks attest "$run" --note "seen again"
assert_exit 0 ks --json site "$O"
assert_eq 2 "$(jv .written)" "one attestation rewrites one page (and the manifest)"
changed=$(jq -rn --slurpfile a "$W/manifest.before" --slurpfile b "$O/site-manifest.json" \
  '$b[0].files | to_entries[] | select($a[0].files[.key] != .value) | .key')
assert_eq "runs/$run.html" "$changed" "the page that changed is the attested run's"
assert_eq 2000 "$(date -r "$O/runs/$other.html" +%Y)" "another group's run page is untouched"
pass "rebuild rewrites only the pages whose evidence changed"

# A rebuild skips rendering the pages whose inputs (their keys in the manifest) did not change;
# what it leaves must be what a build from scratch writes, byte for byte, and it must write
# exactly the files whose bytes changed. After the attestation above, then after the trust list
# loses the controller (every level it justified and every commit it signed reads differently).
# site_fresh WHAT: builds from scratch into $W/fresh and compares it with $O; checks each file of
# $O against the sha256 the manifest records.
site_fresh() {
  rm -rf "$W/fresh"
  assert_exit 0 ks site "$W/fresh"
  diff -r "$O" "$W/fresh" >"$W/fresh.diff" || fail "$1: the rebuilt site differs from a fresh build: $(head -c 600 "$W/fresh.diff")"
  (cd "$O" && jq -r '.files | to_entries[] | "\(.value)  \(.key)"' site-manifest.json | sha256sum --quiet -c -) ||
    fail "$1: a file's bytes are not the sha256 the manifest records"
}
site_fresh "after an attestation"
cp "$O/site-manifest.json" "$W/manifest.before"
assert_exit 0 ks trust remove controller@example.org
assert_exit 0 ks --json site "$O"
changed=$(jq -rn --slurpfile a "$W/manifest.before" --slurpfile b "$O/site-manifest.json" \
  '[$b[0].files | to_entries[] | select($a[0].files[.key] != .value)] | length')
[[ $changed -ge 2 ]] || fail "an untrusted controller changes the run's page and its group's page (changed: $changed)"
assert_eq $((changed + 1)) "$(jv .written)" "the rebuild writes exactly the files whose bytes changed (and the manifest)"
assert_contains "$(cat "$O/runs/$run.html")" "unverified" "the run's level now reads unverified"
site_fresh "after the trust list changed"
assert_exit 0 ks trust add controller@example.org "$W/controller.pub"
assert_exit 0 ks --json site "$O"
site_fresh "after the controller is trusted again"
pass "a rebuild that skips unchanged pages equals a fresh build (attestation, trust removed, trust restored)"

# In a real browser, from file://.
if ! have_tool chromium; then
  echo "SKIP: chromium is not installed (apt-get install chromium; scripts/deps.sh installs it for tests):" \
       "the rendered DOM and the screenshots were not checked"
  summary
  exit
fi
mkdir -p "$ART"
profiles=0
browse() {  # browse FILE.html OUT.dom [SCREENSHOT.png]: the DOM after scripts ran, and a screenshot
  # A profile per start: a browser still shutting down would take the next call over.
  local flags=(--headless --no-sandbox --disable-gpu --no-first-run --no-default-browser-check
               --allow-file-access-from-files --virtual-time-budget=2000)
  timeout 60 chromium "${flags[@]}" --user-data-dir="$W/chromium-$((++profiles))" --dump-dom "file://$1" >"$2" 2>"$W/chromium.err" ||
    fail "chromium --dump-dom $1: $(tail -3 "$W/chromium.err")"
  if [[ -n ${3:-} ]]; then
    (cd "$W" && timeout 60 chromium "${flags[@]}" --window-size=1100,1600 --hide-scrollbars \
      --user-data-dir="$W/chromium-$((++profiles))" \
      --screenshot="$3" "file://$1" >/dev/null 2>>"$W/chromium.err") ||
      fail "chromium --screenshot $1"
    [[ -s $3 ]] || fail "no screenshot at $3"
  fi
}
browse "$page" "$W/run.dom" "$ART/run-page.png"
assert_exit 0 $CHECK dom "$W/run.dom" noimg "title=GeGLU MLP (tiled benchmark) · liger_tiled · backward · kistore" \
  "text=$script_note" "text=$onerror_note" "text=Rank 3 of 4 in its comparison group" "text=Compare with #1" \
  "text=Replications and notes" "text=Cite this record" "text=reproduced"
assert_not_contains "$(cat "$W/run.dom")" "(the date you read this)" "site.js ran: the access date is filled in"
pass "browser: run page renders the rank, the sections, hostile notes as text; no element injected; site.js ran"

browse "$O/groups/$group.html" "$W/group.dom" "$ART/group-page.png"
members=$(jq '.members | length' "$O/groups/$group.json")
assert_exit 0 $CHECK dom "$W/group.dom" noimg "bars=$ranked" "rows=$members" "text=liger_tiled" "text=rerun reproduced"
assert_contains "$(cat "$W/group.dom")" '<tr class="member" id="run-628643ba9218" data-rank="3">' "the rank row"
pass "browser: group page has a bar per ranked member ($ranked) and a row per member ($members)"

browse "$O/index.html" "$W/index.dom" "$ART/index-page.png"
assert_exit 0 $CHECK dom "$W/index.dom" noimg "text=17 runs in"
assert_contains "$(cat "$W/index.dom")" "<span id=\"shown\">$(jq '.groups | length' "$O/index.json")</span>" \
  "the filter script ran and counts every group"
pass "browser: index renders with its filter (screenshots in $ART)"

summary
