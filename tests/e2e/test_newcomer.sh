#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# What a newcomer who knows git tries, and the one line each mistake gets:
# exit code, the message (what is wrong, what to do), and nothing written.
# log --op with an unknown operation; log -n 0 (nothing, as git); clone and
# pull of a git repository that is no store (saying so, not a line per file); a
# path remote that does not exist; a Liger CSV whose header lacks a column; a
# REF in capitals; a push to `git init --bare` that git clone then checks out;
# groups that tell groups apart and --format tsv on every listing; the store
# of the nearest parent folder; a store another user owns; a read-only store;
# a clone over git:// of a remote whose HEAD names a branch it lacks.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
work_in newcomer
S=$W/store
assert_exit 0 ks init "$S"
assert_exit 0 ks --store "$S" add "$FX"
FP=$(store_fingerprint "$S")

# ---- log ---------------------------------------------------------------------------
assert_exit 2 ks --store "$S" log --op bogus
assert_contains "$ERR" '--op: expected one of add, import, attest, rerun, merge, upgrade, compact; found "bogus"' "log --op bogus"
assert_eq "" "$OUT" "log --op bogus prints no history"
assert_exit 0 ks --store "$S" log -n 0
assert_eq "" "$OUT" "log -n 0 prints nothing, as git log -n 0"
assert_exit 0 ks --store "$S" log -n 1
assert_contains "$OUT" "Op:     add" "log -n 1 prints the one commit"
assert_exit 2 ks --store "$S" log -n -3
assert_contains "$ERR" "-n: expected a number from 0" "log -n -3"
assert_store_unchanged "$FP" "$S" "log"
pass "log --op bogus and log -n -3: exit 2 saying what is expected; log -n 0 prints nothing"

# ---- a REF typed in capitals, or too short -----------------------------------------
assert_exit 0 ks --store "$S" show 334face3
want=$OUT
for ref in 334FACE3 sha256:334FaCe30A; do
    assert_exit 0 ks --store "$S" show "$ref"
    assert_eq "$want" "$OUT" "show $ref: the run 334face3 names"
    assert_exit 0 ks --store "$S" rank "$ref"
done
assert_exit 2 ks --store "$S" show 334face
assert_contains "$ERR" "at least 8 hex digits" "show 334face: says how many digits"
assert_store_unchanged "$FP" "$S" "show and rank"
pass "show and rank take a prefix typed in capitals; 7 digits is exit 2 saying 8 are needed"

# ---- a git repository that is no store ----------------------------------------------
ugit() { git -c user.name=u -c user.email=u@example.org -c init.defaultBranch=main "$@"; }
ugit init -q "$W/project"
mkdir -p "$W/project/src" "$W/project/docs"
for i in $(seq 1 60); do echo "$i" >"$W/project/src/f$i.c"; done
chmod +x "$W/project/src/f1.c"
echo hi >"$W/project/README.md" && echo guide >"$W/project/docs/guide.md"
ugit -C "$W/project" add . && ugit -C "$W/project" commit -q -m "my project"
assert_exit 1 ks clone "$W/project" "$W/cloned"
(($(grep -c '^refused' <<<"$ERR") <= 3)) || fail "clone of a project: more than what it is and two examples"
assert_contains "$(grep -m1 '^refused' <<<"$ERR")" \
    "not a kistore store: the remote's main holds README.md, docs/, src/ and nothing of kistore's" \
    "clone of a project: says first what it is"
[[ ! -e $W/cloned ]] || fail "a refused clone left $W/cloned"
assert_exit 1 ks --store "$S" pull "$W/project"
assert_contains "$(grep -m1 '^refused' <<<"$ERR")" "not a kistore store" "pull of a project: says first what it is"
(($(grep -c '^refused' <<<"$ERR") <= 3)) || fail "pull of a project: more than three refused lines"
assert_store_unchanged "$FP" "$S" "pull of a project"
pass "clone and pull of a git repository that is no store: exit 1, saying so first, two examples, nothing written"

