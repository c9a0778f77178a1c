#!/usr/bin/env bash
# What deflate does to a format-3 store's index files (refs/), per zlib level, the way kistore
# writes them (one zlib stream a file, objwrite.h blob_level): the files' bytes as they are,
# deflated at levels 1 and 6 (ratio and CPU seconds of zlib, twice each), and what git's
# objects/ folder of the store holds.
#
#   bench/index_deflate.sh STORE
#
# A store to try it on: test_bulk_add's input (bench/gen.py 10000, twelve copies of each run
# under other upstream ids: 121,251 documents) added with `kistore add`.
set -euo pipefail
store=${1:?usage: bench/index_deflate.sh STORE}
git --git-dir="$store" ls-tree -r main -- refs | awk '{print $3}' |
    git --git-dir="$store" cat-file --batch | python3 -c '
import sys, time, zlib
data = sys.stdin.buffer.read()
files, at = [], 0
while at < len(data):
    nl = data.index(b"\n", at)
    size = int(data[at:nl].split()[2])
    files.append(data[nl + 1:nl + 1 + size])
    at = nl + 1 + size + 1
total = sum(map(len, files))
print(f"refs/: {len(files)} files, {total} bytes")
for level in (1, 6, 1, 6):
    t0 = time.process_time()
    packed = sum(len(zlib.compress(f, level)) for f in files)
    print(f"level {level}: {packed} bytes ({packed / total:.3f}), {time.process_time() - t0:.2f} s")
'
echo "objects/: $(du -sb "$store/objects" | cut -f1) bytes"
