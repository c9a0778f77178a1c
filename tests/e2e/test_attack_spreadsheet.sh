#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# Spreadsheet injection through kistore's spreadsheet output: runs whose
# implementation is named like a formula (=HYPERLINK(…), a leading space or
# tab before =, the full-width ＝ ＋ － ＠ after an ideographic space, a
# formula after a `;` or a `,` for spreadsheets that split there, a name
# that reads as a number) are added, then `kistore export` (CSV) and the TSV
# listings (rank, groups, ls, log --format tsv) are read as a spreadsheet of
# each common locale would read them: split at `,`, at `;` and at tabs
# (CSV quoting honoured only where a cell starts, as a spreadsheet of another
# locale does; TSV has none). No cell of any of them may start, after leading
# spaces, with = + - @ a tab or a line break or their full-width forms,
# unless it is a plain number; the CSV read at `,` gives every name back
# with a ' where it was neutralised (first, OWASP's rule, and after a
# separator that a formula follows), every number as it was.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs in seconds.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
work_in work
use_store "$SERVERS_DIR/store"
run=628643ba921878ef6035a1321da64c56f5b4a470a3fa12e9ab5239c742fec354   # liger_tiled on the RTX 4090
assert_exit 0 ks init
assert_exit 0 ks import liger "$SRC/tests/data/liger/sample.csv"
ks show "$run" --canonical >"$W/bundle.json"
names=$W/names.json
"$PY" - >"$names" <<'PY'
import json
print(json.dumps([
    '=HYPERLINK("http://x","y")',
    'a;=1+1',
    'b,=1+1',
    ' =1+1',
    '\t=1+1',
    '\u3000\uff1d1+1',
    '\uff0b1+1',
    '\uff0d1+1',
    '\uff20SUM(A1)',
    'c, -2+3',
    'd;\u00a0@SUM(A1)',
    '-1.5',
]))
PY
"$PY" - "$W/bundle.json" "$names" "$W" <<'PY'
import hashlib, json, sys
for i, name in enumerate(json.load(open(sys.argv[2]))):
    b = json.load(open(sys.argv[1]))
    impl = b["implementation"]
    impl["spec"]["name"] = name
    impl.pop("metadata", None)
    jcs = json.dumps(impl, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    s = b["run"]["spec"]
    s["implementationDigest"] = "sha256:" + hashlib.sha256(jcs.encode()).hexdigest()
    del s["sourceNative"]
    s["timing"]["latencyNs"]["median"] = 2000000 + 1000 * i
    json.dump(b, open("%s/hostile-%02d.json" % (sys.argv[3], i), "w"), ensure_ascii=False)
PY
assert_exit 0 ks add "$W"/hostile-*.json
pass "a store with runs named like formulas, before and after spaces, separators and in full-width forms"

# check.py FORMAT FILE: every cell, split as each locale's spreadsheet would, is not a formula.
cat >"$W/check.py" <<'PY'
import csv, io, re, sys
fmt, path = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8", newline="").read()
spaces = " \u00a0\u3000"
starts = "=+-@\t\r\n\uff1d\uff0b\uff0d\uff20\ufe66\ufe62\ufe63\ufe6b\u2212"
number = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?$")
bad = []
for sep in (",", ";", "\t"):
    if fmt == "csv":
        rows = list(csv.reader(io.StringIO(text), delimiter=sep))
    else:  # TSV has no quoting: a spreadsheet splits each line at the separator
        rows = [line.split(sep) for line in text.split("\n") if line]
    for row in rows:
        for cell in row:
            if number.match(cell):
                continue
            if cell.lstrip(spaces)[:1] and cell.lstrip(spaces)[0] in starts:
                bad.append((repr(sep), cell))
if bad:
    sys.exit("cells a spreadsheet would run: %r" % bad[:5])
PY

assert_exit 0 ks export
printf '%s\n' "$OUT" >"$W/export.csv"
"$PY" "$W/check.py" csv "$W/export.csv" || fail "export: a cell reads as a formula"
"$PY" - "$W/export.csv" "$names" <<'PY' || fail "export: the names do not read back"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8", newline="")))
got = {r["implementation"] for r in rows}
def formula(t):
    t = t.lstrip(" \u00a0\u3000")
    return t[:1] != "" and t[0] in "=+-@\t\r\uff1d\uff0b\uff0d\uff20\ufe66\ufe62\ufe63\ufe6b\u2212"
for name in json.load(open(sys.argv[2])):
    want = "'" if formula(name) else ""
    for i, c in enumerate(name):
        want += c + ("'" if c in ",;\t\n\r" and formula(name[i + 1:]) else "")
    assert want in got, (name, want, sorted(got))
values = [r["value"] for r in rows]
assert all(float(v) > 0 for v in values), values  # numbers are numbers, not neutralised
PY
assert_contains "$(cat "$W/export.csv")" \"a\;\'=1+1\" "a cell with ; is quoted, and neutralised after the ;"
assert_contains "$(cat "$W/export.csv")" $'"\'\t\'=1+1"' "a cell with a tab is quoted, and neutralised first and after the tab"
pass "export: quoted at , ; and tab, neutralised after spaces and in full-width forms; names read back with their '"

for cmd in "rank $run" groups "ls" "log"; do
    # shellcheck disable=SC2086
    assert_exit 0 ks $cmd --format tsv
    printf '%s\n' "$OUT" >"$W/listing.tsv"
    "$PY" "$W/check.py" tsv "$W/listing.tsv" || fail "$cmd --format tsv: a cell reads as a formula"
done
assert_exit 0 ks rank "$run" --format tsv
assert_contains "$OUT" "'=HYPERLINK(\"http://x\",\"y\")" "rank tsv: the formula neutralised"
assert_contains "$OUT" $'a;\'=1+1' "rank tsv: after a ;"
assert_contains "$OUT" $'\t-1.5\t' "rank tsv: a plain number stays a number"
pass "TSV listings (rank, groups, ls, log): no field, nor a part after , or ;, reads as a formula; numbers stay numbers"
summary
