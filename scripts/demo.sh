#!/usr/bin/env bash
# A tour of kistore on real data: installs what is missing, builds, then makes a
# store, adds the KernelIndex fixture, imports Liger-Kernel's published tables,
# ranks a group, shows a run, attests it, records a signed controlled rerun,
# verifies everything offline and prints the history.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="${KISTORE_SHARED:-$root/../shared}"
bash "$root/scripts/deps.sh"
bash "$root/scripts/build.sh" kistore
kistore="${KISTORE_BUILD_DIR:-$root/build}/kistore"

work="$(mktemp -d "${TMPDIR:-/tmp}/kistore-demo.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cd "$work"
export KISTORE_AUTHOR="${KISTORE_AUTHOR:-kistore demo <demo@example.org>}"
fixture="$shared/fixtures/seed-run-tiled-geglu-backward.json"

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

# The fixture's row as imported from Liger's table (its digest is deterministic).
run=628643ba

step "$kistore" init
step "$kistore" digest "$fixture"
step "$kistore" import liger "$shared"/data/liger/*.csv
step "$kistore" rank "$run"
step "$kistore" add "$fixture"
step "$kistore" show "$run"
step "$kistore" attest "$run" --note "seen the same on our RTX 4090"

# A controller reruns the imported run under the same protocol, GPU and
# workload, and signs the result.
ssh-keygen -q -t ed25519 -N '' -C controller@example.org -f controller
step "$kistore" trust add controller@example.org controller.pub
"$kistore" show "$run" --canonical | python3 -c '
import json, sys
bundle = json.load(sys.stdin)
run = bundle["run"]
run["spec"]["timing"]["latencyNs"]["median"] = 2651000       # 1.7 % slower: within 10 %
run["spec"]["observedAt"] = "2026-11-30T09:00:00.000Z"
del run["spec"]["sourceNative"]
run["metadata"] = {"name": "controlled-rerun-tiled-geglu-backward", "title": "controlled rerun"}
print(json.dumps(bundle))
' > rerun.json
step "$kistore" rerun "$run" rerun.json --sign controller
step "$kistore" rank "$run" --min-level source-native
step "$kistore" verify
step "$kistore" log -n 4
step "$kistore" log --run "$run"
step git --git-dir=.kistore -c gpg.ssh.allowedSignersFile="$("$kistore" trust path)" verify-commit main
printf '\nstore size: %s\n' "$(du -sh .kistore | cut -f1)"
