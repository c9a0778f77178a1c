#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153,SC2016
# End-to-end tour of kistore as a new user meets it: canon and digest without a
# store, init (default, --store, KISTORE_DIR), add in every input shape (file,
# stdin, JSON array, JSON Lines, folder), show / cat / ls / log, verify, stock
# git's view of the store (fsck --strict, plain clones that kistore opens), and
# verify FILE on bundles.  Expected values come from SPEC.md, the RFC 8785
# goldens in tests/data/jcs/ and digests computed here independently of kistore
# (tests/data/e2e/make_runs.py, sha256sum), never from kistore's own output.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root).  Runs in < 60 s,
# as root or not, with stdin closed; everything lives in a temp dir it removes.
# E2E_KEEP_GOING=1 records a failed check and goes on (to see every failure).
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
# jcs_of FILE PYEXPR : RFC 8785 bytes of the value PYEXPR (of d, the file's JSON)
# without its top-level metadata, made by Python (sorted keys, no whitespace:
# JCS for the fixture's content), independently of kistore.
jcs_of() {
    "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
v = eval(sys.argv[2])
if isinstance(v, dict):
    v = {k: x for k, x in v.items() if k != "metadata"}
sys.stdout.write(json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False))' "$1" "$2"
}
# ------------------------------------------------------------------------------

RUN=sha256:334face30acaee76778d58ce984b0b0c0d1e0749650f88ab778b4563c58241a0
PROT=sha256:080e6e66e4ec75a131aa0c9121c74b8e8eed64e7b6d621d567c6a28f79548be8
ENV=sha256:e2646efafa5e5fbd428b49a99b1c076c10d51654a549c4e50ec36da7662d4328
WL=sha256:7477e51bd95bff47821a6d62d904a46ce595577d4de14aaaa025304660c6fed1
IMPL=sha256:273de05b950c7c7353e9e2b0d88f29cab729451b9b3034c01494e1d02bac3c46
JCS=$SRC/tests/data/jcs
W=$SERVERS_DIR/w
mkdir -p "$W"
cd "$W"

# ============================== canon, digest ================================
for ex in 3.2.2 3.2.3; do
    assert_exit 0 ks canon "$JCS/rfc8785-$ex.input.json"
    cmp -s "$OUT_FILE" "$JCS/rfc8785-$ex.canonical" || fail "canon FILE: bytes differ from RFC 8785 §$ex golden"
    pass "canon FILE gives the RFC 8785 §$ex golden bytes exactly"
done
assert_exit 0 ks canon <"$JCS/rfc8785-3.2.2.input.json"
cmp -s "$OUT_FILE" "$JCS/rfc8785-3.2.2.canonical" || fail "canon (stdin): bytes differ from golden"
pass "canon without FILE reads stdin"
assert_exit 0 ks canon - <"$JCS/rfc8785-3.2.2.input.json"
cmp -s "$OUT_FILE" "$JCS/rfc8785-3.2.2.canonical" || fail "canon -: bytes differ from golden"
pass "canon - reads stdin"

assert_exit 0 ks digest "$FX"
assert_eq "$RUN BenchmarkRun run
$PROT BenchmarkProtocol protocol
$ENV ExecutionEnvironment environment" "$OUT" "digest of the fixture"
pass "digest of the seed fixture reproduces KernelIndex's run, protocol and environment digests"
assert_exit 0 ks digest - <"$FX"
assert_contains "$OUT" "$RUN BenchmarkRun run" "digest -"
pass "digest - reads stdin"

# =================================== init ====================================
mkdir -p "$W/cwd" && cd "$W/cwd"
assert_exit 0 ks init
S=$W/cwd/.kistore
[[ -d $S ]] || fail "init without DIR did not create .kistore in the current directory"
assert_eq true "$(git --git-dir="$S" rev-parse --is-bare-repository)" "default store is bare"
assert_eq refs/heads/main "$(git --git-dir="$S" symbolic-ref HEAD)" "HEAD names main"
pass "init creates a bare store at ./.kistore whose HEAD names main"
assert_exit 0 ks ls
assert_eq "" "$OUT" "ls of an empty store"
pass "an empty store lists nothing"
assert_exit '!0' ks init
assert_exit 0 ks verify
pass "init over an existing store is refused and the store still verifies"

