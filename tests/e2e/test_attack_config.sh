#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153,SC2016
# A store folder and an environment prepared by someone else (a store copied
# from a colleague, a shared machine's shell profile) must not make kistore
# run a program. git runs programs named in its configuration and environment
# (hooks, core.fsmonitor, core.sshCommand, credential helpers, gpg.program,
# GIT_SSH_COMMAND, GIT_ASKPASS, core.pager, core.editor); kistore goes through
# libgit2, which runs none, and must never start one of them itself. Every
# such setting here names a program that, if run, leaves a marker file; the
# test drives add, attest, rerun (signed), log, verify, push and pull (over a
# path and over ssh), clone and site, and asserts that no marker exists and
# that every command did its work.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs with stdin
# closed, as root or not; everything lives in a temp dir it removes.
# E2E_KEEP_GOING=1 records a failed check and goes on (to see every failure).
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in w markers
M=$W/markers
S=$W/store
BASE=$W/remotes

# A program that, if anyone runs it, records how it was called.
trap_program() {  # trap_program NAME -> prints its path
    local p=$W/bin/$1
    mkdir -p "$W/bin"
    printf '#!/bin/sh\necho "$0 $*" >>"%s/%s"\nexit 0\n' "$M" "$1" >"$p"
    chmod 755 "$p"
    printf '%s' "$p"
}
no_marker() {  # no_marker WHAT
    if compgen -G "$M/*" >/dev/null; then
        for f in "$M"/*; do printf '  ran: %s\n' "$(cat "$f")" >&2; done
        fail "$1: a program named by the configuration or the environment ran"
    fi
}

start_sshd
export KISTORE_SSH_KNOWN_HOSTS=$SSH_KNOWN_HOSTS
mkdir -p "$BASE"
git init -q --bare "$BASE/shared.git"

assert_exit 0 ks --store "$S" init
# Hooks in the store's own folder and in a hooks folder the config names.
for hooks in "$S/hooks" "$W/hooks"; do
    mkdir -p "$hooks"
    for h in pre-commit post-commit commit-msg prepare-commit-msg pre-push post-merge post-checkout \
        reference-transaction pre-receive update post-update pre-auto-gc post-rewrite; do
        cp "$(trap_program "hook-$h")" "$hooks/$h"
    done
done
gc() { git --git-dir="$S" config "$@"; }
gc core.hooksPath "$W/hooks"
gc core.fsmonitor "$(trap_program fsmonitor)"
gc core.sshCommand "$(trap_program sshcommand)"
gc core.pager "$(trap_program pager)"
gc core.editor "$(trap_program editor)"
gc core.askPass "$(trap_program askpass)"
gc credential.helper "!$(trap_program credential-helper)"
gc gpg.program "$(trap_program gpg)"
gc gpg.ssh.program "$(trap_program gpg-ssh)"
gc gpg.format ssh
gc commit.gpgSign true
gc diff.external "$(trap_program diff-external)"
gc uploadpack.packObjectsHook "$(trap_program pack-objects-hook)"
gc protocol.ext.allow always
gc receive.procReceiveRefs refs
# The environment git would honour.
export GIT_SSH_COMMAND="$(trap_program git-ssh-command)" GIT_SSH="$(trap_program git-ssh)"
export GIT_ASKPASS="$(trap_program git-askpass)" SSH_ASKPASS="$(trap_program ssh-askpass)" SSH_ASKPASS_REQUIRE=force
export GIT_PAGER="$(trap_program git-pager)" PAGER="$(trap_program pager-env)" EDITOR="$(trap_program editor-env)"
export GIT_EXTERNAL_DIFF="$(trap_program git-external-diff)" GIT_PROXY_COMMAND="$(trap_program git-proxy-command)"
export GIT_EDITOR="$(trap_program git-editor)" VISUAL="$(trap_program visual)"

ssh-keygen -q -t ed25519 -N '' -C controller -f "$W/controller" </dev/null >/dev/null
mkruns --count 3 --format jsonl >"$W/runs.jsonl"
assert_exit 0 ks --store "$S" add "$FX" "$W/runs.jsonl"
assert_exit 0 ks --store "$S" ls
no_marker "init and add"

assert_exit 0 ks --store "$S" trust add controller "$W/controller.pub"
assert_exit 0 ks --store "$S" attest 334face3 --note "seen in a store whose config names programs"
ks --store "$S" show 334face3 --canonical >"$W/bundle.json"
"$PY" - "$W/bundle.json" "$W/rerun.json" <<'EOF'
import json, sys
b = json.load(open(sys.argv[1]))
r = b["run"]
r["spec"]["timing"]["latencyNs"]["median"] = int(r["spec"]["timing"]["latencyNs"]["median"] * 1.01)
r["spec"]["observedAt"] = "2026-11-30T09:00:00.000Z"
r["spec"].pop("sourceNative", None)
r["metadata"] = {"name": "rerun"}
json.dump(b, open(sys.argv[2], "w"))
EOF
assert_exit 0 ks --store "$S" rerun 334face3 "$W/rerun.json" --sign "$W/controller"
no_marker "trust, attest and a signed rerun"

assert_exit 0 ks --store "$S" log -n 3
assert_exit 0 ks --store "$S" verify
assert_exit 0 ks --store "$S" rank 334face3
assert_exit 0 ks --store "$S" site "$W/site"
no_marker "log, verify, rank and site"

# Push and pull over a path and over ssh, and clone.
assert_exit 0 ks --store "$S" remote add path "$BASE/shared.git"
assert_exit 0 ks --store "$S" push path
assert_exit 0 ks --store "$S" remote add ssh "$SSH_URL_PREFIX$BASE/shared.git"
export KISTORE_SSH_KEY=$SSH_KEY
assert_exit 0 ks --store "$S" pull ssh
assert_exit 0 ks --store "$S" push ssh
printf 'controller %s\n' "$(cut -d' ' -f1,2 "$W/controller.pub")" >"$W/allowed_signers"
assert_exit 0 ks clone --allowed-signers "$W/allowed_signers" "$SSH_URL_PREFIX$BASE/shared.git" "$W/cloned"
assert_exit 0 ks --store "$W/cloned" verify
no_marker "push, pull and clone over a path and ssh"

# The traps are live: stock git, given the same store and environment, runs them.
git --git-dir="$S" ls-remote "$SSH_URL_PREFIX$BASE/shared.git" >/dev/null 2>&1 || true
[[ -s $M/git-ssh-command ]] || fail "stock git did not run GIT_SSH_COMMAND: the test's traps are not live"
git --git-dir="$S" update-ref refs/heads/trap-check HEAD
[[ -s $M/hook-reference-transaction ]] || fail "stock git did not run the reference-transaction hook: the traps are not live"
pass "the same settings make stock git run GIT_SSH_COMMAND and a hook (the traps are live)"

pass "hooks, core.fsmonitor, core.sshCommand, credential helpers, gpg programs, pagers, editors and GIT_SSH* / *ASKPASS: none ran, every command did its work"
summary
