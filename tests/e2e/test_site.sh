#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# `kistore site`, end to end: a site from the Liger sample with a controlled
# rerun (reproduced) and hostile attestations (a <script> note, an attribute
# break-out with an onerror handler, a bidi override in the author's name).
# A run has no page of its own: its record is its row of its group's ranking
# (groups/<key>.html#run-<12 hex>), so that the site grows by under a kilobyte
# a run (docs/benchmarks.md, "The static site"; the bound is checked below on
# a generated store of 2,000 runs).
# Checks that every link and resource resolves inside the folder and nothing
# leaves it, that every page is well formed and valid to HTML Tidy (lib/site_check.py;
# a spoiled copy of the site proves each check fails when it should), that the JSON the site writes is exactly what
# `show --canonical` prints (each document once, in documents/), that no group's JSON restates its ranking (`rank --json`
# prints it), that a rebuild writes only what changed, that a folder of other files
# is refused, and, in a real browser (Debian's chromium, headless, file://), the
# rendered DOM: the rank row, the bars, the hostile notes shown as text
# with no element injected, the run record an address names opened, and every table fitting its
# column at 1280 px and at a phone's 390 px (screenshots of each kept in build/test-artifacts/site/).
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
assert_eq 17 "$(jv .runs)" "every sample run is on the site"
assert_eq 0 "$(find "$O/runs" -type f | wc -l)" "no run page and, with no string cut, no run JSON"
files=$(jv .files)
assert_eq "$files" "$(jv .written)" "a first build writes every file"
assert_eq "$files" "$(find "$O" -type f | wc -l)" "the files it counts are the files there"
assert_exit 0 $CHECK links "$O"
assert_contains "$OUT" "$(find "$O" -name '*.html' | wc -l) pages" "every page of the site is checked"
pass "site: every link and resource resolves inside the folder; no script but site.js; every page well formed"

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
r=groups/$group.html
spoiled links "$r" 's|href="../about.html"|href="../gone.html"|' "$r: ../gone.html: no such file"
spoiled links style.css delete "index.html: style.css: no such file"
spoiled links "$r" 's|</main>|<a href="https://example.org/">x</a></main>|' "$r: https://example.org/ leaves the site"
spoiled links "$r" 's|</main>|<a href="//example.org/x">x</a></main>|' "$r: //example.org/x leaves the site"
spoiled links "$r" 's|</main>|<a href="../../outside.html">x</a></main>|' "$r: ../../outside.html points outside the site"
spoiled links style.css '$ s|$|body{background:url(https://example.org/b.png)}|' "style.css: https://example.org/b.png leaves the site"
spoiled links "$r" 's|href="#commit-[0-9a-f]*"|href="#nowhere"|' "$r: #nowhere: no id 'nowhere' there"
spoiled links "$r" '0,/<\/h1>/s|</h1>||' "closes <h1>"
spoiled links "$r" 's|id="commits"|id="shared"|' "id 'shared' twice"
spoiled links "$r" 's|<main>|<main class=wide>|' "<main> class=wide: not in double quotes"
spoiled links "$r" 's|<p class="workload">|&<div>x</div>|' "<div> inside <p> (it ends the <p> there)"
spoiled tidy "$r" '0,/<\/h1>/s|</h1>||' "Warning: missing </h1> before <p>"
spoiled tidy "$r" 's|id="commits"|id="shared"|' 'anchor "shared" already defined'
spoiled tidy "$r" 's|<p class="workload">|&<div>x</div>|' "Warning: inserting implicit <p>"
pass "the checkers report a broken link, a missing style sheet, URLs that leave the site, a missing #anchor, an" \
     "unclosed element, an id twice, an unquoted attribute and a <div> inside a <p>"

# The JSON the site writes is what show --canonical prints: each document the run's bundle holds
# is documents/<hex>.json, written once however many runs name it (`show DIGEST --canonical`),
# linked from the group page (the documents its runs share) or the run's record (those they do
# not), but an implementation's, whose revision the run's row says. A run's own JSON is written
# (runs/<hex>.json) only when its record cuts a string (tests/e2e/test_attack_output.sh). A
# group's ranking is its page's table and `rank --json`: no JSON of it is written.
ks show "$run" --canonical >"$W/bundle.canonical"
for role in $(jq -r 'keys[] | select(. != "run")' "$W/bundle.canonical"); do
  doc=$(jq -r ".run.spec.${role}Digest" "$W/bundle.canonical")
  cmp -s <(ks show "$doc" --canonical) "$O/documents/${doc#sha256:}.json" ||
    fail "documents/${doc#sha256:}.json ($role) differs from show --canonical"
  cmp -s <(jq ".$role" "$W/bundle.canonical" | ks canon -) "$O/documents/${doc#sha256:}.json" ||
    fail "documents/${doc#sha256:}.json differs from the $role of the run's bundle"
  if [[ $role == implementation ]]; then
    rev=$(jq -r .implementation.spec.revision "$W/bundle.canonical")
    grep -q "<tr id=\"run-${run:0:12}\"><td>[0-9]*</td><td>liger_tiled <small>$rev</small>" "$O/groups/$group.html" ||
      fail "the run's row says its implementation's revision ($rev)"
  else
    grep -q "href=\"../documents/${doc#sha256:}.json\"" "$O/groups/$group.html" || fail "the group page links the run's $role's JSON"
  fi
