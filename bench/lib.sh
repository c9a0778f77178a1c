# Shared by bench/merge.sh and bench/pull_commits.sh: a fixed identity and no user or system git
# configuration, and `m LABEL CMD...`, which runs CMD (its output in $WORK/last.log) and prints its
# wall seconds and peak RSS (/usr/bin/time -v), or stops the bench when it fails. Needs $WORK.
export KISTORE_AUTHOR="Bench <bench@example.org>"
export GIT_AUTHOR_NAME=Bench GIT_AUTHOR_EMAIL=bench@example.org
export GIT_COMMITTER_NAME=Bench GIT_COMMITTER_EMAIL=bench@example.org
export GIT_CONFIG_NOSYSTEM=1 HOME=$WORK/home LC_ALL=C

m() {
  local label=$1; shift
  /usr/bin/time -v -o "$WORK/time.tmp" "$@" >"$WORK/last.log" 2>&1 || {
    echo "FAILED: $*" >&2; tail -20 "$WORK/last.log" >&2; exit 3; }
  awk -F': ' -v l="$label" '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i] }
              /Maximum resident set size/ { r = $2 }
              END { printf "  %-40s %8.2f s   peak RSS %7.1f MiB\n", l, s, r / 1024 }' "$WORK/time.tmp"
}
