#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# `kistore log --group KEY` with the real binary: a comparison group's history,
# newest first. The store is built here in commits that each change the group
# of the seed fixture's row (tiled_geglu backward, liger_tiled, RTX 4090) in
# one way, with commits of other groups between them:
#   1. import liger's sample: the group's four runs, ranked 1-4;
#   2. add a faster run of another implementation: rank 1, the four move down one;
#   3. attest a run of another group (no part of this story);
#   4. attest liger_tiled;
#   5. a signed controlled rerun of liger_tiled: source-native -> reproduced.
# Then: the text, --json, --format tsv, -n and --op, the run REF that names
# the group, and bad input (exit code, message, store unchanged).
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs in seconds.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in work
use_store "$SERVERS_DIR/store"
tiled=sha256:628643ba921878ef6035a1321da64c56f5b4a470a3fa12e9ab5239c742fec354
short() { local d=${1#sha256:}; printf '%s' "${d:0:12}"; }

# ---- the store ------------------------------------------------------------------
assert_exit 0 ks init
assert_exit 0 ks import liger "$SRC/tests/data/liger/sample.csv"
assert_exit 0 ks --json rank 628643ba
group=$(jv .group)
mapfile -t members < <(jv '.members[].run')  # by rank: liger, huggingface, liger_tiled, deepspeed_tiled
assert_eq "liger huggingface liger_tiled deepspeed_tiled" "$(jv '[.members[].implementation] | join(" ")')" \
    "the seed's group as imported"
ks show 628643ba --canonical >bundle.json
# fastest.json: liger_tiled's bundle with another implementation and a median of 1 ms,
# faster than all four; close.json: a rerun of liger_tiled 1.7 % slower (reproduced).
"$PY" - <<'PY'
import hashlib, json
b = json.load(open("bundle.json"))
fast = json.loads(json.dumps(b))
s = fast["run"]["spec"]
s["timing"]["latencyNs"]["median"] = 1000000
parts = s["sourceNative"]["externalId"].split("/")
parts[2] = "fastest"
s["sourceNative"]["externalId"] = "/".join(parts)
s["implementationDigest"] = "sha256:" + hashlib.sha256(b"fastest").hexdigest()
fast["run"].pop("metadata", None)
json.dump({k: fast[k] for k in ("run", "protocol", "environment")}, open("fastest.json", "w"))
s = b["run"]["spec"]
s["timing"]["latencyNs"]["median"] = 2650000
s["observedAt"] = "2026-11-30T09:00:00.000Z"
del s["sourceNative"]
json.dump(b, open("close.json", "w"))
PY
assert_exit 0 ks add fastest.json
fastest=$(awk '$1 == "new" && $3 == "BenchmarkRun" {print $2}' <<<"$OUT")
[[ $fastest == sha256:* ]] || fail "add did not name the new run: $OUT"
other_group_run=$(ks ls --kind BenchmarkRun | cut -d' ' -f1 | grep -v -F -f <(printf '%s\n' "${members[@]}" "$fastest") | head -1)
assert_exit 0 ks attest "$other_group_run" --note "another group"
assert_exit 0 ks attest 628643ba --note "matches our numbers"
attestation=$(awk '$1 == "new" && $3 == "Attestation" {print $2}' <<<"$OUT")
[[ $attestation == sha256:* ]] || fail "attest did not name the attestation: $OUT"
cp "$SRC/tests/data/keys/controller" "$SRC/tests/data/keys/controller.pub" .
chmod 600 controller
assert_exit 0 ks trust add controller@example.org controller.pub
assert_exit 0 ks --json rerun 628643ba close.json --sign controller
rerun=$(jv .rerun)
assert_eq reproduced "$(jv .level)" "the rerun reproduces"
pass "a store whose group changed in four commits, with another group's commit between them"

# ---- the text ---------------------------------------------------------------------
assert_exit 0 ks log --group "${group#sha256:}"
text=$OUT
assert_eq "group $group" "$(head -1 <<<"$text")" "the text names the group first"
assert_eq "rerun attest add import" "$(awk '/^Op:/ {printf "%s%s", sep, $2; sep=" "}' <<<"$text")" \
    "four commits, newest first; the other group's attestation is not one of them"
for line in \
    "    $(short "$fastest") fastest: added, 1.000 ms, source-native, rank 1 of 5" \
    "    $(short "${members[0]}") liger: rank 1 → 2" \
    "    $(short "${members[1]}") huggingface: rank 2 → 3" \
    "    $(short $tiled) liger_tiled: rank 3 → 4" \
    "    $(short "${members[3]}") deepspeed_tiled: rank 4 → 5" \
    "    $(short "${members[0]}") liger: added, 1.492 ms, source-native, rank 1 of 4" \
    "    $(short "${members[3]}") deepspeed_tiled: added, 2.676 ms, source-native, rank 4 of 4" \
    "    $(short $tiled) liger_tiled: attested by $(short "$attestation")" \
    "    $(short $tiled) liger_tiled: level source-native → reproduced (rerun $(short "$rerun"))" \
    "    $(short $tiled) liger_tiled: rerun $(short "$rerun") recorded (reproduced, ratio 1.017)"; do
    grep -qxF -- "$line" <<<"$text" || fail "log --group lacks the line: $line
$text"
done
assert_contains "$text" "Signed: good signature by controller@example.org" "the rerun's signer"
assert_contains "$text" "trusted controller" "and that it is trusted"
assert_not_contains "$text" "$(short "$other_group_run")" "another group's run is never named"
pass "log --group: runs added with implementation, median, level and rank; each rank move; the level change with its rerun; the attestation"

# A run names its group, as rank takes it.
assert_exit 0 ks log --group 628643ba
assert_eq "$text" "$OUT" "log --group RUN is the story of the run's group"
assert_exit 0 ks log --group "$group"
assert_eq "$text" "$OUT" "the full key, sha256: and all"
pass "log --group takes the full key, an 8+ hex prefix, or a run of the group"

# ---- --json, --format tsv ---------------------------------------------------------
assert_exit 0 ks --json log --group "${group:7:10}"
"$PY" - "$OUT" "$group" "$fastest" "$tiled" "$rerun" "$attestation" <<'PY'
import json, sys
out, group, fastest, tiled, rerun, attestation = json.loads(sys.argv[1]), *sys.argv[2:]
assert out["group"] == group, out["group"]
e = out["entries"]
assert [x["op"] for x in e] == ["rerun", "attest", "add", "import"], [x["op"] for x in e]
assert [(x["members"], x["ranked"]) for x in e] == [(5, 5), (5, 5), (5, 5), (4, 4)]
rr, att, add, imp = e
assert [(a["implementation"], a["rank"], a["value"], a["unit"], a["level"]) for a in imp["added"]] == [
    ("liger", 1, 1491968, "ns", "source-native"), ("huggingface", 2, 1549920, "ns", "source-native"),
    ("liger_tiled", 3, 2606080, "ns", "source-native"), ("deepspeed_tiled", 4, 2675712, "ns", "source-native")]
assert imp["ranks"] == [] and imp["levels"] == []
assert [(a["run"], a["rank"], a["implementation"]) for a in add["added"]] == [(fastest, 1, "fastest")]
assert [(r["implementation"], r["from"], r["to"]) for r in add["ranks"]] == [
    ("liger", 1, 2), ("huggingface", 2, 3), ("liger_tiled", 3, 4), ("deepspeed_tiled", 4, 5)], add["ranks"]
assert [r["run"] for r in add["ranks"] if r["implementation"] == "liger_tiled"] == [tiled]
assert att["attestations"] == [{"run": tiled, "implementation": "liger_tiled", "attestation": attestation, "added": True}]
assert att["added"] == att["ranks"] == att["levels"] == []
assert rr["levels"] == [{"run": tiled, "implementation": "liger_tiled", "from": "source-native",
                         "to": "reproduced", "evidence": rerun}], rr["levels"]
assert [(r["rerun"], r["verdict"], r["added"]) for r in rr["reruns"]] == [(rerun, "reproduced", True)]
assert rr["ranks"] == [] and rr["added"] == []
assert rr["signature"]["status"] == "trusted" and rr["signature"]["principal"] == "controller@example.org"
assert att["signature"]["status"] == "unsigned"
assert any("rank 3 → 4" in c for c in add["changes"]), add["changes"]
PY
pass "log --group --json: the rank changes, the level change and its evidence, counts, signers"
assert_exit 0 ks log --group 628643ba --format tsv
assert_eq "commit	parents	time	author	op	signed	summary	changes" "$(head -1 <<<"$OUT")" "tsv header"
assert_eq 5 "$(wc -l <<<"$OUT")" "tsv: a header and four commits"
assert_eq "rerun attest add import" "$(tail -n +2 <<<"$OUT" | cut -f5 | tr '\n' ' ' | sed 's/ $//')" "tsv: the ops"
assert_contains "$(sed -n 4p <<<"$OUT" | cut -f8)" "$(short $tiled) liger_tiled: rank 3 → 4" "tsv: the changes column"
pass "log --group --format tsv: one line per commit, the changes in the last column"

# ---- -n and --op --------------------------------------------------------------------
assert_exit 0 ks --json log --group 628643ba -n 2
assert_eq "rerun attest" "$(jv '[.entries[].op] | join(" ")')" "-n 2: the newest two"
assert_exit 0 ks --json log --group 628643ba --op add
assert_eq "add" "$(jv '[.entries[].op] | join(" ")')" "--op add: the one add"
assert_eq 4 "$(jv '.entries[0].ranks | length')" "--op add: with its rank changes"
assert_exit 0 ks --json log --group 628643ba --op attest -n 5
assert_eq "$attestation" "$(jv '[.entries[].attestations[].attestation] | join(" ")')" \
    "--op attest: the group's attestation only"
assert_exit 0 ks --json log --group 628643ba -n 0
assert_eq 0 "$(jv '.entries | length')" "-n 0 shows none"
assert_exit 0 ks log --group 628643ba --op upgrade
assert_eq "group $group" "$OUT" "--op with no such commit: the group, no entry"
pass "log --group with -n and --op"

# ---- bad input: exit code, message, store unchanged ---------------------------------
# Two groups whose keys share their first 8 hex digits: runs of liger_tiled's
# protocol and GPU on two workloads (named by digest only, allowed: external),
# found once by a search over workload digests (this python checks the pair).
read -r w1 w2 prefix < <("$PY" - <<'PY'
import hashlib, json
b = json.load(open("bundle.json"))["run"]["spec"]
def key(w):
    doc = {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "ComparisonKey",
           "spec": {"environmentDigest": b["environmentDigest"], "protocolDigest": b["protocolDigest"], "workloadDigest": w}}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
w = ["sha256:" + hashlib.sha256(b"w%d" % i).hexdigest() for i in (20735, 96607)]
assert key(w[0])[:8] == key(w[1])[:8], "the workload pair no longer collides: search again"
print(w[0], w[1], key(w[0])[:8])
PY
)
"$PY" - "$w1" "$w2" >twins.jsonl <<'PY'
import json, sys
for w in sys.argv[1:]:
    r = json.load(open("bundle.json"))["run"]
    r["spec"]["workloadDigest"] = w
    del r["spec"]["sourceNative"]
    r.pop("metadata", None)
    print(json.dumps(r))
PY
assert_exit 0 ks add twins.jsonl
assert_exit 0 ks groups --format tsv
assert_eq 2 "$(cut -f1 <<<"$OUT" | grep -c "^sha256:$prefix")" "two groups share the prefix $prefix"

before=$(store_fingerprint "$S")
assert_exit 1 ks log --group deadbeefdeadbeef
assert_eq 'error: --group "deadbeefdeadbeef": no comparison group or run in the store matches; expected a group key as kistore groups or rank print it (a full digest or 8+ hex digits), or a run' \
    "$ERR" "unknown key: what was given and what was expected"
assert_eq "" "$OUT" "nothing on stdout"
assert_exit 1 ks --json log --group deadbeefdeadbeef
assert_eq 1 "$(jv .error.code)" "--json: the error's code"
assert_contains "$(jv .error.message)" '--group "deadbeefdeadbeef": no comparison group or run' "--json: the message"
assert_exit 2 ks log --group "$prefix"
mapfile -t twins < <(ks groups --format tsv | cut -f1 | grep "^sha256:$prefix" | sort)
assert_eq "error: --group \"$prefix\" is ambiguous: it matches 2 groups (${twins[0]}, ${twins[1]}); give more of the key's hex digits" \
    "$ERR" "ambiguous prefix: both groups named"
assert_exit 2 ks log --group 1234
assert_contains "$ERR" '--group "1234": expected a run or group digest, or a prefix of at least 8 hex digits' "too short"
assert_exit 2 ks log --group "$(jq -r .run.spec.protocolDigest bundle.json)"
assert_contains "$ERR" "expected a run or a group, found a BenchmarkProtocol" "a document that is not a run"
assert_exit 2 ks log --group 628643ba --run 628643ba
assert_contains "$ERR" "--run and --group: expected one of them, found both" "--run and --group together"
assert_exit 2 ks log --group 628643ba --op nope
assert_contains "$ERR" "--op" "an unknown op"
assert_store_unchanged "$before" "$S" "log --group with bad input"
pass "log --group: unknown key (exit 1), ambiguous prefix, malformed, not a run, with --run (exit 2); the store unchanged"

summary
