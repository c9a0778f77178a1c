#!/usr/bin/env bash
# Evidence end to end: groups and ranks from imported Liger rows, attestations
# that never change a level, signed controlled reruns, the trust list, forged
# promotions made with stock git caught by verify, and the audit log.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
data="$here/../data"
export KISTORE_AUTHOR="Evidence Test <evidence@example.org>"
use_store "$SERVERS_DIR/store"
cd "$SERVERS_DIR"
head_of() { git --git-dir="$S" rev-parse main; }
run=sha256:628643ba921878ef6035a1321da64c56f5b4a470a3fa12e9ab5239c742fec354   # fixture row, liger_tiled

assert_exit 0 "$KISTORE" init
assert_exit 0 "$KISTORE" --json import liger "$data/liger/sample.csv"
assert_contains "$OUT" '"added":' "import --json summary"
n_runs=$("$KISTORE" ls --kind BenchmarkRun | wc -l)
assert_eq 17 "$n_runs" "every sample row is a run"
pass "import: 17 rows -> 17 runs"
assert_exit 0 "$KISTORE" --json import liger "$data/liger/sample.csv"
assert_contains "$OUT" '"added":0' "re-import adds nothing"
assert_contains "$OUT" '"commit":null' "re-import makes no commit"
pass "import is idempotent"

# Rank: the fixture's row is 3 of 4 in its group.
assert_exit 0 "$KISTORE" --json rank 628643ba
python3 - "$OUT" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
ranks = [(m["rank"], m["implementation"]) for m in r["members"]]
assert ranks == [(1, "liger"), (2, "huggingface"), (3, "liger_tiled"), (4, "deepspeed_tiled")], ranks
assert all(m["unit"] == "ns" and m["level"] == "source-native" for m in r["members"])
assert r["group"].startswith("sha256:")
PY
pass "rank: liger_tiled ranks 3 of 4 (json)"
group=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["group"])' "$OUT")
assert_exit 0 "$KISTORE" rank "${group#sha256:}"
assert_contains "$OUT" "liger_tiled" "rank by group key"
assert_contains "$OUT" "NVIDIA GeForce RTX 4090" "rank header names the GPU"
pass "rank by group key"
assert_exit 0 "$KISTORE" --json groups --gpu 4090
assert_contains "$OUT" "$group" "groups --gpu lists the group"
assert_exit 0 "$KISTORE" groups --benchmark tiled_geglu/backward
assert_eq 2 "$(printf '%s\n' "$OUT" | wc -l)" "speed and memory groups of tiled_geglu backward"
pass "groups with filters"
assert_exit 0 "$KISTORE" ls --level source-native
assert_eq 17 "$(printf '%s\n' "$OUT" | wc -l)" "every passed row is source-native"
pass "ls --level"

# Attestations never change a level; attesting an unknown run is refused.
before=$(head_of)
assert_exit 1 "$KISTORE" attest deadbeefdeadbeef --note "no such run"
assert_contains "$ERR" "no object in the store matches" "unknown run"
assert_eq "$before" "$(head_of)" "nothing written for an unknown run"
assert_exit 0 "$KISTORE" attest 628643ba --note "matches our numbers"
assert_exit 0 "$KISTORE" --json show 628643ba
assert_contains "$OUT" '"attestations":1' "show counts attestations"
assert_contains "$OUT" '"level":"source-native"' "attestation leaves the level"
assert_contains "$OUT" '"rank":3' "show gives the rank"
assert_eq "matches our numbers" "$(jv '.evidence.attestation_list[0].body')" "show --json carries the note"
assert_eq "note" "$(jv '.evidence.attestation_list[0].type')" "show --json carries the type"
assert_exit 0 "$KISTORE" show 628643ba
assert_contains "$OUT" "attestation note" "show lists each attestation"
assert_contains "$OUT" ": matches our numbers" "show prints the note"
pass "attest: note indexed and shown, level unchanged"

# A note is what an attester wrote: a line break in it cannot print a line of
# its own in show's evidence (a forged "level: reproduced").
# (Another run than 628643ba, whose history is checked below.)
assert_exit 0 "$KISTORE" ls --kind run
other=$(grep -v '^sha256:628643ba' <<<"$OUT" | head -1 | cut -d' ' -f1)
assert_exit 0 "$KISTORE" attest "$other" --note $'fine\nlevel: reproduced'
assert_exit 0 "$KISTORE" show "$other"
assert_eq 0 "$(grep -c '^level: reproduced' <<<"$OUT" || true)" "no forged level line"
assert_contains "$OUT" ": fine level: reproduced" "the note on its one line"
assert_exit 0 "$KISTORE" --json show "$other"
assert_contains "$OUT" '"level":"source-native"' "the level stands"
pass "attest: a note cannot forge a line of show"

