#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# The site's series over time (issue 33, docs/statistics.md "Series"): the
# Liger sample's liger_tiled run (0.6.3) and five later revisions of it in its
# group, 20 % faster from 0.6.6 on, one of them rerun by a controller
# (reproduced). The group page draws the series (an inline SVG, no script):
# a line of six points, the p20 - p80 spread as a band, one change point, the
# rerun as a mark; each run's section says where it stands ("point 4 of 6 …;
# after a change point: … faster"), in agreement with `kistore series --json`.
# A group whose implementations each have one run draws no chart.
#
# Hostile: a series of two runs whose implementation's project holds
# <script>, quotes and terminal escape bytes, and whose unit is one too: the
# page shows them as text (escaped), the legend cut with "…" and the whole a
# hover away, and no byte of the escape reaches the page raw.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs in seconds.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in work
use_store "$SERVERS_DIR/store"
O=$W/site
CHECK="$PY $here/lib/site_check.py"
run=628643ba921878ef6035a1321da64c56f5b4a470a3fa12e9ab5239c742fec354   # liger_tiled 0.6.3, 2.606 ms, 2025-11-11
assert_exit 0 ks init
assert_exit 0 ks import liger "$SRC/tests/data/liger/sample.csv"
ks show "$run" --canonical >"$W/bundle.json"
hostile=$'<script>alert(1)</script>"\e]8;;http://x\a\e[31m'
"$PY" - "$W/bundle.json" "$W/later.jsonl" "$W/hostile.jsonl" "$hostile" <<'PY'
import hashlib, json, sys
b = json.load(open(sys.argv[1]))
def jcs(doc):
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
def variant(rev, day, ms, project=None, unit="ns"):
    c = json.loads(json.dumps(b))
    impl = c["implementation"]
    impl.pop("metadata", None)
    impl["spec"]["revision"] = rev
    s = c["run"]["spec"]
    if project is not None:
        impl["spec"]["project"] = project
        # A workload of its own: a group of its own, ranked on the hostile unit.
        w = c["workload"]
        w.pop("metadata", None)
        w["spec"]["parameters"]["T"] = 99999
        s["workloadDigest"] = "sha256:" + hashlib.sha256(jcs(w)).hexdigest()
    s["implementationDigest"] = "sha256:" + hashlib.sha256(jcs(impl)).hexdigest()
    del s["sourceNative"]
    ns = round(ms * 1e6)
    if unit == "ns":
        s["timing"]["latencyNs"]["median"] = ns
    else:
        del s["timing"]
        ns = ms
    s["measurements"] = [{"metric": "latency", "statistic": "median", "unit": unit, "value": ns},
                         {"metric": "latency", "statistic": "p20", "unit": unit, "value": ns * 0.999},
                         {"metric": "latency", "statistic": "p80", "unit": unit, "value": ns * 1.001}]
    s["observedAt"] = f"2025-11-{day}T06:00:00.000Z"
    return json.dumps(c) + "\n"
with open(sys.argv[2], "w") as out:
    for rev, day, ms in [("0.6.4", 12, 2.600), ("0.6.5", 13, 2.610), ("0.6.6", 14, 2.080),
                         ("0.6.7", 15, 2.090), ("0.6.8", 16, 2.070)]:
        out.write(variant(rev, day, ms))
# Two runs of a hostile project, with a hostile unit, in a group of their own.
with open(sys.argv[3], "w") as out:
    for rev, day, ms in [("1", 20, 3.0), ("2", 21, 3.5)]:
        out.write(variant(rev, day, ms, project=sys.argv[4] + "x" * 80, unit=sys.argv[4]))
PY
assert_exit 0 ks add "$W/later.jsonl"
cp "$SRC/tests/data/keys/controller" "$SRC/tests/data/keys/controller.pub" "$W/"
chmod 600 "$W/controller"
assert_exit 0 ks trust add controller@example.org "$W/controller.pub"
rerun_of=$(ks --json series "$run" | jq -r '.points[4].run')   # 0.6.7, 2.090 ms
ks show "$rerun_of" --canonical | jq '.run.spec.timing.latencyNs.median = 2095000 | .run.spec.observedAt = "2025-12-01T00:00:00.000Z"' \
  >"$W/rerun.json"
assert_exit 0 ks rerun "$rerun_of" "$W/rerun.json" --sign "$W/controller"
assert_exit 0 ks --json series "$run"
series_json=$OUT
assert_exit 0 ks series "$run"
assert_contains "$OUT" "change point: 2.606 ms -> 2.080 ms, ratio 0.798, faster (quantiles)" "kistore series finds the step"
group=$(ks --json rank "$run" | jq -r .group | cut -d: -f2)
pass "a series of six revisions of liger_tiled, a step at 0.6.6, 0.6.7 reproduced by a controlled rerun"

assert_exit 0 ks --json site "$O"
page=$O/groups/$group.html
assert_exit 0 $CHECK links "$O"
if have_tool tidy; then
  assert_exit 0 $CHECK tidy "$O"
fi
pass "the site with series charts: every link resolves, every page well formed (and valid to tidy where installed)"

