#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# The trust list (SPEC §1: a controller is a key in the store's allowed-signers
# file, options namespaces, valid-after and valid-before honoured; the level is
# a function of the history and that list, and verify and every reader agree):
#   (a) a key listed for alice twice, by `trust add` and by a pasted git-format
#       line naming several principals: `trust remove alice` removes both lines
#       and says so; a new rerun signed with the key is refused (exit 2, store
#       byte for byte unchanged); the run it reproduced stands at its default
#       level in rank, show, compare, export, the site's page and log --run, each
#       with the stored entry beside it, as verify computes; stock
#       `git verify-commit` no longer accepts the rerun commit either;
#   (b) a multi-principal line alone loses alice by removing the whole line,
#       naming it; other lines and comments stay byte for byte; a principal on
#       no line is exit 1, the file untouched;
#   (c) valid-after in the future / valid-before in the past of the rerun
#       commit's committer time: the signature is not trusted (default level,
#       verify reports it), as `git verify-commit` judges it; a window that
#       holds the commit time: trusted; no reader exits 2 on these options; a
#       rerun signed with a key outside its window is refused, saying why;
#   (d) a cert-authority line trusts nothing, and no reader fails on it.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Everything lives in
# a temp dir it removes. E2E_KEEP_GOING=1 records a failed check and goes on.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

# site_level PAGE RUN level|unverified: the level a group page shows for RUN
# (its row's, else the one every run shares, above the table), or the text of
# the "unverified" note beside it ("" when there is none).
site_level() {
  python3 - "$1" "$2" "$3" <<'PY'
import html, re, sys
page, run, what = sys.argv[1], sys.argv[2].split(":")[-1][:12], sys.argv[3]
text = open(page, encoding="utf-8").read()
row = re.search(r'<tr id="run-%s">.*?</tr>' % run, text, re.S)
if not row:
    sys.exit("no row run-%s in %s" % (run, page))
where = row.group(0)
if 'class="level ' not in where:
    shared = re.search(r'<dl class="facts" id="shared">.*?</dl>', text, re.S)
    where = shared.group(0) if shared else ""
level = re.search(r'<span class="level ([a-z-]+)">', where)
note = re.search(r'<span class="unverified">(.*?)</span>', where, re.S)
if what == "level":
    print(level.group(1) if level else "")
else:
    print(html.unescape(note.group(1)) if note else "")
PY
}

work_in w
ks() { timeout -k 2 60 "$KISTORE" --no-progress "$@" </dev/null; }

cp "$SRC/tests/data/keys/controller" "$SRC/tests/data/keys/controller.pub" \
   "$SRC/tests/data/keys/outsider" "$SRC/tests/data/keys/outsider.pub" .
chmod 600 controller outsider
KEY=$(cut -d' ' -f1,2 controller.pub)
OKEY=$(cut -d' ' -f1,2 outsider.pub)

