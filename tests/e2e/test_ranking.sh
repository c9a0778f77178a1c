#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153,SC2016
# Ranking across units, with the real binary: Liger's tiled_geglu backward group
# (seq 1024, RTX 4090) ranks liger, huggingface, liger_tiled, deepspeed_tiled
# 1-4 (SPEC §1: the seed fixture's run is 3 of 4), and keeps doing so whatever
# else is added to it: runs in a unit that does not convert, in a memory unit,
# with a zero, a negative or no primary value are listed apart as unrankable
# with their reason; runs in s and us are converted, never compared as bare
# numbers (0.0027 s is 2.7 ms, slower than all four, not the fastest).
# The hostile runs are made here with python3 from the stored liger_tiled run;
# their digests are computed here too, independently of kistore.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs in seconds.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in work
use_store "$SERVERS_DIR/store"
ext=tiled_geglu/backward/liger_tiled/nvidia-geforce-rtx-4090/batch2-hidden2048-intermediate4096-seq1024-bf16/2025-11-11-06-22-57

# hostile OUT.jsonl NAME:UNIT:VALUE... : run documents in liger_tiled's group, one
# per spec, each with the primary measurement VALUE in UNIT (VALUE "none": no
# primary at all), an implementation the store does not hold and an externalId
# whose provider part is NAME (so `rank` names it). Prints "NAME DIGEST" lines.
hostile() {
    local out=$1
    shift
    "$PY" - "$W/base.json" "$out" "$@" <<'PY'
import copy, hashlib, json, sys
base = json.load(open(sys.argv[1], encoding="utf-8"))
out = open(sys.argv[2], "w", encoding="utf-8")
for n, arg in enumerate(sys.argv[3:]):
    name, unit, value = arg.split(":")
    run = copy.deepcopy(base)
    spec = run["spec"]
    spec.pop("timing", None)
    spec["measurements"] = [{"metric": "latency", "statistic": "p20", "unit": "ns", "value": 1}]
    if value != "none":
        v = float(value)
        spec["measurements"].insert(0, {"metric": "latency", "statistic": "median", "unit": unit,
                                        "value": int(v) if v == int(v) else v})
    parts = spec["sourceNative"]["externalId"].split("/")
    parts[2] = name
    spec["sourceNative"]["externalId"] = "/".join(parts)
    spec["implementationDigest"] = "sha256:" + hashlib.sha256(name.encode()).hexdigest()
    spec["observedAt"] = "2025-11-12T00:00:%02d.000Z" % n
    for m in spec["measurements"]:  # JCS = sorted keys for these numbers only
        assert "e" not in repr(m["value"]), m
    text = json.dumps(run, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    out.write(text + "\n")
    print(name, "sha256:" + hashlib.sha256(text.encode()).hexdigest())
PY
}
# digest_of NAME : the digest hostile() printed for NAME
digest_of() { awk -v n="$1" '$1 == n { print $2 }' "$W/digests"; }
# members : "rank implementation value unit" per member of rank --json, one a line
members() { jv '.members[] | "\(.rank) \(.implementation) \(.value) \(.unit)"'; }

assert_exit 0 ks init
assert_exit 0 ks --json import liger "$DATA/liger-sample.csv"
tiled=$(source_run "$S" liger-kernel-bench "$ext")
assert_exit 0 ks cat "$tiled"
printf '%s' "$OUT" >"$W/base.json"
published='1 liger 1491968 ns
2 huggingface 1549920 ns
3 liger_tiled 2606080 ns
4 deepspeed_tiled 2675712 ns'
assert_exit 0 ks --json rank "$tiled"
assert_eq "$published" "$(members)" "the group as published"
group=$(jv .group)
pass "the published group ranks liger, huggingface, liger_tiled, deepspeed_tiled 1-4"

# ---- runs that cannot be compared: never ranked, never displacing ----------
hostile "$W/unrankable.jsonl" widgets:widgets:0.0001 zero:ns:0 negative:ns:-3 none:ns:none \
    bytes:B:5 >"$W/digests"
assert_exit 0 ks --json add "$W/unrankable.jsonl"
assert_eq 5 "$(jv .added)" "five hostile runs added"
assert_exit 0 ks --json rank "$tiled"
assert_eq "$group" "$(jv .group)" "the hostile runs joined the fixture's group"
assert_eq "$published" "$(jv '.members[:4][] | "\(.rank) \(.implementation) \(.value) \(.unit)"')" \
    "the first four keep ranks 1-4"
expected_apart="$(digest_of bytes) null bytes 5 B unit \"B\" does not convert to time (ns, us, ms, s)
$(digest_of negative) null negative -3 ns value -3 is not positive
$(digest_of none) null none null null no primary measurement
$(digest_of widgets) null widgets 0.0001 widgets unit \"widgets\" does not convert to time (ns, us, ms, s)
$(digest_of zero) null zero 0 ns value 0 is not positive"
assert_eq "$(LC_ALL=C sort <<<"$expected_apart")" \
    "$(jv '.members[4:][] | "\(.run) \(.rank) \(.implementation) \(.value) \(.unit) \(.reason)"')" \
    "the unrankable five follow in digest order, rank null, original value and unit, with the reason"
assert_eq 5 "$(jv '[.members[] | select(has("reason"))] | length')" "only unrankable members carry a reason"
pass "rank --json: widgets, B, zero, negative and no primary are unrankable, with reasons"

assert_exit 0 ks rank "$tiled"
row() { grep -F -- "$1" <<<"$OUT" || echo "<no row for $1>"; }
assert_contains "$OUT" "| 9 runs (5 unrankable)" "rank header counts the unrankable"
[[ $(row liger_tiled) =~ ^\*3\  ]] || fail "rank text: the fixture is *3: $(row liger_tiled)"
[[ $(row deepspeed_tiled) =~ ^\ 4\  ]] || fail "rank text: deepspeed_tiled is 4: $(row deepspeed_tiled)"
[[ $(row " zero ") =~ ^\ -\  ]] || fail "rank text: zero has no rank: $(row " zero ")"
assert_contains "$(row " zero ")" "unrankable: value 0 is not positive" "rank text: zero's reason"
assert_contains "$(row " negative ")" "unrankable: value -3 is not positive" "rank text: negative's reason"
assert_contains "$(row " widgets ")" 'unrankable: unit "widgets" does not convert to time' "rank text: widgets' reason"
assert_contains "$(row " none ")" "unrankable: no primary measurement" "rank text: none's reason"
assert_eq 4 "$(grep -c '^[ *][1-4] ' <<<"$OUT")" "four ranked rows"
assert_eq 5 "$(grep -c 'unrankable: ' <<<"$OUT")" "five unrankable rows"
pass "rank text: ranks 1-4 as published, the fixture *3, five rows marked unrankable with the reason"

assert_exit 0 ks show "$tiled"
assert_contains "$(grep '^rank:' <<<"$OUT")" "rank: 3 of 4 in group $group" "show: the fixture is 3 of 4"
assert_exit 0 ks show "$(digest_of zero)"
assert_contains "$(grep '^rank:' <<<"$OUT")" "rank: unranked of 4 in group $group (unrankable: value 0 is not positive)" \
    "show: an unrankable run says why"
assert_exit 0 ks --json show "$(digest_of widgets)"
assert_eq "null 4" "$(jv '"\(.evidence.rank) \(.evidence.of)"')" "show --json: rank null of 4"
assert_contains "$(jv .evidence.reason)" 'unit "widgets" does not convert to time' "show --json: the reason"
assert_exit 0 ks --json show "$tiled"
assert_eq "3 4 false" "$(jv '"\(.evidence.rank) \(.evidence.of) \(.evidence | has("reason"))"')" "show --json of the fixture"
pass "show: the fixture ranks 3 of 4; an unrankable run says why"

assert_exit 0 ks --json groups --benchmark tiled_geglu/backward
assert_eq "1491968 ns" "$(jv --arg g "$group" '.groups[] | select(.group == $g) | "\(.best) \(.unit)"')" \
    "groups: the best is liger's, not a hostile value"
pass "groups: the group's best is the fastest rankable run"

# ---- runs in s and us compare on the time scale, never as bare numbers ------
hostile "$W/units.jsonl" seconds:s:0.0027 micro:us:2676 >>"$W/digests"
assert_exit 0 ks add "$W/units.jsonl"
assert_exit 0 ks --json rank "$tiled"
assert_eq "$published
5 micro 2676 us
6 seconds 0.0027 s" "$(jv '.members[:6][] | "\(.rank) \(.implementation) \(.value) \(.unit)"')" \
    "0.0027 s and 2676 us rank after the four, in their own units"
assert_eq 5 "$(jv '[.members[6:][] | select(.rank == null)] | length')" "the five still unrankable"
assert_exit 0 ks show "$tiled"
assert_contains "$(grep '^rank:' <<<"$OUT")" "rank: 3 of 6 in group $group" "show: 3 of 6 once two slower runs join"
pass "s and us convert: 0.0027 s and 2676 us rank 6 and 5, the four keep 1-4"

assert_exit 0 ks --json rank "$tiled" --min-level source-native
assert_eq "1 liger
2 huggingface
3 liger_tiled
4 deepspeed_tiled" "$(jv '.members[] | select(.rank != null) | "\(.rank) \(.implementation)"' | head -4)" \
    "--min-level keeps the ranking"
pass "rank --min-level source-native keeps the four at 1-4"

assert_exit 0 ks verify
pass "the store with hostile runs still verifies"
summary
