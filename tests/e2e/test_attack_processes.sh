#!/usr/bin/env bash
# Programs kistore starts, attacked from the folder it runs in and from the
# environment it inherits: `kistore capture` and `kistore bench liger` run in a
# folder full of decoys (a downloaded results folder, a third-party checkout):
# json.py, torch.py, sitecustomize.py, usercustomize.py, liger_kernel/,
# nvidia-smi, python3 and bash, each of which writes a marker file when it
# runs, with PATH naming "." and an empty entry before the real tools,
# PYTHONPATH=., PYTHONSTARTUP, PYTHONHOME, PYTHONUSERBASE and BASH_ENV set, and
# a usercustomize.py in the user's site-packages. No marker may appear, and
# the captured environment is the real one (the GPU double's, as a capture
# in an empty folder gives it), never the decoy's. What the user passes on
# the command line does reach the programs: --env NAME=VALUE and
# --pythonpath DIR; --env PYTHON* is refused (exit 2) before anything runs.
#
# Env: KISTORE (the binary). Runs in seconds, without a GPU (tests/e2e/gpu_double).
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
double="$here/gpu_double"
export KISTORE_AUTHOR="Decoy Test <decoy@example.org>"
use_store "$SERVERS_DIR/store"
export PATH="$double:/usr/bin:/bin"
real_python=/usr/bin/python3

# --- the decoys ---------------------------------------------------------------
markers="$SERVERS_DIR/markers"
decoys="$SERVERS_DIR/decoys"
mkdir -p "$markers" "$decoys/liger_kernel"
pydecoy() {  # NAME [extra python lines]: a module that leaves a marker when imported
    printf 'open(%s, "w").write("ran")\n%s\n' "'$markers/$1'" "${2:-}" >"$decoys/$1"
}
pydecoy json.py 'def dumps(*a, **k): return "{\"python\": \"6.6.6\", \"torch\": \"6.6.6\"}"'
pydecoy torch.py '__version__ = "6.6.6"'
pydecoy sitecustomize.py
pydecoy usercustomize.py
pydecoy startup.py
pydecoy platform.py
printf 'open(%s, "w").write("ran")\n__version__ = "6.6.6"\n' "'$markers/liger_kernel'" >"$decoys/liger_kernel/__init__.py"
for tool in nvidia-smi python3 bash; do
    printf '#!/bin/sh\necho ran > "%s/%s"\necho "decoy %s" >&2\nexit 1\n' "$markers" "$tool" "$tool" >"$decoys/$tool"
    chmod +x "$decoys/$tool"