# A repository holding only a README.md: its tree has no FORMAT, as a format-1
# store's has none, yet it is no store: push and pull say so, not "upgrade it".
ugit init -q "$W/readme" && echo hi >"$W/readme/README.md"
ugit -C "$W/readme" add . && ugit -C "$W/readme" commit -q -m "a readme"
git clone -q --bare "$W/readme" "$W/readme.git"
RFP=$(store_fingerprint "$W/readme.git")
for cmd in push pull; do
    assert_exit_unchanged 1 "$S" "$cmd to a README-only repository" ks --store "$S" "$cmd" "$W/readme.git"
    assert_contains "$ERR" "not a kistore store: the remote's main holds README.md and nothing of kistore's" \
        "$cmd to a README-only repository: says what it is"
    assert_not_contains "$ERR" "format-1" "$cmd to a README-only repository: not a format to upgrade"
    assert_store_unchanged "$RFP" "$W/readme.git" "$cmd to a README-only repository: the remote"
done
pass "push and pull with a README-only repository: not a kistore store, both sides unchanged"

# ---- a path remote that is not there ------------------------------------------------
for cmd in "pull $W/no-such.git" "push $W/no-such.git" "pull ./typo"; do
    # shellcheck disable=SC2086
    assert_exit 4 ks --store "$S" $cmd
    assert_contains "$ERR" "no such folder" "$cmd"
    assert_contains "$ERR" "git init --bare" "$cmd: says what a path remote is"
    assert_not_contains "$ERR" "unsupported URL protocol" "$cmd"
done
[[ ! -e $W/no-such.git ]] || fail "push made $W/no-such.git"
assert_store_unchanged "$FP" "$S" "a missing path remote"
pass "pull and push of a path that does not exist: exit 4, 'no such folder', nothing written"

# ---- plain git sees a normal repository ---------------------------------------------
# A bare repository as `git init --bare` makes it names refs/heads/master in
# HEAD; after the first push it names main, so that a stock clone checks the
# store out. Writing into that clone keeps its index and work tree in step.
git -c init.defaultBranch=master init -q --bare "$W/served.git"
assert_exit 0 ks --store "$S" push "$W/served.git"
assert_eq "refs/heads/main" "$(git --git-dir="$W/served.git" symbolic-ref HEAD)" "HEAD of the pushed-to repository"
git clone -q "$W/served.git" "$W/checkout"
[[ -f $W/checkout/FORMAT ]] || fail "a stock git clone of the pushed store checked out nothing"
assert_eq "" "$(git -C "$W/checkout" status --porcelain)" "git status of a fresh clone"
mkruns --start 7 --count 1 >one.jsonl
assert_exit 0 ks --store "$W/checkout" add one.jsonl
assert_eq "" "$(git -C "$W/checkout" status --porcelain)" "git status after kistore add in the clone"
assert_exit 0 ks --store "$W/checkout" verify
pass "push to a git init --bare repository points its HEAD at main: git clone checks out the store, git status stays clean after an add"
# In that clone (and below it) kistore finds the store without --store, as
# git finds the repository.
assert_exit 0 ks --store "$W/checkout" ls
listed=$OUT
(cd "$W/checkout" && assert_exit 0 ks ls && assert_eq "$listed" "$OUT" "ls in a plain clone") || fail "ls in a plain clone"
(cd "$W/checkout/objects" && assert_exit 0 ks ls && assert_eq "$listed" "$OUT" "ls below a plain clone") ||
    fail "ls below a plain clone"
mkruns --start 8 --count 1 >"$W/two.jsonl"
(cd "$W/checkout" && assert_exit 0 ks add "$W/two.jsonl") || fail "add in a plain clone"
[[ ! -e $W/checkout/.kistore ]] || fail "add in a plain clone made a .kistore"
assert_eq "" "$(git -C "$W/checkout" status --porcelain)" "git status after kistore add without --store"
assert_exit 0 ks --store "$W/checkout" log -n 1
assert_contains "$OUT" "Op:     add" "the add without --store went to the clone"
# git's own view of the clone keeps up: after kistore push and pull with
# origin, refs/remotes/origin/main is where the remote is, and git status
# says the clone is up to date, not "ahead by N commits".
(cd "$W/checkout" && assert_exit 0 ks push) || fail "push from a plain clone"
assert_eq "$(head_of "$W/served.git")" "$(git -C "$W/checkout" rev-parse origin/main)" "push moves origin/main"
assert_eq "## main...origin/main" "$(git -C "$W/checkout" status -sb | head -1)" "git status after kistore push"
assert_exit 0 ks --store "$S" pull "$W/served.git"
mkruns --start 9 --count 1 >"$W/three.jsonl"
assert_exit 0 ks --store "$S" add "$W/three.jsonl"
assert_exit 0 ks --store "$S" push "$W/served.git"
(cd "$W/checkout" && assert_exit 0 ks pull) || fail "pull into a plain clone"
assert_eq "$(head_of "$W/served.git")" "$(git -C "$W/checkout" rev-parse origin/main)" "pull moves origin/main"
assert_eq "## main...origin/main" "$(git -C "$W/checkout" status -sb | head -1)" "git status after kistore pull"
assert_eq "" "$(git -C "$W/checkout" status --porcelain)" "the work tree in step after the pull"
pass "in a plain git clone of a store, and below it, kistore finds the store without --store; push and pull keep origin/main, and git status clean"
FP=$(store_fingerprint "$S")  # the push recorded what it synced

