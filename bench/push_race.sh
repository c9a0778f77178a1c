#!/usr/bin/env bash
# Many pushers at once against one git daemon: N stores, cloned from it, each add two runs and
# push at the same moment, R waves of it. Prints how many pushes failed, whether one pull each
# leaves every store on the server's head, the server's merges per add, the pulls (lost
# races) the pushes made on the way, and the objects the pushes sent per object the server gained.
#
#   bench/push_race.sh [N] [R]      defaults 8 and 3; K=path/to/kistore (default build/kistore)
set -u
N=${1:-8}; R=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
W=${BENCH_WORK:-/tmp/kistore-push-race}; K=${K:-$here/../build/kistore}
[ -f $W/d.pid ] && kill "$(cat $W/d.pid)" 2>/dev/null
rm -rf $W; mkdir -p $W; cd $W
export KISTORE_AUTHOR="T <t@x>" HOME=$W GIT_CONFIG_NOSYSTEM=1
python3 $here/gen.py $((N*R*2+8)) --out runs.jsonl >/dev/null; split -l 2 -d -a 3 runs.jsonl part_
$K init seed >/dev/null; $K --store seed add part_000 >/dev/null; mkdir srv; git init -q --bare -b main srv/ev.git; $K --store seed push srv/ev.git >/dev/null
port=$((20000 + RANDOM % 10000))
git daemon --export-all --enable=receive-pack --base-path=$W/srv --listen=127.0.0.1 --port=$port --reuseaddr --detach --pid-file=$W/d.pid $W/srv; sleep 0.5
URL=git://127.0.0.1:$port/ev.git
for i in $(seq 1 $N); do $K clone $URL s$i >/dev/null 2>&1 || echo clone fail; done
k=1
for r in $(seq 1 $R); do
  for i in $(seq 1 $N); do $K --store s$i add part_$(printf %03d $k) >/dev/null; k=$((k+1)); done
  for i in $(seq 1 $N); do ( $K --store s$i --json push $URL > o$r.$i 2>e$r.$i; echo $? > rc$r.$i ) & done; wait
done
fails=$(cat rc* | grep -vc '^0$'); echo "pushes: $((N*R)), failed: $fails"
for i in $(seq 1 $N); do $K --store s$i pull $URL >/dev/null 2>&1; done
heads=$(for i in $(seq 1 $N); do git --git-dir=s$i rev-parse main; done | sort -u | wc -l); echo "distinct heads after one pull each: $heads"
echo "server commits: $(git --git-dir=srv/ev.git rev-list --count main), merges: $(git --git-dir=srv/ev.git rev-list --merges --count main), adds: $((N*R+1))"
jq -s '[.[] | .pulls | length] | "pulls inside pushes: \(add), most in one push: \(max)"' -r o*.*
# What the pushes sent against what the server gained: a push that merged should send its
# merge and what the merge rewrote, not objects the server already had.
seed_objects=$(git --git-dir=seed count-objects -v | awk '/^(count|in-pack):/ {s += $2} END {print s}')
server_objects=$(git --git-dir=srv/ev.git rev-list --objects --all | wc -l)
sent=$(jq -s '[.[] | .pushed_objects // 0] | add' o*.*)
echo "objects sent by the pushes: $sent; new on the server: $((server_objects - seed_objects)); sent per new object: $(python3 -c "print(round($sent / max(1, $server_objects - $seed_objects), 2))")"
grep -h "error" e* | sort | uniq -c | head
kill "$(cat $W/d.pid)"
