#!/usr/bin/env bash
# A guided tour of kistore on real data. Installs what building and running
# kistore needs (scripts/deps.sh demo; apt-get's output goes to a log file),
# builds it (the build's output to another), then makes a store in a
# temporary folder and walks through it: each step says in one sentence what
# it shows and why, then runs the command. The README's tour is the same.
#
# Env: KISTORE          a kistore binary to tour with: nothing is installed or built
#      KISTORE_BUILD_DIR where to build (default build/)
#      KISTORE_SHARED    the folder holding fixtures/ and data/liger/ (default ../shared)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="$(cd "${KISTORE_SHARED:-$root/../shared}" && pwd)"
if [[ -n ${KISTORE:-} ]]; then
  bin="$(cd "$(dirname "$KISTORE")" && pwd)"
else
  bash "$root/scripts/deps.sh" demo
  build="${KISTORE_BUILD_DIR:-$root/build}"
  log="$(mktemp "${TMPDIR:-/tmp}/kistore-build-XXXXXX")"
  echo "building kistore in $build (its output goes to $log, kept if the build fails)"
  if ! KISTORE_BUILD_DIR="$build" bash "$root/scripts/build.sh" kistore >"$log" 2>&1; then
    echo "the build failed; the end of $log:" >&2
    tail -n 30 "$log" >&2
    exit 1
  fi
  rm -f "$log"
  bin="$build"
fi
export PATH="$bin:$PATH"

work="$(mktemp -d "${TMPDIR:-/tmp}/kistore-demo.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cd "$work"
ln -s "$shared" shared
export KISTORE_AUTHOR="${KISTORE_AUTHOR:-kistore demo <demo@example.org>}"
unset KISTORE_DIR
fixture=shared/fixtures/seed-run-tiled-geglu-backward.json
# The fixture's row as Liger's table has it, once imported (its digest is fixed).
run=628643ba

# say SENTENCE... : what the next step shows and why, before it runs.
say() { printf '\n%s\n' "$*"; }
# step COMMAND... : the command as one would type it, then its output.
step() {
  local typed="" word
  for word in "$@"; do
    [[ $word =~ ^[A-Za-z0-9_./:=@%+,-]+$ ]] || word="\"$word\""
    typed+="${typed:+ }$word"
  done
  printf '\033[1m$ %s\033[0m\n' "$typed"
  "$@"
}

echo "kistore tour in $work (removed at the end)"
say "A store is a bare git repository in .kistore/; the commands below find it from this folder or any folder under it."
step kistore init
say "Every document is named by the sha256 of its RFC 8785 canonical form; digest prints those names for a file, with no store."
step kistore digest "$fixture"
say "Liger-Kernel's published benchmark tables become 3,897 runs, each with its protocol, GPU and workload, in one commit."
step kistore import liger shared/data/liger/*.csv
say "Runs are compared only within a group: one kernel and workload, one timed pass, one GPU; groups lists them with their parameters."
step kistore groups --benchmark tiled_geglu/backward --gpu 4090
say "rank orders a group by median latency; the run 628643ba (Liger's tiled GeGLU, backward, on an RTX 4090) is third of four."
step kistore rank "$run"
say "The fixture is KernelIndex's own manifest of that same Liger row, a second document for one source row: add keeps it, and its note says the source id stays with the run imported first."
step kistore add "$fixture"
say "show prints a run's whole bundle with its evidence level, rank and attestations."
step kistore show "$run"
say "An attestation is a community note beside a run: it never changes the run's level."
step kistore attest "$run" --note "seen the same on our RTX 4090"

# A controller reruns the imported run under the same protocol, GPU and
# workload, and signs the result.
ssh-keygen -q -t ed25519 -N '' -C controller@example.org -f controller
kistore show "$run" --canonical | python3 -c '
import json, sys
bundle = json.load(sys.stdin)
run = bundle["run"]
run["spec"]["timing"]["latencyNs"]["median"] = 2651000       # 1.7 % slower: within 10 %
run["spec"]["observedAt"] = "2026-11-30T09:00:00.000Z"
del run["spec"]["sourceNative"]
run["metadata"] = {"name": "controlled-rerun-tiled-geglu-backward", "title": "controlled rerun"}
print(json.dumps(bundle))
' >rerun.json
say "Only a controller this store trusts may change a level: trust add names one by its SSH key (made with ssh-keygen just now)."
step kistore trust add controller@example.org controller.pub
say "The controller reran 628643ba under the same protocol and GPU (rerun.json, 1.7 % slower); the signed rerun makes the run reproduced."
step kistore rerun "$run" rerun.json --sign controller
say "rank now shows the run reproduced, with its rerun listed under it rather than ranked against it."
step kistore rank "$run" --min-level source-native
say "verify re-hashes every object and recomputes the index, offline; its three warnings are the fixture's: its run names a workload and an implementation that its bundle does not carry, and it claims the source id the imported row holds. Warnings are not problems: the store is sound."
step kistore verify
say "Every change is a git commit: log shows the last four, with who signed them."
step kistore log -n 4
say "log --run tells one run's story: when it was added, each level change, each attestation and rerun."
step kistore log --run "$run"
say "Stock git checks the rerun's commit signature against the same trust list: the history is the audit trail."
step git --git-dir=.kistore -c gpg.ssh.allowedSignersFile="$(kistore trust path)" verify-commit main
printf '\nstore size: %s\n' "$(du -sh .kistore | cut -f1)"
