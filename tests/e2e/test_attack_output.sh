#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# Output amplification, attacked: one document shared by many runs. An
# Implementation whose name is 15 MiB (one letter repeated: a few KiB once
# compressed) is named by 20 runs of one group, added with `kistore add`; the
# store's git folder stays small. Before, every reader wrote (runs) x (15 MiB):
# site 3.3 GB and 4.2 GiB of memory, export 314 MB, rank --json 624 MiB.
#
# Now: rank (text, tsv, --json), export (csv, jsonl), show, compare, groups and
# ls each print at most 2 MiB and peak under 200 MiB of memory (the document
# itself is 15 MiB, read once); the name is shown cut after 200 characters
# with "…". The site is a few MB of pages plus the document's whole JSON,
# written once (documents/<hex>.json = `show DIGEST --canonical`), never once
# per run; `show RUN --canonical` stays the exact bundle (one copy of it).
# Under AddressSanitizer (KISTORE_SANITIZED=1) the memory figures are not
# checked (its shadow memory and quarantine dwarf them); the sizes are.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Needs /usr/bin/time.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

[[ -x /usr/bin/time ]] || fail "/usr/bin/time is missing (Debian package time, scripts/deps.sh)"
work_in work
use_store "$SERVERS_DIR/store"
NAME_BYTES=$((15 << 20))
OUT_LIMIT=$((2 << 20))  # bytes a reader may print
RSS_LIMIT=$((200 << 10))  # KiB of peak memory: the 15 MiB document a few times, never once per run

# ---- the store --------------------------------------------------------------------
# bundles.py FIXTURE DIR N : DIR/b00.json holds run 0, the fixture's protocol
# and environment and the implementation with the 15 MiB name; DIR/bNN.json
# runs 1..N-1 (each its own median and externalId) naming it by digest only.
"$PY" - "$FX" "$W/bundles" 20 "$NAME_BYTES" <<'PY'
import copy, hashlib, json, os, sys
fixture = json.load(open(sys.argv[1], encoding="utf-8"))
out, count, name_bytes = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
os.makedirs(out, exist_ok=True)
impl = {"apiVersion": fixture["run"]["apiVersion"], "kind": "Implementation",
        "spec": {"name": "n" * name_bytes, "project": "amplifier"}}
