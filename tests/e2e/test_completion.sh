#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# Shell integration: `kistore completion bash|zsh|fish` and `kistore manpage`,
# both written from the command table, and what `cmake --install` installs.
# The bash script is loaded into this shell and asked what it completes, as
# bash asks it on <TAB>: commands, subcommands, options, the values of an
# option with a fixed set, remote names, digest prefixes from the store. Every
# command has a manual page, and man renders each without a warning.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs in seconds.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in completion
S=$W/store
assert_exit 0 ks init "$S"
assert_exit 0 ks --store "$S" add "$FX"
git init -q --bare "$W/remote.git"
assert_exit 0 ks --store "$S" remote add origin "$W/remote.git"
assert_exit 0 ks --store "$S" remote add mirror "$W/remote.git"

# ---- bash -------------------------------------------------------------------------
assert_exit 0 ks completion bash
printf '%s\n' "$OUT" >"$W/kistore.bash"
bash -n "$W/kistore.bash" || fail "the bash script does not parse"
# shellcheck disable=SC1091
. "$W/kistore.bash"
# The completions bash has nowhere to look but PATH for kistore itself.
kistore() { "$KISTORE" "$@"; }
# complete_line WORDS... : what <TAB> after WORDS offers (the last word is the
# one being completed), one per line, sorted.
complete_line() {
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    _kistore
    printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort
}
assert_eq $'pull\npush' "$(complete_line kistore pu)" "kistore pu<TAB>"
assert_eq $'add\nlist\npath\nremove' "$(complete_line kistore trust '')" "kistore trust <TAB>"
assert_eq "--format" "$(complete_line kistore log --fo)" "kistore log --fo<TAB>"
assert_contains "$(complete_line kistore log --format '')" "tsv" "kistore log --format <TAB>: its values"
assert_eq "--keep-going" "$(complete_line kistore add --kee)" "kistore add --kee<TAB>"
assert_eq "--store" "$(complete_line kistore --st)" "a global option"
assert_eq "verify" "$(complete_line kistore help veri)" "kistore help veri<TAB>"
assert_eq $'mirror\norigin' "$(complete_line kistore --store "$S" pull '')" "kistore pull <TAB>: the store's remotes"
assert_eq "origin" "$(complete_line kistore --store "$S" push --json or)" "push, after an option: the remote"
assert_eq "334face30aca" "$(complete_line kistore --store "$S" show 334)" "kistore show 334<TAB>: the digest prefix"
assert_eq "" "$(complete_line kistore --store "$S" show 3)" "one digit completes nothing (a store may hold millions)"
assert_eq $'bash\nfish\nzsh' "$(complete_line kistore completion '')" "kistore completion <TAB>"
# compgen -W expands its words: a remote name written into the config by hand
# (git config takes any subsection) must never be run on <TAB>.
git --git-dir="$S" config 'remote.$(touch${IFS}pwned).url' "$W/remote.git"
assert_eq $'mirror\norigin' "$(cd "$W" && complete_line kistore --store "$S" pull '')" "a hostile remote name is not offered"
[[ ! -e $W/pwned ]] || fail "completion ran a remote name"
pass "bash: commands, subcommands, options and their values, remotes and digest prefixes; nothing run"

# ---- zsh and fish -------------------------------------------------------------------
assert_exit 0 ks completion zsh
printf '%s\n' "$OUT" >"$W/_kistore"
if have_tool zsh; then
    zsh -n "$W/_kistore" || fail "the zsh script does not parse"
    assert_eq "ok" "$(zsh -c "source '$W/_kistore' && whence -w _kistore >/dev/null && echo ok")" "zsh loads it"
fi
assert_exit 0 ks completion fish
assert_contains "$OUT" "complete -c kistore -f -n __fish_use_subcommand -a pull -d 'Fetch a remote\\'s evidence" "fish: a command"
assert_contains "$OUT" "complete -c kistore -n '__fish_seen_subcommand_from log' -l format -x -a" "fish: an option's values"
pass "zsh loads its script; fish's names every command"

# ---- manual pages -------------------------------------------------------------------
assert_exit 0 ks manpage --out "$W/man"
commands=$(ks --help | awk '/^Subcommands:/ { on = 1; next } on && NF { print $1 }' | grep -v '^help$' || true)
[[ -n $commands ]] || { ks --help; fail "no command in --help"; }
for c in $commands; do
    [[ -f $W/man/kistore-$c.1 ]] || fail "no manual page for kistore $c"
done
assert_eq 1 "$(ls "$W/man" | grep -c '^kistore\.1$')" "kistore.1"
[[ -f $W/man/kistore-remote-add.1 ]] || fail "no page for a subcommand"
if have_tool man; then
    for page in "$W"/man/*.1; do
        text=$(MANWIDTH=80 man -l "$page" 2>"$W/man.err") || fail "man -l $page failed"
        [[ ! -s $W/man.err ]] || fail "man -l $page warned: $(head -3 "$W/man.err")"
        [[ $text == *NAME* && $text == *SYNOPSIS* && $text == *"EXIT STATUS"* ]] || fail "$page lacks a section"
    done
    text=$(MANWIDTH=200 man -l "$W/man/kistore-add.1")
    assert_contains "$text" "--keep-going" "kistore-add(1) lists the options"
    assert_contains "$text" "Add bundles and documents to the store" "kistore-add(1) says what add does"
fi
assert_exit 0 ks manpage log
assert_contains "$OUT" ".TH KISTORE-LOG 1" "kistore manpage log prints one page"
assert_exit 2 ks manpage frob
assert_contains "$ERR" 'no command "frob"' "an unknown command"
pass "a manual page for every command, rendered by man without a warning"

# ---- cmake --install -----------------------------------------------------------------
build=$(dirname "$KISTORE")
if [[ -f $build/CMakeCache.txt ]]; then
    cmake --build "$build" --target kistore_share >/dev/null
    DESTDIR=$W/root cmake --install "$build" --prefix /usr >/dev/null
    [[ -x $W/root/usr/bin/kistore ]] || fail "install: bin/kistore"
    [[ -f $W/root/usr/share/man/man1/kistore-add.1 ]] || fail "install: the manual pages"
    [[ -f $W/root/usr/share/bash-completion/completions/kistore ]] || fail "install: the bash completion"
    pass "cmake --install: the program, its pages, its completion"
fi

summary