# ---- a CSV whose header lacks a column ----------------------------------------------
HEADER=kernel_name,kernel_provider,kernel_operation_mode,metric_name,metric_unit,x_name,x_label,x_value,y_value_50,y_value_20,y_value_80,extra_benchmark_config_str,gpu_name,timestamp,liger_version
{ echo "${HEADER/,gpu_name/}"; echo 'cross_entropy,liger,forward,speed,ms,V,vocab size,4096,0.53,0.52,0.54,"{}",2024-09-03 15:31:39,0.2.1'; } >short.csv
assert_exit 2 ks --store "$S" import liger short.csv
assert_contains "$ERR" "short.csv:1: the header lacks column gpu_name" "CSV without gpu_name"
assert_store_unchanged "$FP" "$S" "import of a CSV without gpu_name"
pass "import of a CSV whose header lacks gpu_name: exit 2 naming the column, nothing written"

# ---- groups tell groups apart; every listing has a form for scripts --------------------
# Three workloads of one benchmark (sequence lengths 16384, 1024, 2048) and two
# that differ only in a string (model_config): five groups, each its own line,
# sorted by benchmark then parameters (numbers as numbers).
row() { # kernel mode x_name x_value config gpu provider median
    printf '%s,%s,%s,speed,ms,%s,x,%s,%s,%s,%s,"%s",%s,2025-11-11 06:22:56,0.6.3\n' \
        "$1" "$7" "$2" "$3" "$4" "$8" "$8" "$8" "$5" "$6"
}
geglu='{""bsz"": 2, ""hidden_size"": 2048, ""hidden_act"": ""gelu_pytorch_tanh"", ""dtype"": ""torch.bfloat16""}'
{
    echo "$HEADER"
    for t in 16384 1024 2048; do
        row tiled_geglu backward T "$t" "$geglu" "NVIDIA GeForce RTX 4090" liger "$((t / 512)).5"
        row tiled_geglu backward T "$t" "$geglu" "NVIDIA GeForce RTX 4090" huggingface "$((t / 512)).75"
    done
    row cross_entropy forward model_config qwen2.5_7b '{""bsz"": 1, ""seq_len"": 2048}' "NVIDIA B200" liger 0.25
    row cross_entropy forward model_config llama_2_7b '{""bsz"": 1, ""seq_len"": 2048}' "NVIDIA B200" liger 0.125
} >groups.csv
L=$W/listings
assert_exit 0 ks init "$L"
assert_exit 0 ks --store "$L" import liger groups.csv
FP_L=$(store_fingerprint "$L")
assert_exit 0 ks --store "$L" groups --format tsv
assert_eq "group	benchmark	definition	parameters	pass	gpu	runs	best	unit" "$(head -1 <<<"$OUT")" "groups --format tsv: the header"
assert_eq "cross_entropy/forward	bsz=1 seq=2048 model_config=llama_2_7b	Liger benchmark harness · forward pass	NVIDIA B200	1	125000	ns
cross_entropy/forward	bsz=1 seq=2048 model_config=qwen2.5_7b	Liger benchmark harness · forward pass	NVIDIA B200	1	250000	ns
tiled_geglu/backward	T=1024 bsz=2 hidden=2048 bf16	Liger benchmark harness · backward pass	NVIDIA GeForce RTX 4090	2	2500000	ns
tiled_geglu/backward	T=2048 bsz=2 hidden=2048 bf16	Liger benchmark harness · backward pass	NVIDIA GeForce RTX 4090	2	4500000	ns
tiled_geglu/backward	T=16384 bsz=2 hidden=2048 bf16	Liger benchmark harness · backward pass	NVIDIA GeForce RTX 4090	2	32500000	ns" \
    "$(tail -n +2 <<<"$OUT" | cut -f2,4-9)" "groups --format tsv: one line per group, by benchmark then parameters"