# Controlled reruns: keys and the trust list.
cp "$data/keys/controller" "$data/keys/controller.pub" "$data/keys/outsider" "$data/keys/outsider.pub" .
chmod 600 controller outsider
"$KISTORE" show 628643ba --canonical > bundle.json
make_rerun() { rerun_bundle bundle.json "$1" "rerun-$1" >"$2"; }  # make_rerun MEDIAN_NS OUT
make_rerun 2650000 close.json      # +1.7 %
make_rerun 3400000 far.json        # +30 %
before=$(head_of)
assert_exit 2 "$KISTORE" rerun 628643ba close.json
assert_contains "$ERR" "must be signed" "rerun without a key"
assert_exit 2 "$KISTORE" rerun 628643ba close.json --sign outsider
assert_contains "$ERR" "is not a controller" "rerun with an untrusted key"
assert_exit 0 "$KISTORE" trust add controller@example.org controller.pub
assert_exit 0 "$KISTORE" trust list
assert_contains "$OUT" "controller@example.org SHA256:" "trust list"
assert_exit 2 "$KISTORE" rerun deadbeefdeadbeef close.json --sign controller
assert_contains "$ERR" "no object in the store matches" "rerun of an unknown run"
other=$("$KISTORE" ls --kind BenchmarkRun | grep -v 628643ba | head -1 | cut -d' ' -f1)
assert_exit 2 "$KISTORE" rerun "$other" close.json --sign controller
assert_contains "$ERR" "expected a rerun in RUN's comparison group" "rerun from another group"
assert_eq "$before" "$(head_of)" "refused reruns write nothing"
pass "rerun refusals: no key, untrusted key, unknown run, other group (exit 2, nothing written)"

# The key file is read by the command line: a missing one is an I/O error
# naming it, and nothing is written (every file of the store hashed before and after).
store_hash() { (cd "$S" && find . -type f -print0 | sort -z | xargs -0 sha256sum) | sha256sum | cut -d' ' -f1; }
hash_before=$(store_hash)
assert_exit 3 "$KISTORE" rerun 628643ba close.json --sign "$SERVERS_DIR/no-such-key"
assert_contains "$ERR" "$SERVERS_DIR/no-such-key: cannot open the private key file: No such file or directory" \
  "missing key file"
assert_eq "$hash_before" "$(store_hash)" "a missing key leaves the store as it was"
pass "rerun --sign with a missing key file: exit 3 naming the file, store unchanged"

# A controlled rerun times the same code: a run of another implementation in
# the same group (same protocol, GPU and workload) is refused, naming the member.
hf=$("$KISTORE" --json rank 628643ba | python3 -c 'import json,sys; print([m["run"] for m in json.load(sys.stdin)["members"] if m["implementation"] == "huggingface"][0])')
"$KISTORE" show "$hf" --canonical > hf-bundle.json
python3 - > other-impl.json <<'PY'
import json
b = json.load(open("hf-bundle.json"))
r = b["run"]["spec"]
r["timing"]["latencyNs"]["median"] = 2650000
r["observedAt"] = "2026-11-30T09:00:00.000Z"
del r["sourceNative"]
print(json.dumps(b))
PY
want_impl=$(python3 -c 'import json; print(json.load(open("bundle.json"))["run"]["spec"]["implementationDigest"])')
found_impl=$(python3 -c 'import json; print(json.load(open("other-impl.json"))["run"]["spec"]["implementationDigest"])')
[[ $want_impl != "$found_impl" ]] || fail "the huggingface run has the same implementation as liger_tiled"
assert_exit 2 "$KISTORE" rerun 628643ba other-impl.json --sign controller
assert_contains "$ERR" "other-impl.json: /run/spec/implementationDigest: expected RUN's implementation $want_impl" \
  "names the pointer and the implementation expected"
assert_contains "$ERR" "found $found_impl" "names the implementation found"
assert_eq "$hash_before" "$(store_hash)" "a rerun of another implementation leaves every file of the store as it was"
pass "rerun of another implementation: exit 2, /run/spec/implementationDigest expected and found, store unchanged"