# The chart: one series drawn (liger_tiled; huggingface and the others have one run each).
chart=$(grep -o '<svg class="series".*</svg>' "$page" || true)
[[ -n $chart ]] || fail "the group page has a series chart"
assert_eq 1 "$(grep -o '<svg class="series"' "$page" | wc -l)" "one chart on the page"
assert_eq 1 "$(grep -o '<path class="l"' <<<"$chart" | wc -l)" "one series line (the others have a single run)"
line=$(grep -o '<path class="l" d="[^"]*"' <<<"$chart" | head -1)
assert_eq 6 "$(grep -o '[ML][0-9]* [0-9]*' <<<"$line" | wc -l)" "the line has six points, as series --json lists"
assert_eq 6 "$(jq '.points | length' <<<"$series_json")" "series --json agrees: six points"
assert_contains "$chart" '<path class="b"' "the p20 - p80 spread as a band"
assert_eq "$(jq '.changePoints | length' <<<"$series_json")" "$(grep -o '<path class="cp"' <<<"$chart" | wc -l)" \
  "as many change points drawn as series --json finds"
assert_contains "$chart" "change point, 2.606 ms → 2.080 ms, ×0.798, faster (quantiles)" "the change point's words, as series prints them"
assert_contains "$chart" '<path class="rerun rerun-reproduced"' "the controlled rerun as a mark"
# The line falls after the step: the y of the 4th point is lower on the page (larger y) than the 3rd's.
ys=$(grep -o '[ML][0-9]* [0-9]*' <<<"$line" | cut -d' ' -f2 | tr '\n' ' ')
read -r y1 y2 y3 y4 _ <<<"$ys"
((y4 > y3 && y4 > y1 && y4 > y2)) || fail "the 20 % faster points are drawn lower (larger y): $ys"
assert_contains "$(cat "$page")" "Liger-Kernel/liger_tiled, between 2025-11-13 and 2025-11-14: 2.606 ms → 2.080 ms, ×0.798, faster (quantiles)" \
  "the change point in words below the chart"
pass "group page: the series drawn with its band, its change point where series --json finds it, the rerun as a mark"

# Each run's record says where it stands, as series --json orders the points (in the series of
# its implementation: the row says which).
for i in 0 2 3 5; do
  r=$(jq -r ".points[$i].run" <<<"$series_json" | cut -d: -f2)
  section=$(grep "<tr id=\"run-${r:0:12}\">" "$page")
  assert_contains "$section" "<br>series: point $((i + 1)) of 6" "run $i: its place in the series"
  if ((i >= 3)); then
    assert_contains "$section" "after a change point (at point 4): 2.606 ms → 2.080 ms, ×0.798, faster (quantiles)" "run $i: after the step"
  else
    assert_contains "$section" "before its change point (at point 4)" "run $i: before the step"
  fi
done
hf=$(ks --json rank "$run" | jq -r '.members[] | select(.implementation == "huggingface") | .run' | cut -d: -f2)
hf_section=$(grep "<tr id=\"run-${hf:0:12}\">" "$page")
[[ -n $hf_section ]] || fail "huggingface's row"
assert_not_contains "$hf_section" "series:" "a run alone in its series says nothing of a series"
pass "run records: where each run stands in its series, before or after the change point"

# A group without a series of two runs draws no chart.
other=$(ks --json groups | jq -r '.groups[].group' | cut -d: -f2 | grep -v "$group" | head -1)
assert_not_contains "$(cat "$O/groups/$other.html")" '<svg class="series"' "no chart where no series has two runs"
pass "no chart for a group without a series of two points"

# Hostile project name and unit: text, never markup, never a raw escape byte.
assert_exit 0 ks add "$W/hostile.jsonl"
assert_exit 0 ks --json site "$O"
hpage=$(grep -l '<svg class="series"' "$O"/groups/*.html | grep -v "$group" | head -1)
[[ -n $hpage ]] || fail "the hostile series has its chart"
assert_not_contains "$(cat "$hpage")" "<script>alert" "no <script> from the data"
assert_contains "$(cat "$hpage")" "&lt;script&gt;alert(1)&lt;/script&gt;&quot;\\x1b]8;;http://x\\x07\\x1b[31m" \
  "the project shown as text: markup escaped, escape bytes as \\xNN"
grep -q $'\e' "$hpage" && fail "an escape byte reached the page raw"
grep -q $'\a' "$hpage" && fail "a BEL byte reached the page raw"
legend=$(grep -o '<ul class="legend"><li class="s0">.*</li></ul>' "$hpage" | head -1)
assert_contains "$legend" '<span title="&lt;script&gt;alert(1)&lt;/script&gt;&quot;' "the legend's cut label has the whole a hover away"
assert_contains "$legend" "…</span>" "and is cut with …"
assert_exit 0 $CHECK links "$O"
if have_tool tidy; then
  assert_exit 0 $CHECK tidy "$O"
fi
pass "hostile project and unit: escaped in the chart, legend and records; cut with … and titled; the site stays valid"
summary
