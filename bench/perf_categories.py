#!/usr/bin/env python3
"""Where kistore's time goes: folds `perf script` call stacks into named categories.

    perf script -i perf.data | bench/perf_categories.py [--top 25] [--unmatched 10]

Every sample goes to the first category (in the order below) that one of its frames matches, so
more specific categories come first (e.g. "SHA-256" before "parse input", which calls it).
Prints the share of samples per category, and with --unmatched the hottest leaf functions of the
samples no category claimed. The libgit2 of Debian has no symbols for its internal functions:
categories key on its exported ones (git_packbuilder_write, git_indexer_append, ...) that stay
on the stack.
"""

import argparse
import collections
import re
import sys

# (category, frames that all must be on the stack: regexes on the function name)
CATEGORIES = [
    ("process start (dynamic loader)", [r"^_dl_|^dl_main$"]),
    ("libgit2 init: TLS CA certificates (mbedtls)", [r"^mbedtls_"]),
    ("pack: indexer (re-inflate + SHA-1 + .idx of the pack just written)", [r"^git_indexer_"]),
    ("pack: zlib deflate of each object", [r"^git_packbuilder_(write|foreach)$", r"^(deflate|deflateReset|deflateInit.*)$"]),
    ("pack: delta search threads", [r"^start_thread$"]),
    ("pack: read objects back (git_odb_read + SHA-1 verify)", [r"^git_packbuilder_(write|foreach)$", r"^git_odb_read$"]),
    ("pack: walk + insert objects (git_packbuilder_insert_*)", [r"^git_packbuilder_insert_(walk|tree|commit|recur)$"]),
    ("pack: other", [r"^git_packbuilder_"]),
    ("push: other packing", [r"^git_(remote_push|remote_upload|push_finish)$", r"^git_packbuilder_"]),
    ("push: other", [r"^git_(remote_push|remote_upload|push_finish|remote_connect.*|remote_fetch|remote_download)$"]),
    ("git_odb_refresh: pack-dir rescan on each object miss", [r"^git_odb_refresh$"]),
    ("git_tree_entry_bypath (dirs to pack)", [r"^kistore::Store::write_commit", r"^git_tree_entry_bypath$"]),
    ("blob writes (SHA-1, mempack/loose)", [r"^git_blob_create_from_buffer$"]),
    ("tree build (git_tree_create_updated)", [r"^git_tree_create_updated$"]),
    ("commit + ref update", [r"^git_(commit_create.*|odb_write|reference_create.*)$"]),
    ("zstd compress", [r"^ZSTD_compress"]),
    ("zstd decompress", [r"^ZSTD_decompress"]),
    ("SHA-256 (OpenSSL)", [r"^(SHA256.*|sha256_.*|EVP_Digest.*|kistore::Digest::of)"]),
    ("JCS canonicalize", [r"^kistore::(canonical|write_canonical|\(anonymous namespace\)::CanonicalWriter)"]),
    ("verify: history walk (diff per commit)", [r"^git_(diff_tree_to_tree|revwalk_next)$"]),
    ("verify: index check", [r"check_index$"]),
    ("parse JSON (rapidjson + Json tree)", [r"^kistore::parse_json$|rapidjson::"]),
    ("documents: validate + build", [r"^kistore::(Document|Bundle)::from_"]),
    ("index entries (group key, refs)", [r"^kistore::index_entries$"]),
    ("tree walk + blob read (libgit2)", [r"^git_(tree_lookup|blob_lookup|object_lookup.*|odb_read)$"]),
    ("read input files", [r"^kistore::cli::read_input_file$"]),
    ("free memory / destructors", [r"~|^(cfree|free|_int_free|malloc_consolidate|__libc_free)"]),
    ("process exit", [r"^(exit|__run_exit_handlers|_dl_fini)$"]),
]

COMPILED = [(name, [re.compile(p) for p in pats]) for name, pats in CATEGORIES]


def frames_of(lines):
    out = []
    for line in lines:
        parts = line.strip().split(None, 1)
        if len(parts) < 2:
            continue
        sym = parts[1]
        sym = re.sub(r"\s+\([^()]*\)$", "", sym)  # the dso
        sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
        sym = sym.replace(" (inlined)", "")
        # keep the name before the argument list: "ns::f(int)" -> "ns::f"
        depth, cut = 0, len(sym)
        for i, c in enumerate(sym):
            if c == "<":
                depth += 1
            elif c == ">":
                depth -= 1
            elif c == "(" and depth == 0 and i > 0 and not sym.startswith("(anonymous", i):
                cut = i
                break
        out.append(sym[:cut])
    return out


def samples(stream):
    block = []
    for line in stream:
        if line.strip() == "":
            if block:
                yield frames_of(block[1:])  # the first line is the sample header
            block = []
        else:
            block.append(line)
    if block:
        yield frames_of(block[1:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--unmatched", type=int, default=0)
    a = ap.parse_args()
    counts = collections.Counter()
    leaves = collections.Counter()
    total = 0
    for frames in samples(sys.stdin):
        total += 1
        for name, pats in COMPILED:
            if all(any(p.search(f) for f in frames) for p in pats):
                counts[name] += 1
                break
        else:
            counts["(other)"] += 1
            leaves[" <- ".join(frames[:3]) or "?"] += 1
    if not total:
        sys.exit("no samples")
    print("%6s  %s" % ("share", "category (%d samples)" % total))
    for name, n in counts.most_common(a.top):
        print("%5.1f%%  %s" % (100.0 * n / total, name))
    if a.unmatched:
        print("\nunclaimed, by leaf frames:")
        for name, n in leaves.most_common(a.unmatched):
            print("%5.1f%%  %s" % (100.0 * n / total, name[:160]))


if __name__ == "__main__":
    main()