# Strings only: sorted compact JSON is the RFC 8785 form.
text = json.dumps(impl, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
digest = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
for i in range(count):
    bundle = copy.deepcopy(fixture)
    run = bundle["run"]
    run["spec"]["implementationDigest"] = digest
    run["spec"]["timing"]["latencyNs"]["median"] += i
    run["spec"]["sourceNative"]["externalId"] += "-amp%02d" % i
    run.setdefault("metadata", {})["name"] = "amplified-%02d" % i
    if i == 0:
        bundle["implementation"] = impl
    with open(os.path.join(out, "b%02d.json" % i), "w", encoding="utf-8") as f:
        json.dump(bundle, f, ensure_ascii=False)

PY
assert_exit 0 ks init "$S"
assert_exit 0 ks add "$W"/bundles/b*.json
assert_exit 0 ks --json ls --kind BenchmarkRun
runs=$(jv '.documents | length')
assert_eq 20 "$runs" "the 20 runs are stored"
run=$(jv '.documents[0].digest')
other=$(jv '.documents[1].digest')
assert_exit 0 ks --json ls --kind Implementation
impl=$(jv '.documents[0].digest')
[[ $impl == sha256:* ]] || fail "the implementation was stored: $OUT"
store_kib=$(du -sk "$S" | cut -f1)
((store_kib < 1024)) || fail "the store should be small (the name compresses), found ${store_kib} KiB"
pass "a store of ${store_kib} KiB: 20 runs naming one Implementation whose name is 15 MiB"

# ---- each reader: bounded output and memory ---------------------------------------
# bounded WHAT LIMIT CMD... : runs CMD under /usr/bin/time; it exits 0, prints
# at most LIMIT bytes, and peaks under RSS_LIMIT KiB (not under ASan).
bounded() {
    local what=$1 limit=$2
    shift 2
    assert_exit 0 /usr/bin/time -v -o "$W/time" "$KISTORE" --no-progress "$@"
    local bytes rss
    bytes=$(wc -c <"$OUT_FILE")
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$W/time")
    ((bytes <= limit)) || fail "$what: printed $bytes bytes, expected at most $limit"
    if [[ ${KISTORE_SANITIZED:-0} != 1 ]]; then
        ((rss < RSS_LIMIT)) || fail "$what: peaked at $((rss / 1024)) MiB, expected under $((RSS_LIMIT / 1024)) MiB"
    fi
    printf '  %-24s %9d bytes  %6d KiB peak\n' "$what" "$bytes" "$rss"
}
bounded "rank" $OUT_LIMIT rank "$run"
assert_contains "$OUT" "$(printf 'n%.0s' {1..150})" "rank: shows the name's start"
bounded "rank --format tsv" $OUT_LIMIT rank --format tsv "$run"
bounded "rank --json" $OUT_LIMIT --json rank "$run"
cut_name="$(printf 'n%.0s' {1..200})…"
assert_eq "$cut_name" "$(jv '.members[0].implementation')" "rank --json: the name cut after 200 characters with …"
assert_eq 20 "$(jv '.members | length')" "rank --json: every member"
bounded "export csv" $OUT_LIMIT export
assert_eq 21 "$(wc -l <"$OUT_FILE")" "export csv: a header and 20 rows"
bounded "export jsonl" $OUT_LIMIT export --format jsonl
assert_eq "$cut_name" "$(jq -rs '.[0].implementation' "$OUT_FILE")" "export jsonl: the name cut with …"
bounded "show" $OUT_LIMIT show "$run"
bounded "show --json" $((NAME_BYTES + OUT_LIMIT)) --json show "$run"  # one document, whole: no amplification
bounded "compare" $OUT_LIMIT compare "$run" "$other"
bounded "compare --json" $OUT_LIMIT --json compare "$run" "$other"
bounded "groups" $OUT_LIMIT groups
bounded "groups --json" $OUT_LIMIT --json groups
bounded "ls" $OUT_LIMIT ls
bounded "ls --json" $OUT_LIMIT --json ls
# The exact forms stay exact: one copy of the document, never more.
bounded "show --canonical" $((NAME_BYTES + OUT_LIMIT)) show "$run" --canonical
assert_eq "$NAME_BYTES" "$(jq -j '.implementation.spec.name' "$OUT_FILE" | wc -c)" "show --canonical: the name whole"
bounded "show IMPL --canonical" $((NAME_BYTES + OUT_LIMIT)) show "$impl" --canonical
cp "$OUT_FILE" "$W/impl.canonical"
pass "rank, export, show, compare, groups and ls: each at most 2 MiB, under $((RSS_LIMIT / 1024)) MiB of memory; the name cut with …"

# ---- the site: each document's JSON once, pages bounded ---------------------------
O=$W/site
bounded "site" $OUT_LIMIT site "$O"
site_kib=$(du -sk "$O" | cut -f1)
docs_kib=$(du -sk "$O/documents" | cut -f1)
pages_kib=$((site_kib - docs_kib))
((pages_kib < 4096)) || fail "site: ${pages_kib} KiB outside documents/, expected under 4 MiB"
((docs_kib < (NAME_BYTES >> 10) + 1024)) || fail "site: documents/ holds ${docs_kib} KiB: the document more than once?"
cmp -s "$W/impl.canonical" "$O/documents/${impl#sha256:}.json" ||
    fail "site: documents/IMPL.json is not show IMPL --canonical"
big=$(find "$O" -type f -size +1M | grep -cv "/documents/${impl#sha256:}.json" || true)
assert_eq 0 "$big" "site: no file but the document's JSON is over 1 MiB"
group_page=$O/groups/$(ks --json rank "$run" | jq -r .group | cut -d: -f2).html
grep -q "documents/${impl#sha256:}.json" "$group_page" || fail "site: the run's group page links the document's JSON"
grep -q "$(printf 'n%.0s' {1..200})…" "$group_page" || fail "site: the run's group page shows the name cut with …"
pass "site: ${pages_kib} KiB of pages, the 15 MiB document written once (${docs_kib} KiB in documents/), not 20 times"

summary