# --tolerance is a finite number in (0, 1]; anything else is refused before anything is written.
for t in nan 0 -1 2 inf; do
  assert_exit 2 "$KISTORE" rerun 628643ba close.json --sign controller --tolerance "$t"
  assert_contains "$ERR" "--tolerance: expected a finite number greater than 0 and at most 1" "--tolerance $t refused"
  assert_contains "$ERR" "found $t" "--tolerance $t: the message names what was given"
  assert_eq "$hash_before" "$(store_hash)" "--tolerance $t leaves the store as it was"
done
pass "rerun --tolerance nan, 0, -1, 2, inf: exit 2, a message, store unchanged"

assert_exit 0 "$KISTORE" --json rerun 628643ba close.json --sign controller
assert_contains "$OUT" '"level":"reproduced"' "within tolerance: reproduced"
close_out=$OUT
git --git-dir="$S" -c gpg.ssh.allowedSignersFile="$("$KISTORE" trust path)" verify-commit main 2>verify.err \
  || fail "stock git verify-commit rejects kistore's signed rerun: $(cat verify.err)"
assert_contains "$(cat verify.err)" 'Good "git" signature for controller@example.org' "git verify-commit output"
show=$(git --git-dir="$S" -c gpg.ssh.allowedSignersFile="$("$KISTORE" trust path)" log -1 --show-signature main 2>&1)
assert_contains "$show" 'Good "git" signature' "git log --show-signature"
pass "stock git verifies kistore's SSH signature"
assert_exit 0 "$KISTORE" --json rank 628643ba --min-level reproduced
python3 - "$OUT" <<'PY'
import json, sys
m = json.loads(sys.argv[1])["members"]
assert [x["implementation"] for x in m] == ["liger_tiled"], m
assert m[0]["level"] == "reproduced" and m[0]["rank"] == 1
PY
pass "rank --min-level reproduced keeps the reproduced run"
assert_exit 0 "$KISTORE" verify
pass "verify accepts a signed rerun by a trusted controller"

# A rerun far off disputes; the tolerance is honoured.
assert_exit 0 "$KISTORE" --json rerun 628643ba far.json --sign controller --tolerance 0.10
assert_contains "$OUT" '"level":"disputed"' "30 % off: disputed"
assert_exit 0 "$KISTORE" verify
assert_exit 0 "$KISTORE" ls --level disputed
assert_contains "$OUT" "628643ba" "ls --level disputed"
pass "rerun outside tolerance disputes"

# log --run tells the whole story, newest first.
assert_exit 0 "$KISTORE" --json log --run 628643ba
python3 - "$OUT" <<'PY'
import json, sys
e = json.loads(sys.argv[1])["entries"]
ops = [x["op"] for x in e]
assert ops == ["rerun", "rerun", "attest", "import"], ops
assert e[0]["signature"]["status"] == "trusted" and e[0]["signature"]["principal"] == "controller@example.org"
assert e[2]["signature"]["status"] == "unsigned"
assert "entered level disputed" in e[0]["changes"] and "left level reproduced" in e[0]["changes"], e[0]
# Format 3: a run at its default level (source-native) has no levels line, so
# the first rerun enters reproduced and leaves no line, and the import enters
# no level line (show said source-native before the reruns, above).
assert "entered level reproduced" in e[1]["changes"], e[1]
assert not any(c.startswith("left level") for c in e[1]["changes"]), e[1]
assert any(c.startswith("rerun recorded sha256:") for c in e[0]["changes"]), e[0]
assert any(c.startswith("rerun recorded sha256:") for c in e[1]["changes"]), e[1]
assert any(c.startswith("attested by sha256:") for c in e[2]["changes"])
assert any(c.startswith("added sha256:628643ba") for c in e[3]["changes"])
assert not any("level" in c for c in e[2]["changes"] + e[3]["changes"]), e[2:]
PY
pass "log --run: import, attest, two reruns with level changes and signers"
assert_exit 0 "$KISTORE" log --op rerun -n 1
assert_contains "$OUT" "Op:     rerun" "log --op"
assert_contains "$OUT" "trusted controller" "log shows the signer"
pass "log --op and -n"