RUN=sha256:628643ba921878ef6035a1321da64c56f5b4a470a3fa12e9ab5239c742fec354 # liger_tiled, source-native
RH=${RUN#sha256:}

# new_store DIR : a store with the Liger sample imported
new_store() {
    assert_exit 0 ks --store "$1" init
    assert_exit 0 ks --store "$1" import liger "$SRC/tests/data/liger/sample.csv"
}
# make_rerun STORE MEDIAN_NS OUT : a controlled rerun of RUN with another median
make_rerun() {
    ks --store "$1" show "$RUN" --canonical >bundle.json
    rerun_bundle bundle.json "$2" >"$3"
}
# git_verifies STORE COMMIT : stock git's verdict on COMMIT against the store's trust list
git_verifies() {
    git --git-dir="$1" -c gpg.ssh.allowedSignersFile="$(ks --store "$1" trust path)" verify-commit "$2" >/dev/null 2>&1
}
# levels_agree STORE LEVEL STORED WHAT : every reader gives RUN the level LEVEL,
# with the stored entry STORED beside it ("" when there is none), and verify's
# verdict agrees (exit 0 when STORED is "", else 1 naming LEVEL as expected).
levels_agree() {
    local s=$1 want=$2 stored=$3 what=$4 other
    assert_exit 0 ks --store "$s" --json rank "$RUN"
    assert_eq "$want ${stored:-null}" \
        "$(jv --arg r "$RUN" '.members[] | select(.run == $r) | "\(.level) \(.storedLevel)"')" "$what: rank --json"
    other=$(jv --arg r "$RUN" -r '[.members[] | select(.run != $r)][0].run')
    assert_exit 0 ks --store "$s" rank "$RUN"
    if [[ -n $stored ]]; then
        assert_contains "$OUT" "$want (stored: $stored, not justified by the trust list" "$what: rank"
    else
        assert_contains "$OUT" " $want " "$what: rank"
        assert_not_contains "$OUT" "stored:" "$what: rank shows no stored entry"
    fi
    assert_exit 0 ks --store "$s" --json show "$RUN"
    assert_eq "$want ${stored:-null}" "$(jv '"\(.evidence.level) \(.evidence.storedLevel)"')" "$what: show --json"
    assert_exit 0 ks --store "$s" show "$RUN"
    assert_contains "$OUT" "level: $want" "$what: show"
    assert_exit 0 ks --store "$s" --json compare "$RUN" "$other"
    assert_eq "$want ${stored:-null}" "$(jv '"\(.a.level) \(.a.storedLevel)"')" "$what: compare --json"
    assert_exit 0 ks --store "$s" export --format jsonl
    assert_eq "$want" "$(jq -r --arg r "$RUN" 'select(.run == $r) | .level' <<<"$OUT")" "$what: export level"
    if [[ -n $stored ]]; then
        assert_contains "$(jq -r --arg r "$RUN" 'select(.run == $r) | .storedLevel' <<<"$OUT")" \
            "$stored (not justified by the trust list" "$what: export storedLevel"
    else
        assert_eq "null" "$(jq -r --arg r "$RUN" 'select(.run == $r) | .storedLevel' <<<"$OUT")" "$what: export"
    fi
    rm -rf site
    assert_exit 0 ks --store "$s" site site
    # The site: the run's row of its group's page shows its level (or, when
    # every run of the group has one level, the line above the table says it)
    # and an entry the trust list does not justify as "unverified".
    page=site/groups/"$(jq -r .group <<<"$(ks --store "$s" --json rank "$RUN")" | cut -d: -f2)".html
    assert_eq "$want" "$(site_level "$page" "$RUN" level)" "$what: site group page, level"
    if [[ -n $stored ]]; then
        assert_contains "$(site_level "$page" "$RUN" unverified)" "stored: $stored, not justified by the trust list" \
            "$what: site group page, the stored entry"
    else
        assert_eq "" "$(site_level "$page" "$RUN" unverified)" "$what: site group page, nothing unverified"
    fi
    assert_exit 0 ks --store "$s" --json log --run "$RUN"
    assert_eq "$want ${stored:-null}" "$(jv '"\(.level) \(.storedLevel)"')" "$what: log --run --json"
    assert_exit 0 ks --store "$s" log --run "$RUN"
    assert_contains "$OUT" "level: $want" "$what: log --run"
    if [[ -n $stored ]]; then
        assert_exit 1 ks --store "$s" verify
        assert_contains "$ERR" "level-unjustified" "$what: verify reports the entry"
        assert_contains "$ERR" "expected $want" "$what: verify computes the same level"
    else
        assert_exit 0 ks --store "$s" verify
    fi
}

# ------------------------------------------------------------------------------
# (a) The twice-listed key.
new_store A
assert_exit 0 ks --store A trust add alice controller.pub
TF=$(ks --store A trust path)
printf 'alice,bob %s pasted-from-git\n' "$KEY" >>"$TF"
assert_exit 0 ks --store A trust list
assert_contains "$OUT" "alice,bob SHA256:" "(a) trust list shows the pasted line"
make_rerun A 2650000 close.json
make_rerun A 2660000 close2.json
assert_exit 0 ks --store A rerun "$RUN" close.json --sign controller
C1=$(head_of A)
git_verifies A "$C1" || fail "(a) stock git verifies the rerun commit before the removal"
levels_agree A reproduced "" "(a) before"

assert_exit 0 ks --store A trust remove alice
assert_contains "$ERR" "line 1 removed: it named \"alice\" alone" "(a) names the trust add line"
assert_contains "$ERR" "line 2 removed: it named \"alice,bob\"" "(a) names the pasted line"
assert_contains "$ERR" "kistore trusts keys, not names" "(a) says why the whole line goes"
[[ -s $TF ]] && fail "(a) the trust file still holds a line: $(cat "$TF")"
assert_exit 0 ks --store A trust list
assert_not_contains "$OUT" "SHA256:" "(a) no controller left"
git_verifies A "$C1" && fail "(a) stock git still verifies the rerun commit"

# A new rerun signed with the key is refused; nothing is written.
fp_before=$(store_fingerprint A)
assert_exit 2 ks --store A rerun "$RUN" close2.json --sign controller
assert_contains "$ERR" "is not a controller of this store" "(a) the removed key signs no rerun"
assert_store_unchanged "$fp_before" A "(a) the refused rerun"
levels_agree A source-native reproduced "(a) after trust remove alice"
pass "(a) a key listed twice (trust add + pasted multi-principal line): trust remove alice stops it; readers and verify agree"

# ------------------------------------------------------------------------------
# (b) A multi-principal line alone; other lines and comments stay as they were.
new_store B
TB=$(ks --store B trust path)
mkdir -p "$(dirname "$TB")"
printf '# team keys\r\ncarol namespaces="git" %s\r\nbob,alice %s\n\n# end' "$OKEY" "$KEY" >"$TB"
assert_exit 0 ks --store B rerun "$RUN" close.json --sign controller
assert_exit 0 ks --store B --json trust remove alice
assert_eq "3" "$(jv '.lines[0].line')" "(b) --json names line 3"
assert_contains "$(jv '.lines[0].why')" "it named \"bob,alice\"" "(b) and why"
assert_eq "$(printf '# team keys\r\ncarol namespaces="git" %s\r\n\n# end' "$OKEY")" "$(cat "$TB")" \
    "(b) only the line went; the rest byte for byte"
cp "$TB" tb.before
assert_exit 1 ks --store B trust remove alice
assert_contains "$ERR" "$TB: PRINCIPAL \"alice\" is named on no line" "(b) a principal on no line: exit 1, names the file"
cmp -s tb.before "$TB" || fail "(b) a refused remove changed the file"
levels_agree B source-native reproduced "(b) after the line went"
pass "(b) a multi-principal line loses alice by going whole, named; the rest of the file byte for byte"

# ------------------------------------------------------------------------------
# (c) valid-after / valid-before against the rerun commit's committer time.
new_store C
TC=$(ks --store C trust path)
mkdir -p "$(dirname "$TC")"
printf 'ctl namespaces="git" %s\n' "$KEY" >"$TC"
assert_exit 0 ks --store C rerun "$RUN" close.json --sign controller
C3=$(head_of C)
when=$(git --git-dir=C log -1 --format=%ct "$C3")
stamp() { date -u -d "@$1" +%Y%m%d%H%M%SZ; }
shapes=(
    "future|valid-after=\"$(stamp $((when + 60)))\"|no"
    "past|valid-before=\"$(stamp $((when - 60)))\"|no"
    "past-date|valid-before=\"20000101\"|no"
    "window|valid-after=\"$(stamp $((when - 60)))\",valid-before=\"$(stamp $((when + 60)))\"|yes"
    "after-edge|valid-after=\"$(stamp "$when")\"|yes"
    "before-edge|valid-before=\"$(stamp "$when")\"|yes"
    "window+namespaces|namespaces=\"git\",valid-after=\"20000101\",valid-before=\"20991231\"|yes"
    "other-namespace|namespaces=\"file\",valid-before=\"20991231\"|no"
)
for shape in "${shapes[@]}"; do
    IFS='|' read -r name opts trusted <<<"$shape"
    printf 'ctl %s %s\n' "$opts" "$KEY" >"$TC"
    if [[ $trusted == yes ]]; then
        git_verifies C "$C3" || fail "(c) $name: stock git rejects the commit"
        levels_agree C reproduced "" "(c) $name"
    else
        git_verifies C "$C3" && fail "(c) $name: stock git accepts the commit"
        levels_agree C source-native reproduced "(c) $name"
        assert_exit 0 ks --store C --json rank "$RUN"
        assert_eq "signer not trusted" "$(jv --arg r "$RUN" '.members[] | select(.run == $r) | .why')" "(c) $name: why"
    fi
    assert_exit 0 ks --store C --json log --run "$RUN"
    [[ $trusted == yes ]] && want=trusted || want=untrusted
    assert_eq "$want" "$(jv '[.entries[] | select(.op == "rerun")][0].signature.status')" "(c) $name: log's signature"
done
# Why, in words: the window and the commit's time.
printf 'ctl valid-before="20000101Z" %s\n' "$KEY" >"$TC"
assert_exit 0 ks --store C log -n 1
assert_contains "$OUT" "the key is not valid after 2000-01-01T00:00:00Z (valid-before=\"20000101Z\")" \
    "(c) log says why the key does not count"
# A rerun now with a key whose window has not begun: refused, saying why.
printf 'ctl valid-after="20991231Z" %s\n' "$KEY" >"$TC"
fp_before=$(store_fingerprint C)
make_rerun C 2670000 close3.json
assert_exit 2 ks --store C rerun "$RUN" close3.json --sign controller
assert_contains "$ERR" "the key is not valid before 2099-12-31T00:00:00Z" "(c) rerun says why"
assert_store_unchanged "$fp_before" C "(c) the refused rerun"
# A malformed time is a local input error naming the file and line, as ssh-keygen refuses it.
printf '# x\nctl valid-after=20200101 %s\n' "$KEY" >"$TC"
assert_exit 2 ks --store C rank "$RUN"
assert_contains "$ERR" "$TC:2: expected a double-quoted time after valid-after=" "(c) malformed time named"
pass "(c) valid-after / valid-before honoured at the rerun commit's time, as git verify-commit; no reader exits 2"

# ------------------------------------------------------------------------------
# (d) cert-authority: trusts nothing here, and fails nothing.
printf 'ctl cert-authority %s\n' "$KEY" >"$TC"
assert_exit 0 ks --store C trust list
assert_contains "$OUT" "cert-authority: trusts nothing here" "(d) trust list says so"
levels_agree C source-native reproduced "(d) cert-authority"
pass "(d) a cert-authority line trusts no plain key; readers show the default level and exit 0"

# ------------------------------------------------------------------------------
# (e) A public key file whose comment holds an escape sequence, a bell, a NUL
# and what looks like another principal's line: `trust add` once copied it
# into the trust list as it was (read by people with cat and editors).
new_store E
printf '%s \033]0;OWNED\007\033[2J c\0 evil@x ssh-ed25519 AAAA\n' "$(cut -d' ' -f1,2 controller.pub)" >hostile.pub
TE=$(ks --store E trust path)
list_sum() { if [[ -e $TE ]]; then sha256sum <"$TE"; else echo "no file"; fi; }
before=$(list_sum)
assert_exit 2 ks --store E trust add alice hostile.pub
assert_contains "$ERR" "hostile.pub: " "(e) names the key file"
assert_contains "$ERR" "a key comment cannot hold a control character" "(e) says what is wrong"
assert_eq "$before" "$(list_sum)" "(e) the trust list is as it was"
printf '%s r\xc3\xa9sum\xc3\xa9 \xe2\x80\x93 laptop\n' "$(cut -d' ' -f1,2 controller.pub)" >fine.pub
assert_exit 0 ks --store E trust add alice fine.pub
assert_contains "$(cat "$TE")" $'r\xc3\xa9sum\xc3\xa9 \xe2\x80\x93 laptop' "(e) a UTF-8 comment is kept"
pass "(e) trust add of a key whose comment holds control bytes: exit 2 naming the file, the list unchanged"

summary
