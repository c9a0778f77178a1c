#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# A commit author that is bad local input: "Name <email>" whose name or email
# holds < or > (which would end or start the email early in the commit's
# author line), a line break (which would end the author line and start a
# header line of the author's own: before, `--author $'A\nB <b@x>'` wrote
# one), or that is not of the form at all; an author with < exited 3 (a
# libgit2 error) before. (Other control characters are data: log escapes
# them, test_attack_terminal.sh.) From --author and from
# KISTORE_AUTHOR, on every command that commits (add, attest, rerun): each
# exits 2 with one line that names the value, says what was expected and what
# was found, and the store is byte for byte as it was (lib/fingerprint.sh).
# A good author still commits, as itself.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs in seconds.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
work_in w
S=$W/store
unset KISTORE_AUTHOR

assert_exit 0 ks --store "$S" init
assert_exit 0 ks --store "$S" add "$FX"
assert_exit 0 ks --store "$S" --json ls --kind BenchmarkRun
run=$(jq -r '.documents[0].digest' <<<"$OUT")
[[ $run == sha256:* ]] || fail "no run digest in: $OUT"
mkruns --start 1 --count 1 >"$W/more.jsonl"
cp "$SRC/tests/data/keys/controller" "$SRC/tests/data/keys/controller.pub" "$W/"
chmod 600 "$W/controller"
assert_exit 0 ks --store "$S" trust add controller@example.org "$W/controller.pub"
jq -c '.run.spec.sourceNative.externalId += "/rerun-1"' "$FX" >"$W/rerun.json"
before=$(store_fingerprint "$S")

# One row per case: the author, then what the message must say was found.
cases=(
    'A <b<c>|a second "<"'
    'A<x <b@example.org>|a second "<"'
    'A <b>c>|">" before the end'
    'A> <b@example.org>|">" before the end'
    $'A\nB <b@example.org>|a line break (U+000A)'
    $'A <b@example.org\n>|a line break (U+000A)'
    $'A\rB <b@example.org>|a line break (U+000D)'
    $'A <b@exa\rmple.org>|a line break (U+000D)'
    $'A <b@example.org>\nKistore-Op: forged|a line break (U+000A)'
    'just a name|no <'
    'A <b@example.org> trailing|no > at the end'
    ' <b@example.org>|no name before <'
    'A <>|an empty email'
)
for row in "${cases[@]}"; do
    author=${row%%|*}
    found=${row#*|}
    shown='"'  # the value as the message quotes it: exactly, when it holds no control character
    [[ $author == *[[:cntrl:]]* ]] || shown="\"$author\""
    for how in option env; do
        for cmd in add attest rerun; do
            case $cmd in
            add) args=(add "$W/more.jsonl") ;;
            attest) args=(attest "$run" --note "seen") ;;
            rerun) args=(rerun "$run" "$W/rerun.json" --sign "$W/controller") ;;
            esac
            if [[ $how == option ]]; then
                assert_exit 2 ks --store "$S" "${args[@]}" --author "$author"
            else
                assert_exit 2 env KISTORE_AUTHOR="$author" "$KISTORE" --no-progress --store "$S" "${args[@]}"
            fi
            assert_contains "$ERR" "commit author $shown" "$cmd, $how, $(printf %q "$author"): the value"
            assert_contains "$ERR" "expected \"Name <email>\", with no <, > or line break in the name or the email, found $found" \
                "$cmd, $how, $(printf %q "$author"): what was expected and found"
            assert_eq 1 "$(wc -l <<<"$ERR")" "$cmd, $how, $(printf %q "$author"): one line"
            assert_store_unchanged "$before" "$S" "$cmd --author $(printf %q "$author")"
        done
    done
    pass "author $(printf %q "$author"): add, attest and rerun exit 2 ($found), from --author and KISTORE_AUTHOR; store unchanged"
done

assert_exit 0 ks --store "$S" attest "$run" --note "seen" --author "Good Author <good@example.org>"
assert_eq "Good Author <good@example.org>" "$(git --git-dir="$S" log -1 --format='%an <%ae>' main)" "a good author commits"
pass "a good author still commits as itself"
summary