# Forged promotions, made with stock git, are caught by verify. Format 3: the
# forgery is a levels line "reproduced" for a run at its default level (which
# has no line), its evidence a real stored rerun (of another run).
tamper_level() {  # tamper_level RUN-HEX [SIGNING-KEY]: give a run a levels line "reproduced"
  local victim=$1 key=${2:-} tree commit
  tree=$(set_line "$S" levels "$victim" "{\"@key\":\"$victim\",\"evidence\":\"$close_rerun\",\"level\":\"reproduced\"}" |
    tree_with "$S" main)
  local sign=()
  [[ -z $key ]] || sign=(-c gpg.format=ssh -c user.signingkey="$key")
  commit=$(git "${sign[@]}" --git-dir="$S" commit-tree "$tree" -p main ${key:+-S} -m "promote" -m "Kistore-Op: rerun")
  git --git-dir="$S" update-ref refs/heads/main "$commit"
}
victim=${other#sha256:}
run_hex=${run#sha256:}
close_rerun=$(jq -r .rerun <<<"$close_out")
[[ $close_rerun == sha256:* ]] || fail "the first rerun's digest: $close_rerun"
good=$(head_of)
assert_eq 1 "$(index_keys "$S" levels | wc -l)" "one levels line before the forgery: the rerun run's"
if index_line "$S" levels "$victim" >/dev/null 2>&1; then fail "the victim already has a levels line"; fi
tamper_level "$victim"
victim_file=$(index_file "$S" levels "$victim")
assert_contains "$(index_line "$S" levels "$victim")" '"level":"reproduced"' "the forged line is in the tree"
assert_exit 1 "$KISTORE" --json verify
assert_contains "$OUT" '"kind":"level-unjustified"' "unsigned promotion"
assert_contains "$OUT" "$victim_file @$victim" "names the file and the key"
pass "verify: unsigned promotion made with stock git"
git --git-dir="$S" update-ref refs/heads/main "$good"
tamper_level "$victim" "$SERVERS_DIR/outsider"
git --git-dir="$S" cat-file commit main | grep -q "BEGIN SSH SIGNATURE" || fail "forged commit is not signed"
assert_exit 1 "$KISTORE" --json verify
assert_contains "$OUT" '"kind":"level-unjustified"' "promotion signed by an untrusted key"
assert_contains "$OUT" 'untrusted key' "says the key is untrusted"
assert_contains "$OUT" "$victim_file @$victim" "names the forged line"
pass "verify: promotion signed by a key outside the trust list"
printf 'outsider@example.org namespaces="git" %s\n' "$(cut -d' ' -f1,2 outsider.pub)" > published-signers
assert_exit 1 "$KISTORE" verify --allowed-signers published-signers
# The run's own "disputed" line (format 2: refs/levels/disputed/…).
assert_contains "$ERR" "$(index_file "$S" levels "$run_hex") @$run_hex" "without the controller, its reruns are unjustified too"
# A trusted signature is not enough: the promotion adds no rerun, so it is no
# valid rerun commit (SPEC §1) whoever signed it.
assert_contains "$ERR" "$victim_file @$victim" "the outsider's promotion, even with the outsider trusted"
assert_contains "$ERR" "adds no rerun of this run" "says why the promotion is no valid rerun commit"
printf 'controller@example.org %s\n' "$(cut -d' ' -f1,2 controller.pub)" >> published-signers
git --git-dir="$S" update-ref refs/heads/main "$good"
assert_exit 0 "$KISTORE" verify --allowed-signers published-signers
pass "verify --allowed-signers: a third party's list of controllers decides"
assert_exit 0 "$KISTORE" verify
assert_exit 0 "$KISTORE" trust remove controller@example.org
assert_exit 1 "$KISTORE" verify
assert_contains "$ERR" "level-unjustified" "removing the controller un-trusts its reruns"
pass "trust remove: the store no longer accepts that controller's levels"

# Golden `log --run`: with pinned dates and a fixed key, the history is byte
# for byte reproducible (Ed25519 signatures are deterministic).
# KISTORE_ACCEPT=1 rewrites the golden file.
golden="$data/e2e/log-run.golden"
export KISTORE_DIR="$SERVERS_DIR/golden" KISTORE_DATE=1767225600
cp "$data/liger/sample.csv" sample.csv   # commit bodies name inputs as given: keep them relative
assert_exit 0 "$KISTORE" init
assert_exit 0 "$KISTORE" import liger sample.csv
export KISTORE_DATE=1767229200
assert_exit 0 "$KISTORE" attest 628643ba --note "matches our numbers" --author "Reader <reader@example.org>"
assert_exit 0 "$KISTORE" trust add controller@example.org controller.pub
export KISTORE_DATE=1767232800
assert_exit 0 "$KISTORE" rerun 628643ba close.json --sign controller
assert_exit 0 "$KISTORE" log --run 628643ba
if [[ ${KISTORE_ACCEPT:-} == 1 ]]; then printf '%s\n' "$OUT" > "$golden"; fi
assert_eq "$(cat "$golden")" "$OUT" "log --run matches $golden"
pass "golden log --run"
summary
