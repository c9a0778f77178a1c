#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# Any pack git accepts, kistore accepts: a server repository repacked as
# `git gc --aggressive` did before git 2.18 (`repack --depth=250`) sends
# delta chains deeper than 64. `kistore clone` over git://, https and ssh and
# `kistore pull` take them, as `git clone` does, and what they made verifies.
# (The work such chains can cause is bounded by bytes, not depth:
# tests/store/git/pack_indexer_hostile_test.cc.)
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). About a minute.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in deep_deltas served
S=$W/store
assert_exit 0 ks init "$S"
# One run per commit: each commit rewrites the same index files a little,
# versions that git deltas one against the next.
"$PY" "$SRC/bench/gen.py" 200 --out "$W/runs.jsonl" >/dev/null
split -l 1 -d -a 3 "$W/runs.jsonl" "$W/one_"
for f in "$W"/one_*; do
    "$KISTORE" --no-progress --quiet --store "$S" add "$f" >/dev/null || fail "add $f"
done
git init -q --bare -b main "$W/served/deep.git"
assert_exit 0 ks --store "$S" push "$W/served/deep.git"
git --git-dir="$W/served/deep.git" repack -adf -q --depth=250 --window=250
deepest=$(git --git-dir="$W/served/deep.git" verify-pack -v "$W"/served/deep.git/objects/pack/*.idx |
    sed -n 's/^chain length = \([0-9]*\):.*/\1/p' | sort -n | tail -1)
((deepest > 64)) || fail "the repacked repository's deepest delta chain is $deepest, not deeper than 64"
assert_exit 0 git clone -q --bare "$W/served/deep.git" "$W/stock.git"
pass "a server repository repacked with --depth=250: chains $deepest deep; stock git clones it"

start_git_daemon "$W/served"
start_http_git "$W/served" --tls
HTTPS=$HTTP_GIT_URL
start_sshd
export KISTORE_SSH_KNOWN_HOSTS=$SSH_KNOWN_HOSTS

head=$(head_of "$S")
for url in "$GIT_DAEMON_URL/deep.git" "$HTTPS/deep.git" "$SSH_URL_PREFIX$W/served/deep.git"; do
    name=${url%%:*}
    assert_exit 0 env KISTORE_SSL_CAINFO="$HTTP_GIT_CA" "$KISTORE" --no-progress clone "$url" "$W/clone-$name"
    assert_eq "$head" "$(head_of "$W/clone-$name")" "$name: the clone has the server's branch"
    assert_exit 0 ks --store "$W/clone-$name" verify
    pass "$name: kistore clone takes chains $deepest deep, and the clone verifies"
done

# A pull into a store with a run of its own: all of the server's chains
# arrive, and merge with what the store has.
assert_exit 0 ks init "$W/half"
assert_exit 0 ks --store "$W/half" add "$FX"
assert_exit 0 ks --store "$W/half" pull "$GIT_DAEMON_URL/deep.git"
assert_exit 0 ks --store "$W/half" verify
assert_exit 0 ks --store "$W/half" ls --kind run
assert_eq 201 "$(nlines "$OUT")" "the pulled store lists its own run and the server's 200"
pass "pull over git:// of the deep chains merges and verifies"

summary