done
assert_eq 0 "$(find "$O/groups" "$O/benchmarks" -name '*.json' | wc -l)" "no group's or benchmark's JSON: the pages' tables and rank --json say it"
cmp -s <(ks canon "$O/site-manifest.json"; echo) "$O/site-manifest.json" ||
  fail "site-manifest.json is not canonical JSON (RFC 8785) and a newline"
pass "each document's JSON = show DIGEST --canonical, no restatement of a ranking as JSON, the manifest is canonical JSON"

page=$O/groups/$group.html
assert_contains "$(cat "$page")" '&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;' "the note is escaped"
assert_contains "$(cat "$page")" 'Eve \u{202e}evil' "the bidi override is shown, not obeyed"
assert_contains "$(cat "$page")" "<tr id=\"run-${run:0:12}\"><td>3</td><td>liger_tiled" \
  "ranked 3rd by its own median, not its rerun's, its row the run's address"
assert_eq 1 "$(grep -c "<details><summary>${run:0:12}</summary>sha256:$run" "$page")" \
  "the run's record, once, opening on its whole digest"
assert_eq 4 "$(grep -c '<tr id="run-' "$page")" "a row per run of the group"
assert_not_contains "$(cat "$page")" "sourceNative.metrics" "the source's copy of the measurements is left out"
assert_not_contains "$(cat "$page")" "externalId" "so is the run's id at the source"
assert_not_contains "$(cat "$page")" "$(jq -r .run.metadata.title "$W/bundle.canonical")" "and the run's title"
assert_contains "$(cat "$page")" "<code>kistore show RUN</code>" "the page says where the whole record is"
pass "hostile text is escaped in the page source; a row per run, its record what distinguishes it"

# Nothing said twice on a page: the run records state what their runs share once, above them;
# the workload's title once; the comparison key once (the page's name aside).
shared=$(sed -n 's|.*<dl class="facts" id="shared">\(.*\)</dl>|\1|p' "$page")
assert_contains "$shared" "<dt>sourceNative.source</dt><dd>liger-kernel-bench</dd>" "what every run states alike is said above them"
assert_eq 1 "$(grep -o "sourceNative.source" "$page" | wc -l)" "and in no run's record again"
wl_title=$(ks show "$(jq -r .run.spec.workloadDigest "$W/bundle.canonical")" --canonical | jq -r .metadata.title)
assert_eq 1 "$(grep -o -F "$wl_title" "$page" | wc -l)" "the workload's title, once"
assert_eq 1 "$(grep -o "sha256:$group" "$page" | wc -l)" "the comparison key, once"
pass "a group page says each thing once"