assert_eq "" "$(awk -F'\t' 'NF != 9 || /(^|\t) | (\t|$)/' <<<"$OUT")" "every TSV line has 9 fields, none padded with spaces"
tsv_keys=$(tail -n +2 <<<"$OUT" | cut -f1)
assert_exit 0 ks --store "$L" groups
assert_eq 5 "$(wc -l <<<"$OUT")" "groups: a line per group"
assert_eq "$(cut -c1-12 <<<"${tsv_keys//sha256:/}")" "$(cut -d' ' -f1 <<<"$OUT")" "groups: text and TSV list the same groups in the same order"
assert_eq "tiled_geglu/backward|T=16384 bsz=2 hidden=2048 bf16|Liger benchmark harness · backward pass|NVIDIA GeForce RTX 4090|2|32.500 ms" \
    "$(sed -n 5p <<<"$OUT" | awk -F'  +' -v OFS='|' '{print $2, $3, $4, $5, $6, $7}')" \
    "groups: the benchmark, the parameters in short, pass, GPU, runs and best, columns two or more spaces apart"
assert_exit 0 ks --store "$L" --json groups --benchmark tiled
assert_eq "1024 2048 16384" "$(jv '[.groups[].parameters.T] | join(" ")')" "groups --json: the parameters as stored, in order"
assert_eq "GeGLU MLP (tiled benchmark)" "$(jv '.groups[0].definition')" "groups --json: the definition"
assert_exit 0 ks --store "$L" groups --format json --benchmark tiled
assert_eq 3 "$(jv '.groups | length')" "--format json is --json"
run=$(tail -n +2 <<<"$(ks --store "$L" rank "${tsv_keys%%$'\n'*}" --format tsv)" | cut -f2)
for cmd in "groups" "ls" "ls --kind BenchmarkRun" "rank $run" "log" "log --run $run"; do
    # shellcheck disable=SC2086
    assert_exit 0 ks --store "$L" $cmd --format tsv
    n=$(head -1 <<<"$OUT" | awk -F'\t' '{print NF}')
    assert_eq "" "$(awk -F'\t' -v n="$n" 'NF != n' <<<"$OUT")" "$cmd --format tsv: every line has the header's $n fields"
    (($(wc -l <<<"$OUT") >= 2)) || fail "$cmd --format tsv: a header and rows"
done
assert_exit 0 ks --store "$L" rank "$run" --format tsv
assert_eq "rank	run	implementation	median	unit	p20	p80	level	verified	observed	reruns	unrankable
1	$run	liger	125000	ns	125000	125000	source-native		2025-11-11	0	" "$OUT" "rank --format tsv: values as numbers in their unit"
assert_exit 0 ks --store "$L" log --format tsv -n 1
assert_eq "import" "$(tail -1 <<<"$OUT" | cut -f5)" "log --format tsv: the op in its column"
assert_exit 2 ks --store "$L" groups --format csv
assert_contains "$ERR" '--format: expected one of text, tsv, json; found "csv"' "groups --format csv"
assert_exit 2 ks --store "$L" --json ls --format xml
assert_eq 2 "$(jv .error.code)" "ls --format xml under --json: a JSON error"
assert_store_unchanged "$FP_L" "$L" "listings"
pass "groups: a line per group with its parameters in short, by benchmark then parameters; groups, ls, rank and log --format tsv for scripts"

# ---- the store of the current folder or of the nearest parent ----------------------
# As git finds .git: from a subfolder, kistore opens the .kistore above it;
# --store and KISTORE_DIR name one folder and are never searched from.
mkdir -p "$W/project-up/runs/2026/nov"
(cd "$W/project-up" && ks init &>/dev/null && ks add "$FX" &>/dev/null) || fail "init and add in project-up"
assert_exit 0 ks --store "$W/project-up/.kistore" ls
top=$OUT
cd "$W/project-up/runs/2026/nov"
assert_exit 0 ks ls
assert_eq "$top" "$OUT" "ls in a subfolder lists the parent's store"
mkruns --start 20 --count 1 >one-more.jsonl
assert_exit 0 ks add one-more.jsonl
assert_exit 0 ks --store "$W/project-up/.kistore" log -n 1
assert_contains "$OUT" "Op:     add" "the add from a subfolder went to the parent's store"
[[ ! -e .kistore ]] || fail "add from a subfolder made a store there"
FP_UP=$(store_fingerprint "$W/project-up/.kistore")
assert_exit 3 ks --store .kistore ls
assert_eq "error: .kistore: no store here (create one with \`kistore init\`, or name one with --store or KISTORE_DIR)" "$ERR" \
    "--store names one folder: no search upward"
assert_exit 3 env KISTORE_DIR=.kistore "$KISTORE" ls
assert_contains "$ERR" ".kistore: no store here" "KISTORE_DIR names one folder: no search upward"
up=$(cd "$W" && pwd -P)
while [[ $up != / && ! -d $up/.kistore ]]; do up=$(dirname "$up"); done
if [[ ! -d $up/.kistore ]]; then # no store in any folder above this machine's test folder
    mkdir -p "$W/nowhere/deep" && cd "$W/nowhere/deep"
    assert_exit 3 ks ls
    assert_eq "error: .kistore: no store here or in any parent folder (create one with \`kistore init\`, or name one with --store or KISTORE_DIR)" \
        "$ERR" "ls where no folder up to / holds a store"
fi
cd "$W"
assert_store_unchanged "$FP_UP" "$W/project-up/.kistore" "ls with --store or KISTORE_DIR in a subfolder"
pass "a command in a subfolder finds the .kistore of the nearest parent, as git finds .git; --store and KISTORE_DIR are not searched from"

# ---- a store that another user owns, or that cannot be written ------------------------
# Run as root (the e2e tests' servers need it): chown and setpriv make the
# other user. Skipped, saying so, where that cannot be done.
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
if [[ $(id -u) == 0 ]] && have_tool setpriv && as_nobody test -x "$KISTORE" &&
    as_nobody test -r "$FX" && as_nobody test -x "$W"; then
    cp -a "$S" "$W/theirs" && chown -R 65534:65534 "$W/theirs"
    FP_THEIRS=$(store_fingerprint "$W/theirs")
    owner=$(id -nu 65534 2>/dev/null || true)
    owner=${owner:+$owner (uid 65534)}
    assert_exit 3 ks --store "$W/theirs" ls
    assert_eq "error: $W/theirs: a repository owned by ${owner:-uid 65534} while kistore runs as $(id -nu) (uid 0): kistore's libgit2 opens only a user's own repositories (git's safe.directory rule); if you trust it, \`git config --global --add safe.directory $(cd "$W/theirs" && pwd -P)\` lets kistore open it" \
        "$ERR" "ls of a store that another user owns"
    assert_exit 3 ks --store "$W/theirs" --json show 334face3
    assert_eq 3 "$(jv .error.code)" "--json: the error document says code 3"
    assert_contains "$(jv .error.message)" "owned by ${owner:-uid 65534}" "--json: the message says who owns it"
    git config --global --add safe.directory "$(cd "$W/theirs" && pwd -P)"
    assert_exit 0 ks --store "$W/theirs" show 334face3
    git config --global --unset-all safe.directory
    assert_store_unchanged "$FP_THEIRS" "$W/theirs" "reading a store that another user owns"
    pass "a store that another user owns: exit 3 saying who owns it and the safe.directory line, which then opens it; nothing written"

    # Their own store, made read-only: every writer says "permission denied"
    # and the folder, before anything is written.
    mkdir -p "$W/ro" && cp -a "$S" "$W/ro/store" && chown -R 65534:65534 "$W/ro" && chmod -R a-w "$W/ro/store"
    FP_RO=$(store_fingerprint "$W/ro/store")
    want="error: $W/ro/store: permission denied: kistore runs as ${owner:-uid 65534}, who may not create files in it; nothing was written (writing needs write access to the store's folders; \`kistore clone\` makes a copy to write to)"
    mkruns --start 30 --count 2 >"$W/ro/two.jsonl"
    assert_exit 3 as_nobody "$KISTORE" --store "$W/ro/store" add "$W/ro/two.jsonl"
    assert_eq "$want" "$ERR" "add to a read-only store"
    assert_exit 3 as_nobody "$KISTORE" --store "$W/ro/store" attest 334face3 --note "seen it"
    assert_eq "$want" "$ERR" "attest in a read-only store"
    assert_exit 3 as_nobody "$KISTORE" --store "$W/ro/store" pull "$W/served.git"
    assert_eq "$want" "$ERR" "pull into a read-only store"
    # The store's own settings too: the trust list, config and remotes
    # (not "internal: filesystem error").
    ssh-keygen -q -t ed25519 -N '' -C ctl@example.org -f "$W/ro/ctl" && chmod a+r "$W/ro/ctl.pub"
    for cmd in "trust add ctl@example.org $W/ro/ctl.pub" "config sign.key $W/ro/ctl" "remote add o $W/served.git"; do
        # shellcheck disable=SC2086
        assert_exit 3 as_nobody "$KISTORE" --store "$W/ro/store" $cmd
        assert_eq "$want" "$ERR" "$cmd in a read-only store"
    done
    assert_exit 0 as_nobody "$KISTORE" --store "$W/ro/store" verify
    assert_store_unchanged "$FP_RO" "$W/ro/store" "writes refused by a read-only store"
    pass "a read-only store: add, attest, pull, trust add, config and remote add are exit 3 with \"permission denied\" and the folder; verify still reads it; nothing written"
else
    pass "skipped: another user's store and a read-only one need root and setpriv"
fi

# ---- clone of a network remote whose HEAD names a branch it lacks ------------------------
# Over git:// no push can point HEAD (a path's can, above): kistore clone
# says how, once, and the fix it names makes a stock clone check out.
mkdir -p "$W/daemon"
git -c init.defaultBranch=master init -q --bare "$W/daemon/evidence.git"
start_git_daemon "$W/daemon"
URL=$GIT_DAEMON_URL/evidence.git
assert_exit 0 ks --store "$S" push "$URL"
assert_eq "refs/heads/master" "$(git --git-dir="$W/daemon/evidence.git" symbolic-ref HEAD)" "a push over git:// leaves HEAD"
assert_exit 0 ks clone "$URL" "$W/net-clone"
assert_contains "$ERR" "note: $URL: its HEAD names a branch it does not have, so a stock \`git clone\` of it checks out nothing; on the server, run \`git symbolic-ref HEAD refs/heads/main\` in that repository (a push over git:// cannot change HEAD), or clone with \`git clone -b main $URL\`" \
    "clone of a remote whose HEAD names no branch it has"
assert_eq 1 "$(grep -c '^note:' <<<"$ERR")" "one note"
assert_exit 0 ks --store "$W/net-clone" verify
git -C "$W/daemon/evidence.git" symbolic-ref HEAD refs/heads/main
git clone -q "$URL" "$W/net-checkout" 2>/dev/null
[[ -f $W/net-checkout/FORMAT ]] || fail "after the fix the note names, a stock git clone checks nothing out"
assert_exit 0 ks clone "$URL" "$W/net-clone2"
assert_not_contains "$ERR" "note:" "clone of a remote whose HEAD is right: no note"
pass "clone over git:// of a remote whose HEAD names a missing branch: one note with the command that fixes it, which does"

# ---- a commit holds no local path ---------------------------------------------------------
# The history is published: an add or an import names its inputs by their file
# names, never the folders above them (who and where the user is).
mkdir -p "$W/home-of-ana/private runs"
cp "$FX" "$W/home-of-ana/private runs/seed.json"
cp "$DATA/liger-sample.csv" "$W/home-of-ana/private runs/liger.csv"
assert_exit 0 ks init "$W/paths"
assert_exit 0 ks --store "$W/paths" add "$W/home-of-ana/private runs/seed.json"
assert_exit 0 ks --store "$W/paths" import liger "$W/home-of-ana/private runs/liger.csv"
# A pull of a folder of this machine that ends in a merge names that remote by
# its folder's name alone.
assert_exit 0 ks init "$W/home-of-ana/evidence"
assert_exit 0 ks --store "$W/home-of-ana/evidence" add --author "Bo <bo@example.org>" "$W/home-of-ana/private runs/seed.json"
assert_exit 0 ks --store "$W/paths" pull "$W/home-of-ana/evidence"
bodies=$(git --git-dir="$W/paths" log --format=%B)
assert_contains "$bodies" "from seed.json" "add names its input by its file name"
assert_contains "$bodies" "from liger.csv" "import names its input by its file name"
assert_contains "$(git --git-dir="$W/paths" log -1 --format=%s)" "from evidence" "a merge names a local remote by its folder's name"
assert_not_contains "$bodies" "home-of-ana" "no commit holds the folders above an input or a remote"
pass "commits name their inputs and local remotes by name, never by a local path"

summary