assert_exit 0 ks --store "$W/by-flag" init
assert_eq true "$(git --git-dir="$W/by-flag" rev-parse --is-bare-repository 2>&1)" "--store init"
pass "init with --store DIR creates the store there"
assert_exit 0 env KISTORE_DIR="$W/by-env" "$KISTORE" --no-progress init
assert_eq true "$(git --git-dir="$W/by-env" rev-parse --is-bare-repository 2>&1)" "KISTORE_DIR init"
assert_exit 0 env KISTORE_DIR="$W/by-env" "$KISTORE" --no-progress add "$FX"
assert_exit 0 ks --store "$W/by-env" ls
assert_contains "$OUT" "$RUN" "store named by KISTORE_DIR holds the run"
pass "KISTORE_DIR names the store for init and add"
assert_exit 0 ks init "$W/by-arg"
assert_eq true "$(git --git-dir="$W/by-arg" rev-parse --is-bare-repository 2>&1)" "init DIR"
pass "init DIR creates the store at DIR"

# ============================== add the fixture ==============================
assert_exit 0 ks --json add "$FX"
assert_eq 3 "$(jv .added)" "add: added"
assert_eq 0 "$(jv .present)" "add: present"
assert_eq '[]' "$(jv -c .rejected)" "add: rejected"
C1=$(head_of "$S")
assert_eq "$C1" "$(jv .commit)" "add --json commit is the new head of main"
pass "add FIXTURE --json: added 3, present 0, rejected [], commit = main"
assert_eq 1 "$(git --git-dir="$S" rev-list --count main)" "one commit"
assert_eq "add" "$(git --git-dir="$S" log -1 --format='%(trailers:key=Kistore-Op,valueonly)' main | sed '/^$/d')" "Kistore-Op trailer"
assert_eq "kistore e2e <e2e@example.invalid>" "$(git --git-dir="$S" log -1 --format='%an <%ae>' main)" "author from KISTORE_AUTHOR"
assert_eq "kistore e2e <e2e@example.invalid>" "$(git --git-dir="$S" log -1 --format='%cn <%ce>' main)" "committer from KISTORE_AUTHOR"
pass "the add is one commit, author and committer KISTORE_AUTHOR, trailer Kistore-Op: add"
# No identity anywhere (a fresh machine): kistore falls back to a fixed one
# (SPEC §2); git's user.name/user.email, where set, come before it.
anon() { env -u KISTORE_AUTHOR -u GIT_AUTHOR_NAME -u GIT_AUTHOR_EMAIL -u GIT_COMMITTER_NAME \
    -u GIT_COMMITTER_EMAIL "$KISTORE" --no-progress --store "$W/anon" "$@"; }
assert_exit 0 anon init
assert_exit 0 anon add "$FX"
assert_eq "kistore <kistore@localhost>|kistore <kistore@localhost>" \
    "$(git --git-dir="$W/anon" log -1 --format='%an <%ae>|%cn <%ce>' main)" "fallback author and committer"
assert_contains "$ERR" "warning: the author was kistore <kistore@localhost>, for want of an identity; set yours with KISTORE_AUTHOR=" \
    "the fallback identity is said, with how to set one"
assert_eq 1 "$(grep -c '^warning:' <<<"$ERR")" "one warning line"
git --git-dir="$W/anon" config user.name "Store Owner"
git --git-dir="$W/anon" config user.email owner@example.invalid
mkruns --start 1 --count 1 >"$W/anon-one.jsonl"
assert_exit 0 anon add "$W/anon-one.jsonl"
assert_eq "Store Owner <owner@example.invalid>" "$(git --git-dir="$W/anon" log -1 --format='%an <%ae>' main)" \
    "author from git's user.name/user.email"
assert_not_contains "$ERR" "warning:" "no warning with git's identity"
pass "without --author, KISTORE_AUTHOR or git identity, commits are by kistore <kistore@localhost>; git config comes first"