# No text cut without "…", and the whole a hover away: a chart label cut has the whole as its <g>'s <title>.
for b in "$O"/benchmarks/*.html; do
  cut_labels=$(grep -c '<text class="label"[^>]*>[^<]*…</text>' "$b" || true)
  titled=$(grep -c '<g><title>[^<]*</title><text class="label"[^>]*>[^<]*…</text>' "$b" || true)
  assert_eq "$cut_labels" "$titled" "$(basename "$b"): each cut chart label has its whole as a title"
done
grep -q '<g><title>' "$O"/benchmarks/*.html || fail "no chart label was cut: the check above checked nothing"
pass "a benchmark chart's labels cut with … have the whole a hover away"

# A rebuild with nothing new writes nothing; after an attestation, only that run's page.
assert_exit 0 ks --json site "$O"
assert_eq 0 "$(jv .written)" "nothing changed, nothing written"
ks --json groups >"$W/groups.json"
other=$(jq -r '.groups[].group' "$W/groups.json" | grep -v "$group" | head -1 | cut -d: -f2)
touch -d '2000-01-01' "$O/groups/$other.html"
cp "$O/site-manifest.json" "$W/manifest.before"
assert_exit 0 ks attest "$run" --note "seen again"
assert_exit 0 ks --json site "$O"
assert_eq 2 "$(jv .written)" "one attestation rewrites one page, its run's group's (and the manifest)"
changed=$(jq -rn --slurpfile a "$W/manifest.before" --slurpfile b "$O/site-manifest.json" \
  '$b[0].files | to_entries[] | select(($a[0].files[.key] // "")[0:32] != .value[0:32]) | .key')
assert_eq "groups/$group.html" "$changed" "the page that changed is the attested run's group's"
assert_eq 2000 "$(date -r "$O/groups/$other.html" +%Y)" "another group's page is untouched"
pass "rebuild rewrites only the pages whose evidence changed"

# A rebuild skips rendering the pages whose inputs (their keys in the manifest) did not change;
# what it leaves must be what a build from scratch writes, byte for byte, and it must write
# exactly the files whose bytes changed. After the attestation above, then after the trust list
# loses the controller (every level it justified and every commit it signed reads differently).
# site_fresh WHAT: builds from scratch into $W/fresh and compares it with $O; checks each file of
# $O against the hash the manifest records (the first 32 hex digits of its sha256, then its key).
site_fresh() {
  rm -rf "$W/fresh"
  assert_exit 0 ks site "$W/fresh"
  diff -r "$O" "$W/fresh" >"$W/fresh.diff" || fail "$1: the rebuilt site differs from a fresh build: $(head -c 600 "$W/fresh.diff")"
  (cd "$O" && jq -r '.files | to_entries[] | "\(.value[0:32]) \(.key)"' site-manifest.json |
    while read -r hash path; do [[ $(sha256sum "$path" | cut -c1-32) == "$hash" ]] || exit 1; done) ||
    fail "$1: a file's bytes are not the hash the manifest records"
}
site_fresh "after an attestation"
cp "$O/site-manifest.json" "$W/manifest.before"
assert_exit 0 ks trust remove controller@example.org
assert_exit 0 ks --json site "$O"
changed=$(jq -rn --slurpfile a "$W/manifest.before" --slurpfile b "$O/site-manifest.json" \
  '[$b[0].files | to_entries[] | select(($a[0].files[.key] // "")[0:32] != .value[0:32])] | length')
[[ $changed -ge 1 ]] || fail "an untrusted controller changes the run's group's page (changed: $changed)"
assert_eq $((changed + 1)) "$(jv .written)" "the rebuild writes exactly the files whose bytes changed (and the manifest)"
assert_contains "$(cat "$O/groups/$group.html")" "unverified" "the run's level now reads unverified"
site_fresh "after the trust list changed"
assert_exit 0 ks trust add controller@example.org "$W/controller.pub"
assert_exit 0 ks --json site "$O"
site_fresh "after the controller is trusted again"
pass "a rebuild that skips unchanged pages equals a fresh build (attestation, trust removed, trust restored)"

# --base-url: a group page names its runs' permalinks where the site is published; without it, none.
assert_exit 0 ks site --base-url https://example.org/ev "$W/cited"
assert_contains "$(cat "$W/cited/groups/$group.html")" \
  "kistore evidence record, https://example.org/ev/groups/$group.html#run-&lt;its first 12 hex digits&gt;." "the permalink"
assert_not_contains "$(cat "$page")" "https://" "no permalink without --base-url"
pass "site --base-url: each group page says how to cite its runs by their permalinks"

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
browse "$page#run-${run:0:12}" "$W/group.dom" "$ART/group-page.png"
title=$(sed -n 's|.*<title>\(.*\)</title>.*|\1|p' "$page" | sed 's/&amp;/\&/g')
assert_exit 0 $CHECK dom "$W/group.dom" noimg "title=$title" "text=$script_note" "text=$onerror_note" "bars=$ranked" \
  "rows=$(ks --json rank "$run" | jq '.members | length')" "text=liger_tiled" "text=rerun reproduced" "text=Commits"
assert_contains "$(grep "<tr id=\"run-${run:0:12}\">" "$W/group.dom")" "<details open=\"\"><summary>${run:0:12}</summary>" \
  "site.js opened the run record the address names"
assert_eq 1 "$(grep -c '<details open' "$W/group.dom")" "and no other"
pass "browser: a run's address opens its record on its group's page; the bars, the rows, hostile notes as text; no element injected"

browse "$O/about.html" "$W/about.dom"
assert_not_contains "$(cat "$W/about.dom")" "(the date you read this)" "site.js ran: the access date is filled in"
browse "$O/index.html" "$W/index.dom" "$ART/index-page.png"
assert_exit 0 $CHECK dom "$W/index.dom" noimg "text=17 runs in"
assert_contains "$(cat "$W/index.dom")" "<span id=\"shown\">$(jq '.groups | length' "$W/groups.json")</span>" \
  "the filter script ran and counts every group"
# The index's groups by benchmark, then GPU (then pass and workload), as the page lists them.
sed -n 's|.*<td><a href="groups/[0-9a-f]*.html">\([^<]*\)</a></td><td>\([^<]*\)</td><td>\([^<]*\)</td>.*|\1\t\3|p' \
  "$O/index.html" >"$W/index.order"
[[ $(wc -l <"$W/index.order") -eq $(jq '.groups | length' "$W/groups.json") ]] || fail "every group row read from index.html"
benchmarks_in_order=$(cut -f1 "$W/index.order" | uniq | wc -l)
[[ $benchmarks_in_order -eq $(cut -f1 "$W/index.order" | sort -u | wc -l) ]] || fail "a benchmark's groups are not together in the index"
pass "browser: index renders with its filter; its groups together by benchmark (screenshots in $ART)"

# Every table fits its column at 1280 px and at a phone's 390 px: in a copy of the site whose pages also
# load fit.js, which writes each table wider than its column (its scrollWidth against its wrapper's
# width) and the page's own overflow on the <body> of the page that frames it. Each page is framed at
# the width (an <iframe>: headless chromium makes no window narrower than 500 px). The copy proves the
# check fails on a table made too wide.
rm -rf "$W/fit" && cp -r "$O" "$W/fit"
cat >"$W/fit/fit.js" <<'JS'
var bad = [];
var root = document.documentElement;
document.querySelectorAll("table").forEach(function (t) {
  var column = t.parentElement.clientWidth;
  if (t.scrollWidth > column + 1) bad.push((t.className || "table") + " " + t.scrollWidth + ">" + column);
});
if (root.scrollWidth > root.clientWidth + 1) {
  var over = [];  // the innermost elements past the edge, to name what overflows
  document.querySelectorAll("body *").forEach(function (e) {
    if (e.getBoundingClientRect().right > root.clientWidth + 1) over.push(e.tagName.toLowerCase() + "." + e.className);
  });
  bad.push("page " + root.scrollWidth + ">" + root.clientWidth + " (" + over.slice(-4).join(" ") + ")");
}
window.parent.document.body.setAttribute("data-fit", bad.length ? bad.join("; ") : "fits");
JS
find "$W/fit" -name '*.html' -exec sed -i 's|<script src="\(\(../\)*\)site.js"></script>|&<script src="\1fit.js"></script>|' {} +
framed() {  # framed PAGE WIDTH: a page of $W/fit framing PAGE at WIDTH px, its name printed
  local host="$W/fit/frame-$2-$((++profiles)).html"
  echo "<!DOCTYPE html><html><body style=\"margin:0\"><iframe src=\"$1\" width=\"$2\" height=\"1400\" style=\"border:0\"></iframe></body></html>" >"$host"
  echo "$host"
}
fits() {  # fits PAGE WIDTH: PAGE's tables, laid out at WIDTH px, as fit.js saw them
  timeout 60 chromium --headless --no-sandbox --disable-gpu --no-first-run --no-default-browser-check \
    --allow-file-access-from-files --virtual-time-budget=2000 --window-size=1300,1400 \
    --user-data-dir="$W/chromium-$((++profiles))" --dump-dom "file://$(framed "$1" "$2")" 2>>"$W/chromium.err" |
    sed -n 's|.*<body style="margin:0" data-fit="\([^"]*\)".*|\1|p'
}
bench_page=benchmarks/$(basename "$(ls "$O"/benchmarks/*.html | head -1)")
for width in 1280 390; do
  for p in index.html "groups/$group.html" "$bench_page" about.html; do
    assert_eq fits "$(fits "$p" "$width")" "$p at $width px: every table fits its column, the page its width"
  done
  (cd "$W" && timeout 60 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size="$((width + 20)),1400" \
    --allow-file-access-from-files --user-data-dir="$W/chromium-$((++profiles))" --screenshot="$ART/group-$width.png" \
    "file://$(framed "groups/$group.html#run-${run:0:12}" "$width")" >/dev/null 2>&1) || fail "chromium --screenshot at $width px"
  [[ -s $ART/group-$width.png ]] || fail "no screenshot at $width px"
done
sed -i 's|\(<tr id="run-[0-9a-f]*"><td>\)1</td>|\1<canvas width="2000" height="1"></canvas>1</td>|' "$W/fit/groups/$group.html"
assert_contains "$(fits "groups/$group.html" 1280)" "ranking" "fit.js reports a table made wider than its column"
pass "browser: every table fits its column at 1280 px and 390 px (screenshots $ART/group-1280.png, group-390.png)"

summary
