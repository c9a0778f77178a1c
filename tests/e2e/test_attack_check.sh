#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# `kistore check` with hostile input: a --since that names no object, a tree,
# a commit outside the branch's history, an ambiguous or malformed id, text
# with terminal escapes; a --since-ref that is malformed, huge, or names no
# reference; both at once. Each is exit 2 with a message that says what was
# expected and what was found, the text escaped, and the store byte for byte
# as it was. Implementation names with terminal escapes and Markdown's
# characters are escaped in the text and Markdown reports and exact in JSON.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs in seconds.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in work
use_store "$W/store"
run=628643ba921878ef6035a1321da64c56f5b4a470a3fa12e9ab5239c742fec354
assert_exit 0 ks init
assert_exit 0 ks import liger "$SRC/tests/data/liger/sample.csv"
ks show "$run" --canonical >"$W/bundle.json"
base=$(head_of "$S")

# Two revisions of an implementation whose name holds ESC [31m, a pipe, a
# backtick and a link: the second 40 % slower than the first.
"$PY" - "$W/bundle.json" "$W/evil.jsonl" <<'PY'
import hashlib, json, sys
b = json.load(open(sys.argv[1]))
out = open(sys.argv[2], "w")
def jcs(doc):
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
for rev, day, ns in [("1", 1, 2000000), ("2", 2, 2010000), ("3", 3, 2800000)]:
    c = json.loads(json.dumps(b))
    impl = c["implementation"]
    impl.pop("metadata", None)
    impl["spec"]["name"] = "evil\x1b[31mRED|`x`[link](http://e.example)"
    impl["spec"]["revision"] = rev + "\x07"
    s = c["run"]["spec"]
    s["implementationDigest"] = "sha256:" + hashlib.sha256(jcs(impl)).hexdigest()
    s.pop("sourceNative", None)
    s["timing"]["latencyNs"]["median"] = ns
    s["measurements"] = [{"metric": "latency", "statistic": "p20", "unit": "ns", "value": ns - 500},
                         {"metric": "latency", "statistic": "p80", "unit": "ns", "value": ns + 500}]
    s["observedAt"] = f"2025-12-{day:02d}T00:00:00Z"
    out.write(json.dumps(c) + "\n")
PY
head -2 "$W/evil.jsonl" >"$W/evil-old.jsonl"
tail -1 "$W/evil.jsonl" >"$W/evil-new.jsonl"
assert_exit 0 ks add "$W/evil-old.jsonl"
mid=$(head_of "$S")
assert_exit 0 ks add "$W/evil-new.jsonl"
pass "setup: an implementation named with escapes, two revisions, then a slower third"

esc=$'\e'
assert_exit_unchanged 1 "$S" "text report" ks check
[[ $OUT != *"$esc"* && $OUT != *$'\a'* ]] || fail "text: a raw control byte reached the terminal"
assert_contains "$OUT" 'evil\x1b[31mRED|`x`[link](http://e.example)' "text: the name, escaped"
assert_exit_unchanged 1 "$S" "markdown report" ks check --format markdown
[[ $OUT != *"$esc"* && $OUT != *$'\a'* ]] || fail "markdown: a raw control byte"
assert_contains "$OUT" 'evil\\x1b\[31mRED\|\`x\`\[link\](http\://e.example)' "markdown: nothing can end the cell or link"
rows=$(grep -c '^| regression' <<<"$OUT" || true)
assert_eq 1 "$rows" "markdown: one row"
assert_eq 10 "$(grep '^| regression' <<<"$OUT" | sed 's/\\|//g' | tr -cd '|' | wc -c | awk '{print $1 - 1}')" \
  "markdown: the row has its 10 cells (no pipe of the name splits one)"
assert_exit_unchanged 1 "$S" "json report" ks --json check
assert_eq "Liger-Kernel/evil${esc}[31mRED|\`x\`[link](http://e.example)" "$(jv '.regressions[0].implementation')" "json: exact"
pass "names with escapes: escaped in text and Markdown, exact in JSON"

tree=$(gd "$S" rev-parse "HEAD^{tree}")
blob=$(gd "$S" rev-parse "HEAD:FORMAT")
# A commit that is not in the branch's history (stock git, made before the
# fingerprint): the head's tree with no parent.
orphan=$(GIT_AUTHOR_NAME=x GIT_AUTHOR_EMAIL=x@example.org GIT_COMMITTER_NAME=x GIT_COMMITTER_EMAIL=x@example.org \
         git --git-dir="$S" commit-tree -m orphan "$tree")
huge=$(printf 'refs/heads/%0100000d' 0)
# hostile NAME STDERR-PART ARGS... : exit 2, the message, the store unchanged,
# nothing on stdout, no raw escape byte on stderr.
hostile() {
    local name=$1 part=$2
    shift 2
    assert_exit_unchanged 2 "$S" "$name" ks check "$@"
    assert_contains "$ERR" "$part" "$name: the message"
    assert_eq "" "$OUT" "$name: nothing on stdout"
    [[ $ERR != *"$esc"* ]] || fail "$name: a raw escape byte on stderr"
    (( ${#ERR} < 4000 )) || fail "$name: a message of ${#ERR} bytes"
}
hostile "unknown commit" "--since \"0123456789abcdef0123456789abcdef01234567\": expected a commit of the store's history, found no object" \
    --since 0123456789abcdef0123456789abcdef01234567
hostile "a tree" "expected a commit, found a tree ($tree)" --since "$tree"
hostile "a blob" "expected a commit, found a blob" --since "$blob"
hostile "not in the history" "expected a commit of the store's history (the branch head" --since "$orphan"
hostile "not hex" "--since: expected a commit id (4 to 40 hex digits), found \"HEAD~1\"" --since 'HEAD~1'
hostile "too short" "expected a commit id (4 to 40 hex digits), found \"abc\"" --since abc
hostile "escapes" 'found "\x1b[31mdead"' --since $'\e[31mdead'
hostile "a huge id" "expected a commit id (4 to 40 hex digits)" --since "$(printf 'a%.0s' {1..5000})"
hostile "a malformed ref" "--since-ref: expected a full reference name" --since-ref 'refs/heads/../x'
hostile "a huge ref" "--since-ref: expected a full reference name" --since-ref "$huge"
hostile "an unknown ref" "--since-ref \"refs/heads/nothing\": expected a reference of this store, found none" \
    --since-ref refs/heads/nothing
hostile "a ref with escapes" '\x1b' --since-ref $'refs/heads/\e[2J'
hostile "both" "--since" --since "$mid" --since-ref refs/heads/main
hostile "bad level" "--min-level: expected one of" --min-level $'\e[31mhigh'
hostile "bad threshold" "--threshold: expected a number greater than 0 and less than 1" --threshold 2
hostile "bad format" "expected one of text, markdown, json" --format html
gd "$S" update-ref refs/tags/to-tree "$tree" 2>/dev/null || gd "$S" update-ref refs/kistore/odd "$blob"
if gd "$S" rev-parse -q --verify refs/tags/to-tree >/dev/null; then
    hostile "a ref to a tree" "expected a reference to a commit, found one to a tree" --since-ref refs/tags/to-tree
fi
gd "$S" update-ref refs/tags/orphan "$orphan"
hostile "a ref outside the history" "expected a commit of the store's history" --since-ref refs/tags/orphan
assert_exit_unchanged 1 "$S" "--json error shape" ks --json check --since "$mid"
assert_exit_unchanged 2 "$S" "--json error" ks --json check --since abc
assert_eq 2 "$(jv '.error.code')" "the error document"
pass "hostile --since and --since-ref: exit 2, the message, nothing written"
summary