# the on-disk layout of SPEC.md §2, checked with stock git and zstd
tree=$(git --git-dir="$S" ls-tree -r --name-only main)
rhex=${RUN#sha256:}
opath=objects/sha256/${rhex:0:2}/${rhex:2:2}/${rhex:4}
assert_contains "$tree" "$opath" "run object path"
git --git-dir="$S" cat-file blob "main:$opath" >"$W/run.zst"
zstd -q -t "$W/run.zst" 2>/dev/null || fail "$opath is not a valid zstd frame"
assert_contains "$(zstd -lv "$W/run.zst" 2>&1)" "Check: XXH64" "object frame carries a content checksum"
assert_eq "$rhex" "$(zstd -q -dc "$W/run.zst" | sha256sum | cut -c1-64)" "object bytes hash to the path"
pass "objects/sha256/33/4f/<60 hex> is a checksummed zstd frame whose bytes hash to the run digest"
for d in "$PROT" "$ENV"; do
    h=${d#sha256:}
    assert_eq "$h" "$(git --git-dir="$S" cat-file blob "main:objects/sha256/${h:0:2}/${h:2:2}/${h:4}" | zstd -q -dc | sha256sum | cut -c1-64)" "object $d"
done
pass "protocol and environment objects hash to their digests"
key_doc='{"apiVersion":"kernelindex.dev/v1alpha1","kind":"ComparisonKey","spec":{"environmentDigest":"'$ENV'","protocolDigest":"'$PROT'","workloadDigest":"'$WL'"}}'
KEY=$(printf '%s' "$key_doc" | sha256sum | cut -c1-64)
ext=$(jq -r .run.spec.sourceNative.externalId "$FX")
SKEY=$(source_key liger-kernel-bench "$ext")
meta_line() { printf '{"@key":"%s","metadata":%s}' "${1#sha256:}" "$(jcs_of "$FX" "$2")"; }
# Format 3 (SPEC §2): FORMAT, then each index family a trie of JSON Lines
# files; with one line per prefix digit, each line is alone in the file named
# by its key's first digit. The run stands at its default level
# (source-native): it has no levels line, so there is no refs/levels/ at all.
assert_eq 'kistore 3' "$(git --git-dir="$S" cat-file blob main:FORMAT)" "FORMAT"
assert_eq 10 "$(git --git-dir="$S" cat-file -s main:FORMAT)" "FORMAT is exactly \"kistore 3\\n\""
assert_eq "$(printf '%s\n' "refs/groups/${KEY:0:1}" "refs/metadata/${PROT:7:1}" "refs/metadata/${rhex:0:1}" \
    "refs/metadata/${ENV:7:1}" "refs/sources/${SKEY:0:1}" | sort)" \
    "$(git --git-dir="$S" ls-tree -r --name-only main refs/)" "the index files: one per family and first key digit"
pass "FORMAT is \"kistore 3\\n\"; refs/ holds refs/groups/0, refs/metadata/{0,3,e}, refs/sources/<digit> and no refs/levels"
assert_eq "{\"@key\":\"$KEY$rhex\",\"metric\":\"latency\",\"statistic\":\"median\",\"unit\":\"ns\",\"value\":2606080}" \
    "$(git --git-dir="$S" cat-file blob "main:refs/groups/${KEY:0:1}" 2>&1)" "group line"
assert_eq "refs/groups/${KEY:0:1}" "$(index_file "$S" groups "$KEY$rhex")" "index_file finds the group line's file"
pass "refs/groups/0 holds the run's group line: @key comparison key + run, the primary measurement (JCS)"
assert_eq "" "$(git --git-dir="$S" ls-tree main refs/levels)" "no refs/levels"
if index_line "$S" levels "$rhex" >/dev/null 2>&1; then fail "the run has a levels line at its default level"; fi
assert_exit 0 ks ls --level source-native
assert_eq "$RUN" "$(awk '{print $1}' <<<"$OUT")" "ls --level source-native: the run"
assert_exit 0 ks --json show "$RUN"
assert_eq source-native "$(jv .evidence.level)" "show --json: source-native"
pass "the run has no levels line (its default level); ls --level and show say source-native"
assert_eq "{\"@key\":\"$SKEY\",\"externalId\":\"$ext\",\"run\":\"$RUN\",\"source\":\"liger-kernel-bench\"}" \
    "$(git --git-dir="$S" cat-file blob "main:refs/sources/${SKEY:0:1}" 2>&1)" "source line"
assert_eq "$RUN" "$(source_run "$S" liger-kernel-bench "$ext")" "source_run"
pass "refs/sources/<digit> holds the claim, keyed by sha256(source NUL externalId), naming the run"
assert_eq "$(meta_line "$RUN" 'd["run"]["metadata"]')" \
    "$(git --git-dir="$S" cat-file blob "main:refs/metadata/${rhex:0:1}" 2>&1)" "run metadata line"
assert_eq "$(meta_line "$PROT" 'd["protocol"]["metadata"]')" "$(index_line "$S" metadata "${PROT#sha256:}")" "protocol metadata line"
assert_eq "$(meta_line "$ENV" 'd["environment"]["metadata"]')" "$(index_line "$S" metadata "${ENV#sha256:}")" "environment metadata line"
pass "refs/metadata/<digit> holds each document's metadata line in JCS"

# re-adding changes nothing
assert_exit 0 ks --json add "$FX"
assert_eq 0 "$(jv .added)" "re-add: added"
assert_eq 3 "$(jv .present)" "re-add: present"
assert_eq "$C1" "$(head_of "$S")" "re-add must not move main"
[[ $(jv .commit) == null || $(jv .commit) == "$C1" ]] || fail "re-add: commit should be null or the unchanged head, got $(jv .commit)"
pass "re-adding the fixture: added 0, present 3, no new commit"

# differing metadata: the first stays, the difference is reported
jq '.run.metadata.title = "Another title"' "$FX" >"$W/meta2.json"
assert_exit 0 ks --json add "$W/meta2.json"
assert_eq 3 "$(jv .present)" "other metadata: present"
assert_eq "$C1" "$(head_of "$S")" "other metadata must not move main"
assert_contains "$ERR" "metadata" "other metadata is reported"
assert_exit 0 ks show "$RUN"
assert_contains "$OUT" "GeGLU MLP (tiled benchmark) · liger_tiled · backward" "first metadata stays"
assert_not_contains "$OUT" "Another title" "second metadata must not replace the first"
pass "adding the same documents with other metadata keeps the first and reports the difference"

# ========================== every shape of input ============================
# stdin
mkruns --start 1 --count 1 >"$W/one.jsonl"
assert_exit 0 ks --json add - <"$W/one.jsonl"
assert_eq 1 "$(jv .added)" "stdin: added"
assert_eq 2 "$(jv .present)" "stdin: present (protocol, environment)"
assert_eq "$(head_of "$S")" "$(jv .commit)" "stdin: commit"
pass "add - reads a bundle from stdin"
# JSON array
mkruns --start 2 --count 3 --format array >"$W/array.json"
assert_exit 0 ks --json add --author 'Array Adder <array@example.invalid>' "$W/array.json"
assert_eq 3 "$(jv .added)" "array: added"
assert_eq "Array Adder <array@example.invalid>" "$(git --git-dir="$S" log -1 --format='%an <%ae>' main)" "author from --author"
pass "add of a JSON array of bundles (with --author, which names the commit's author)"
# JSON Lines
mkruns --start 5 --count 4 --format jsonl >"$W/runs.jsonl"
assert_exit 0 ks --json add "$W/runs.jsonl"
assert_eq 4 "$(jv .added)" "jsonl: added"
assert_eq '[]' "$(jv -c .rejected)" "jsonl: rejected"
pass "add of JSON Lines (one bundle per line)"
# a folder, read recursively: *.json and *.jsonl only
mkdir -p "$W/dir/sub/deeper"
mkruns --start 9 --count 2 --format jsonl >"$W/dir/sub/two.jsonl"
mkruns --start 11 --count 1 --format array >"$W/dir/one.json"
mkruns --start 12 --count 1 --format jsonl >"$W/dir/sub/deeper/last.json"
printf 'not json\n' >"$W/dir/notes.txt"
printf '{broken' >"$W/dir/old.json.bak"
printf 'a,b\n1,2\n' >"$W/dir/table.csv"
printf '{broken' >"$W/dir/sub/README"
assert_exit 0 ks --json add "$W/dir"
assert_eq 4 "$(jv .added)" "folder: added"
assert_eq '[]' "$(jv -c .rejected)" "folder: rejected"
pass "add FOLDER reads *.json and *.jsonl recursively and ignores other files"
assert_eq 5 "$(git --git-dir="$S" rev-list --count main)" "one commit per add that added something"
assert_eq "" "$(git --git-dir="$S" rev-list --merges main)" "no merges"
pass "five adds made five commits, linear history"

# two runs that SPEC's default-level rule puts at `reported` (in a group of
# their own: another workload, named by digest only)
OTHER_WL=sha256:$(printf 'another workload' | sha256sum | cut -c1-64)
jq -c --arg w "$OTHER_WL" '.run.spec.workloadDigest = $w | .run.spec.status = "failed" | .run.spec.sourceNative.externalId += "-failed"' "$FX" >"$W/reported.jsonl"
jq -c --arg w "$OTHER_WL" '.run.spec.workloadDigest = $w | del(.run.spec.sourceNative)' "$FX" >>"$W/reported.jsonl"
assert_exit 0 ks --json add "$W/reported.jsonl"
assert_eq 2 "$(jv .added)" "reported runs added"
REPORTED=$(ks digest "$W/reported.jsonl" | awk '$2 == "BenchmarkRun" {print $1}' | sort)
pass "a failed run and a run without sourceNative are added"

# every generated run is in the store, under the digest computed independently
mapfile -t GEN < <(mkruns --start 1 --count 12 --digests)
assert_exit 0 ks ls --kind BenchmarkRun
for d in "$RUN" "${GEN[@]}"; do assert_contains "$OUT" "$d" "run $d listed"; done
assert_eq 15 "$(nlines "$OUT")" "ls --kind BenchmarkRun count"
pass "ls --kind BenchmarkRun lists the 15 runs, digests as computed independently"

# ================================= show, cat =================================
assert_exit 0 ks show "${RUN#sha256:}"
SHOW=$OUT
for want in '"run": {' '"protocol": {' '"environment": {' '"metadata": {' \
    '"title": "Liger benchmark harness · backward pass"' "\"externalId\": \"$ext\"" '    "spec": {'; do
    assert_contains "$SHOW" "$want" "show: pretty bundle"
done
pass "show RUN prints the bundle, pretty, with the metadata of every document"
assert_contains "$SHOW" "source-native" "show: level"
assert_contains "$(grep -i level <<<"$SHOW")" "source-native" "show: a level line"
assert_contains "$(grep -i rank <<<"$SHOW")" "1 of 13" "show: rank line (seed is fastest of 13 in its group)"
pass "show RUN has the level line (source-native) and the rank line (1 of 13)"
assert_exit 0 ks show "${GEN[4]}"
assert_contains "$(grep -i rank <<<"$OUT")" "6 of 13" "show: rank of variation 5"
pass "show ranks variation 5 at 6 of 13 (lower latency is better)"
assert_exit 0 ks show "$(sed -n 1p <<<"$REPORTED")"
assert_contains "$(grep -i level <<<"$OUT")" "reported" "show: reported level"
pass "show of a failed run says level reported"
assert_exit 0 ks show 334face3
assert_eq "$SHOW" "$OUT" "show by 8-hex prefix"
pass "show accepts a unique 8-hex prefix"

assert_exit 0 ks show --canonical "$RUN"
cp "$OUT_FILE" "$W/show.canonical"
assert_exit 0 ks canon "$FX"
cmp -s "$OUT_FILE" "$W/show.canonical" || fail "show --canonical differs from canon of the fixture bundle"
pass "show --canonical is byte for byte canon of the fixture bundle"

assert_exit 0 ks cat "$RUN"
assert_eq "$rhex" "$(sha256sum <"$OUT_FILE" | cut -c1-64)" "cat RUN | sha256sum"
assert_eq "$(jcs_of "$FX" 'd["run"]')" "$OUT" "cat RUN bytes"
pass "cat RUN prints bytes that hash to the run digest (the run in JCS, no metadata)"
assert_exit 0 ks cat 080e6e66
assert_eq "${PROT#sha256:}" "$(sha256sum <"$OUT_FILE" | cut -c1-64)" "cat PROT | sha256sum"
pass "cat by prefix of the protocol hashes to the protocol digest"

# =================================== ls ======================================
assert_exit 0 ks ls
assert_eq 17 "$(nlines "$OUT")" "ls: 15 runs + protocol + environment"
assert_contains "$OUT" "$PROT" "ls: protocol"
assert_contains "$OUT" "$ENV" "ls: environment"
assert_contains "$(grep "$RUN" <<<"$OUT")" "BenchmarkRun" "ls: kind of the run"
pass "ls lists all 17 documents with their kinds"
assert_exit 0 ks ls --kind BenchmarkProtocol
assert_eq 1 "$(nlines "$OUT")" "ls --kind BenchmarkProtocol"
assert_contains "$OUT" "$PROT" "ls --kind BenchmarkProtocol"
assert_exit 0 ks ls --kind ExecutionEnvironment
assert_eq 1 "$(nlines "$OUT")" "ls --kind ExecutionEnvironment"
assert_contains "$OUT" "$ENV" "ls --kind ExecutionEnvironment"
assert_exit 0 ks ls --kind Workload
assert_eq "" "$OUT" "ls --kind Workload (external only)"
pass "ls --kind keeps one kind"
assert_exit 0 ks ls --level source-native
assert_eq 13 "$(nlines "$OUT")" "ls --level source-native"
assert_not_contains "$OUT" "$PROT" "ls --level lists runs only"
assert_exit 0 ks ls --level reported
assert_eq "$REPORTED" "$(awk '{print $1}' <<<"$OUT" | sort)" "ls --level reported"
assert_exit 0 ks ls --level reproduced
assert_eq "" "$OUT" "ls --level reproduced"
pass "ls --level source-native / reported / reproduced keep the runs at that level"
assert_exit 2 ks ls --kind Nope
assert_contains "$ERR" "BenchmarkRun" "ls --kind Nope lists the kinds"
pass "ls --kind with an unknown kind is a usage error naming the known kinds"

# =================================== log =====================================
NCOMMITS=$(git --git-dir="$S" rev-list --count main)
assert_exit 0 ks --json log
assert_eq "$NCOMMITS" "$(jv '.entries|length')" "log: one entry per commit"
assert_eq "$NCOMMITS" "$(jv '[.entries[]|select(.op=="add")]|length')" "log: every entry is an add"
assert_eq "$(head_of "$S")" "$(jv '.entries[0].commit')" "log: newest first"
assert_eq "$C1" "$(jv '.entries[-1].commit')" "log: oldest last"
pass "log --json: one entry per add ($NCOMMITS), op add, newest first"
assert_exit 0 ks log
assert_eq "$NCOMMITS" "$(grep -ci '^op:.*add' <<<"$OUT")" "log text: an Op line per entry"
pass "log (text) shows every entry with its op"
assert_exit 0 ks --json log -n 2
assert_eq 2 "$(jv '.entries|length')" "log -n 2"
assert_exit 0 ks --json log --op import
assert_eq 0 "$(jv '.entries|length')" "log --op import"
assert_exit 0 ks --json log --run "$RUN"
assert_eq "$C1" "$(jv '.entries[-1].commit')" "log --run: the story starts with the add"
pass "log -n, --op and --run filter the history"

# ================================== verify ===================================
assert_exit 0 ks verify
assert_exit 0 ks --json verify
assert_eq true "$(jv .ok)" "verify --json ok"
assert_eq 17 "$(jv .objects)" "verify --json objects"
assert_eq 0 "$(jv '.problems|length')" "verify --json problems"
assert_contains "$(jv '.warnings[].detail')" "$WL" "verify warns about the external workload"
assert_contains "$(jv '.warnings[].detail')" "$IMPL" "verify warns about the external implementation"
pass "verify: exit 0, --json {\"ok\":true,\"objects\":17,\"problems\":[]} with external-reference warnings"
assert_exit 0 ks verify --deep
pass "verify --deep: exit 0"
assert_exit 0 git --git-dir="$S" fsck --strict
pass "git fsck --strict accepts the store"

# ============================ plain git clones ===============================
assert_exit 0 ks ls
LS=$OUT
assert_exit 0 git clone -q --bare "$S" "$W/clone.git"
assert_exit 0 ks --store "$W/clone.git" --json verify
assert_eq true "$(jv .ok)" "bare clone verifies"
assert_exit 0 ks --store "$W/clone.git" ls
assert_eq "$LS" "$OUT" "bare clone lists the same documents"
pass "a plain git clone --bare of the store opens with --store and verifies"
assert_exit 0 git clone -q "$S" "$W/clone-wt"
[[ -e $W/clone-wt/$opath ]] || fail "the non-bare clone did not check out main (HEAD must name main)"
assert_exit 0 ks --store "$W/clone-wt" --json verify
assert_eq true "$(jv .ok)" "non-bare clone verifies"
assert_exit 0 ks --store "$W/clone-wt" ls
assert_eq "$LS" "$OUT" "non-bare clone lists the same documents"
assert_exit 0 ks --store "$W/clone-wt" show "$RUN"
assert_eq "$SHOW" "$OUT" "show in the non-bare clone"
pass "a plain non-bare git clone checks out main, opens with --store, verifies and shows"

# =========================== verify FILE (no store) ==========================
mkdir -p "$W/nostore" && cd "$W/nostore"
assert_exit 0 ks verify "$FX"
assert_exit 0 ks --json verify "$FX"
assert_eq true "$(jv .ok)" "verify FILE ok"
assert_contains "$(jv '.warnings[].path')" "/run/spec/workloadDigest" "verify FILE: external workload warning"
assert_contains "$(jv '.warnings[].path')" "/run/spec/implementationDigest" "verify FILE: external implementation warning"
[[ ! -e .kistore ]] || fail "verify FILE created a store"
pass "verify FIXTURE (no store): exit 0, warnings for the external workload and implementation"
jq '.protocol.spec.measurement.timer = "wallclock"' "$FX" >"$W/edited.json"
EDITED=sha256:$(jcs_of "$W/edited.json" 'd["protocol"]' | sha256sum | cut -c1-64)
assert_exit 1 ks verify "$W/edited.json"
assert_contains "$OUT$ERR" "/run/spec/protocolDigest" "verify edited: pointer"
assert_contains "$OUT$ERR" "edited.json" "verify edited: file"
assert_contains "$OUT$ERR" "$PROT" "verify edited: the run's digest"
assert_contains "$OUT$ERR" "$EDITED" "verify edited: the protocol's actual digest"
assert_exit 1 ks --json verify "$W/edited.json"
assert_eq false "$(jv .ok)" "verify edited --json ok"
assert_contains "$(jv '.problems[].path')" "/run/spec/protocolDigest" "verify edited --json path"
pass "verify FILE with an edited protocol: exit 1 naming /run/spec/protocolDigest and both digests"
cd "$W/cwd"

# ============================== import (Liger) ===============================
assert_exit 0 ks --store "$W/liger" init
assert_exit 0 ks --store "$W/liger" --json import liger "$DATA/liger-sample.csv"
NIMP=$(jv .added)
((NIMP > 0)) || fail "import added nothing"
assert_eq '[]' "$(jv -c .rejected)" "import rejected"
LIGER_HEAD=$(head_of "$W/liger")
assert_eq "$LIGER_HEAD" "$(jv .commit)" "import commit"
assert_exit 0 ks --store "$W/liger" --json import liger "$DATA/liger-sample.csv"
assert_eq 0 "$(jv .added)" "re-import adds nothing"
assert_eq "$LIGER_HEAD" "$(head_of "$W/liger")" "re-import makes no commit"
assert_eq "import" "$(git --git-dir="$W/liger" log -1 --format='%(trailers:key=Kistore-Op,valueonly)' main | sed '/^$/d')" "import trailer"
pass "import liger SAMPLE adds $NIMP documents in one commit (Kistore-Op: import); again: nothing"
seed_run=$(source_run "$W/liger" liger-kernel-bench "$ext")
assert_exit 0 ks --store "$W/liger" show "$seed_run"
assert_contains "$(grep -i rank <<<"$OUT")" "3 of 4" "imported seed row rank"
pass "the imported seed row (liger_tiled, seq 1024, RTX 4090) ranks 3 of 4 in its group"
assert_exit 0 ks --store "$W/liger" verify --deep
pass "the imported store verifies --deep"

# ================================ edge cases =================================
# An externalId that extends an existing one as a path (a/b, then a/b/c): both
# are legal ids.  Format 2 stored ids as paths and could refuse it (exit 2
# naming the pointer); format 3 keys a claim by sha256(source NUL externalId),
# so it is an id like any other: added, and claimed by its run.
jq -c '.run.spec.sourceNative.externalId += "/rerun-1" | .run.spec.measurements[0].value = 3' "$FX" >"$W/extends.json"
ext_run=$(ks digest "$W/extends.json" | awk '$2 == "BenchmarkRun" {print $1}')
assert_exit 0 ks --json add "$W/extends.json"
assert_eq 1 "$(jv .added)" "the extending run is added"
assert_not_contains "$ERR" "not indexed" "the extending id is claimed"
assert_eq "$ext_run" "$(source_run "$S" liger-kernel-bench "$ext/rerun-1")" "the extending id names its run"
assert_eq "$RUN" "$(source_run "$S" liger-kernel-bench "$ext")" "the extended id still names the fixture"
assert_exit 0 ks verify
assert_eq "" "$(git --git-dir="$S" fsck --strict 2>&1 | grep -v '^dangling' || true)" "fsck after the extension"
pass "a run whose externalId extends an existing id as a path: added, both ids claimed, the store verifies"

# Inputs that are pipes, not regular files: `kistore canon <(...)`, a FIFO.
assert_exit 0 ks canon <(cat "$JCS/rfc8785-3.2.2.input.json")
cmp -s "$OUT_FILE" "$JCS/rfc8785-3.2.2.canonical" || fail "canon <(...): bytes differ from golden"
mkfifo "$W/fifo"
# the writer opens the FIFO under timeout, so it cannot outlive a failed check
timeout 20 sh -c 'cat "$1" >"$2"' fifo-writer "$FX" "$W/fifo" &
fifo_writer=$!
servers_on_exit "kill $fifo_writer 2>/dev/null"
assert_exit 0 ks --json add "$W/fifo"
wait "$fifo_writer" || true
assert_eq 0 "$(jv .added)" "add FIFO: the fixture is already there"
assert_eq 3 "$(jv .present)" "add FIFO: present"
pass "canon and add read from a pipe (process substitution, FIFO)"

# ============================ the command line itself =========================
# Global options before or after the command (SPEC §3), with the same result.
assert_exit 0 "$KISTORE" --store "$S" --json --no-progress ls --kind BenchmarkProtocol
before_cmd=$OUT
assert_exit 0 "$KISTORE" ls --kind BenchmarkProtocol --store "$S" --json --no-progress
assert_eq "$before_cmd" "$OUT" "ls: global options after the command"
assert_contains "$OUT" "$PROT" "ls --json after the command lists the protocol"
assert_exit 0 "$KISTORE" ls -q --store="$S"
assert_contains "$OUT" "$PROT" "ls -q --store=DIR after the command"
assert_exit 0 "$KISTORE" trust list --store "$S" --json
assert_eq '{"controllers":[]}' "$OUT" "trust list --json after a subcommand's subcommand"
pass "--store, --json, --quiet, --no-progress work before or after the command"
# `kistore help CMD` prints what `kistore CMD --help` prints.
for cmd in add rank "trust add" "remote"; do
    # shellcheck disable=SC2086
    assert_exit 0 "$KISTORE" help $cmd
    help_out=$OUT
    # shellcheck disable=SC2086
    assert_exit 0 "$KISTORE" $cmd --help
    assert_eq "$OUT" "$help_out" "help $cmd = $cmd --help"
    assert_contains "$OUT" "Usage: kistore $cmd" "help $cmd shows its usage"
done
assert_exit 0 "$KISTORE" help
assert_contains "$OUT" "Subcommands:" "help alone lists the commands"
pass "kistore help CMD prints the same as kistore CMD --help"
# A mistyped command: exit 2, the nearest named, nothing written.
before=$(head_of "$S")
assert_exit 2 "$KISTORE" --store "$S" pusj
assert_contains "$ERR" 'unknown command "pusj"; did you mean "push"?' "pusj suggests push"
assert_exit 2 "$KISTORE" --store "$S" improt liger x.csv
assert_contains "$ERR" 'did you mean "import"?' "improt suggests import"
assert_exit 2 "$KISTORE" --store "$S" trust lst
assert_contains "$ERR" 'unknown command "trust lst"; did you mean "trust list"?' "trust lst suggests trust list"
assert_exit 2 "$KISTORE" help verfy
assert_contains "$ERR" 'did you mean "verify"?' "help verfy suggests verify"
assert_exit 2 "$KISTORE" --store "$S" xyzzy
assert_not_contains "$ERR" "did you mean" "nothing near xyzzy"
assert_eq "$before" "$(head_of "$S")" "a mistyped command writes nothing"
pass "a mistyped command is refused (exit 2) naming the nearest command"

summary
