# shellcheck shell=bash source-path=SCRIPTDIR disable=SC2034
# (variables set here are outputs for the sourcing test script)
# tests/e2e/lib/preamble.sh -- the start that every e2e test driving kistore
# shares, written once here. A test begins:
#
#   set -euo pipefail
#   # shellcheck source=lib/preamble.sh
#   . "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
#
# and from then on has:
#   - $here, the tests/e2e folder (absolute, whatever folder the test ran from);
#   - lib/servers.sh sourced and servers_init called: $SERVERS_DIR (a private
#     temporary folder, removed with every server on exit), free_port, the
#     start_* servers and the assertion kit (pass, fail, assert_*, summary);
#   - lib/common.sh: KISTORE (absolute, checked executable), SRC, DATA, FX, PY,
#     the isolation of lib/isolate.sh (private HOME, no machine git config,
#     fixed git identities), a private TMPDIR, KISTORE_AUTHOR, and the helpers
#     ks, mkruns, head_of, jv, gd, nlines, work_in, time_limit;
#   - lib/fingerprint.sh: store_fingerprint, assert_store_unchanged.
# It makes no work folder and changes no folder: work_in does that.
# test_servers_selfcheck, which runs no kistore (and needs no KISTORE), sources
# lib/servers.sh and lib/isolate.sh itself.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=servers.sh
. "$here/lib/servers.sh"
servers_init
# shellcheck source=common.sh
. "$here/lib/common.sh"
# shellcheck source=fingerprint.sh
. "$here/lib/fingerprint.sh"