done
printf 'echo ran > "%s/BASH_ENV"\n' "$markers" >"$decoys/bash_env"
# The user's own site-packages (HOME is passed to programs, -I must still leave it out).
user_site=$("$real_python" -c 'import site; print(site.getusersitepackages())')
mkdir -p "$user_site" "$decoys/userbase"
printf 'open(%s, "w").write("ran")\n' "'$markers/user-site'" >"$user_site/usercustomize.py"
user_base_site=$(PYTHONUSERBASE="$decoys/userbase" "$real_python" -c 'import site; print(site.getusersitepackages())')
mkdir -p "$user_base_site"
printf 'open(%s, "w").write("ran")\n' "'$markers/userbase'" >"$user_base_site/usercustomize.py"
[[ $user_site == "$HOME"/* ]] || fail "the user site $user_site is not under HOME"
# (The decoys do work when a program runs here unguarded: proof that the test can see them.)
( cd "$decoys" && PYTHONPATH=. "$real_python" -c 'import torch' ) && [[ -e $markers/torch.py ]] ||
    fail "the torch.py decoy does not leave its marker"
rm -f "$markers"/*

no_markers() {
    local left
    left=$(ls -A "$markers")
    [[ -z $left ]] || fail "$1: decoys ran: $left"
}
# Runs kistore in the decoy folder, with a hostile inherited environment.
hostile() {
    (cd "$decoys" && env PATH=".::relative/bin:$double:/usr/bin:/bin" PYTHONPATH=. PYTHONSTARTUP="$decoys/startup.py" \
        PYTHONHOME="$decoys" PYTHONUSERBASE="$decoys/userbase" PYTHONINSPECT=1 BASH_ENV="$decoys/bash_env" \
        ENV="$decoys/bash_env" "$KISTORE" --no-progress "$@")
}

# --- capture ------------------------------------------------------------------
mkdir -p "$SERVERS_DIR/empty"
assert_exit 0 bash -c 'cd "$1" && shift && "$@"' _ "$SERVERS_DIR/empty" "$KISTORE" capture --json
clean_doc=$OUT
no_markers "capture in an empty folder"

assert_exit 0 hostile capture --json
assert_eq "$clean_doc" "$OUT" "capture among decoys: the same document as in an empty folder"
assert_not_contains "$OUT" "6.6.6" "no decoy version"
no_markers "capture among decoys"
pass "capture among decoys (json.py, torch.py, sitecustomize.py, nvidia-smi, python3 in '.'; PYTHONPATH=.): none ran, the real document"

# The real Python (no torch on this machine's python3, or a real one): the snippet's own imports
# (json, platform, torch) would find the decoys if the current folder were on its path.
assert_exit 0 hostile capture --python "$real_python" --json
assert_not_contains "$OUT" "6.6.6" "real python: no decoy torch version"
assert_contains "$OUT" '"driver":"580.159.04"' "real python: the driver part"
no_markers "capture --python $real_python among decoys"
pass "capture with the real python3 among decoys: the snippet imports none of them"

assert_exit 2 hostile capture --python python3-no-such
assert_contains "$ERR" "python3-no-such: not found on PATH (kistore looks in absolute folders only; it skipped \".\", \"\", \"relative/bin\")" \
    "the skipped PATH entries are named"
(cd "$decoys" && env PATH=".:" "$KISTORE" capture) >/dev/null 2>"$SERVERS_DIR/err" && fail "capture with PATH=.: succeeded"
assert_contains "$(cat "$SERVERS_DIR/err")" "nvidia-smi: not found on PATH" "a decoy nvidia-smi in '.' is not found"
no_markers "PATH of '.' and '' alone"
pass "PATH: '.', '' and relative entries are never searched; a decoy nvidia-smi there never runs"

# --- what the user passes explicitly reaches the programs -----------------------
assert_exit 2 hostile capture --env GPU_DOUBLE_FAIL=7
assert_contains "$ERR" "nvidia-smi -q -x: exit 7" "--env reaches nvidia-smi"
mkdir -p "$SERVERS_DIR/extra/torch"
printf '__version__ = "9.9.9"\nclass cuda:\n    @staticmethod\n    def is_available(): return False\n' \
    >"$SERVERS_DIR/extra/torch/__init__.py"
assert_exit 2 hostile capture --python "$real_python" --pythonpath "$SERVERS_DIR/extra"
assert_contains "$ERR" "PyTorch 9.9.9 sees no CUDA device" "--pythonpath reaches Python"
for bad in PYTHONPATH=. PYTHONSTARTUP=x 'NO NAME=1' =1 NOEQUALS; do
    assert_exit 2 hostile capture --env "$bad"
    assert_contains "$ERR" "--env \"$bad\": expected" "--env $bad refused, named"
done
assert_contains "$ERR" "expected NAME=VALUE" "what --env expects"
assert_exit 2 hostile capture --env PYTHONPATH=.
assert_contains "$ERR" "found PYTHONPATH (Python runs isolated and ignores it; for import folders pass --pythonpath DIR)" \
    "PYTHON* refused with the way to do it"
assert_exit 2 hostile capture --pythonpath "$SERVERS_DIR/no-such-folder"
assert_contains "$ERR" "--pythonpath \"$SERVERS_DIR/no-such-folder\": expected a folder, found none" "a missing --pythonpath"
no_markers "explicit options"
pass "--env and --pythonpath reach the programs; --env PYTHON*, malformed --env and a missing --pythonpath exit 2"

# --- bench liger ------------------------------------------------------------------
assert_exit 0 "$KISTORE" init
store_before=$(store_fingerprint "$KISTORE_DIR")
assert_exit 2 hostile bench liger --liger "$double/liger" benchmark_double_geglu.py --env PYTHONPATH=.
assert_contains "$ERR" "found PYTHONPATH" "bench: --env PYTHONPATH refused"
assert_store_unchanged "$store_before" "$KISTORE_DIR" "bench --env PYTHONPATH refused"
checkout_before=$(store_fingerprint "$double/liger")
assert_exit 0 hostile --json bench liger --liger "$double/liger" benchmark_double_geglu.py \
    --env "GPU_DOUBLE_TIME=2026-02-02 10:00:00"
"$real_python" -I - "$OUT" "$clean_doc" <<'PY'  # -I: the test's own Python must not run the user-site decoy either
import json, sys
r, clean = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert r["rows"] == 12 and r["added"] > 12, r
assert r["environment"]["spec"]["hardware"] == clean["spec"]["hardware"], r["environment"]
software = dict(r["environment"]["spec"]["software"])
assert software.pop("liger-kernel") == "0.8.2", software  # the checkout's, not the decoy liger_kernel/
assert software == clean["spec"]["software"], software
PY
assert_not_contains "$OUT" "6.6.6" "bench: no decoy version"
no_markers "bench liger among decoys"
assert_eq "$checkout_before" "$(store_fingerprint "$double/liger")" "bench: the checkout is not written"
assert_exit 0 "$KISTORE" ls --kind BenchmarkRun
assert_eq 12 "$(wc -l <<<"$OUT")" "bench: 12 runs"
pass "bench liger among decoys: the scripts and both captures import none of them; rows and environment are the real ones"

left=$(find "$TMPDIR" -mindepth 1 -maxdepth 1 -name 'kistore-*')
assert_eq "" "$left" "every working folder kistore made is removed"
pass "capture and bench leave no working folder behind"
summary
