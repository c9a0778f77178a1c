#!/usr/bin/env python3
"""The git side of the kistore benchmarks: the same documents, for plain git.

    bench/git_stream.py fast-import INPUT... > stream     # JCS documents, as kistore names them
    bench/git_stream.py pretty INPUT... > stream          # the pretty JSON documents, same paths
    bench/git_stream.py from-store STORE STREAM PRETTY     # both streams, from a kistore store

INPUT: JSON Lines files of bundles (bench/gen.py output) or folders of them (*.jsonl).

fast-import: one blob per distinct document at the path kistore gives it,
objects/sha256/<2 hex>/<2 hex>/<60 hex>, holding the JCS bytes of the document without metadata
(the bytes kistore compresses with zstd), then one commit of branch refs/heads/main holding them
all. Feed it to `git fast-import` in a fresh bare repository.

pretty: the same paths, each file the whole document (metadata included) as json.dump(indent=2)
writes it: what a plain git repository of JSON files would keep (imported rather than checked in
with `git add`, to spare the disk a hundred thousand files; the repository is the same).

from-store: the same two, for the documents of an existing kistore store (the real corpus,
whose bundles only `kistore import` makes): objects decompressed with the zstd command, metadata
from refs/metadata/.
"""

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen import canonical, digest  # noqa: E402


def inputs(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, _, files in sorted(os.walk(p)):
                for f in sorted(files):
                    if f.endswith(".jsonl"):
                        yield os.path.join(root, f)
        else:
            yield p


def documents(paths):
    """Distinct documents, in input order: (hex, document)."""
    seen = set()
    for path in inputs(paths):
        with open(path, encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    continue
                bundle = json.loads(line)
                for doc in bundle.values():
                    hexd = digest(doc)[len("sha256:"):]
                    if hexd in seen:
                        continue
                    seen.add(hexd)
                    yield hexd, doc


def object_path(hexd):
    return "objects/sha256/%s/%s/%s" % (hexd[:2], hexd[2:4], hexd[4:])


def pretty_bytes(doc):
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def fast_import(paths, out=None, docs=None, render=canonical):
    out = out or sys.stdout.buffer
    marks = []
    for n, (hexd, doc) in enumerate(docs if docs is not None else documents(paths), 1):
        data = render(doc)
        out.write(b"blob\nmark :%d\ndata %d\n" % (n, len(data)))
        out.write(data)
        out.write(b"\n")
        marks.append((n, object_path(hexd)))
    msg = b"bench: %d documents\n" % len(marks)
    out.write(b"commit refs/heads/main\n")
    out.write(b"committer Bench <bench@example.org> 1735689600 +0000\n")
    out.write(b"data %d\n%s\n" % (len(msg), msg))
    for n, path in marks:
        out.write(b"M 100644 :%d %s\n" % (n, path.encode()))
    out.write(b"\ndone\n")


def store_documents(store):
    """(hex, document with its metadata) for every object of a kistore store."""
    tree = subprocess.run(["git", "-C", store, "ls-tree", "-r", "main", "objects/", "refs/metadata/", "dictionaries/"],
                          check=True, capture_output=True, text=True).stdout
    entries = []  # (path, blob id)
    for line in tree.splitlines():
        info, path = line.split("\t", 1)
        entries.append((path, info.split()[2]))
    batch = subprocess.run(["git", "-C", store, "cat-file", "--batch"], check=True, capture_output=True,
                           input="".join(b + "\n" for _, b in entries).encode()).stdout
    blobs, pos = [], 0
    for _ in entries:
        header_end = batch.index(b"\n", pos)
        size = int(batch[pos:header_end].split()[2])
        blobs.append(batch[header_end + 1:header_end + 1 + size])
        pos = header_end + 1 + size + 1
    metadata, frames, dictionaries = {}, {}, {}
    for (path, _), data in zip(entries, blobs):
        if path.startswith("refs/metadata/"):
            text = data.decode()
            if text.startswith('{"@key":'):  # format 3: a file of JSON Lines, one document's metadata a line
                for line in text.splitlines():
                    fact = json.loads(line)
                    metadata[fact["@key"]] = fact["metadata"]
            else:  # format 2: refs/metadata/<2>/<2>/<60>, one document's metadata
                metadata["".join(path[len("refs/metadata/"):].split("/"))] = json.loads(data)
        elif path.startswith("dictionaries/"):
            dictionaries[int(path[len("dictionaries/"):])] = data
        else:
            frames["".join(path.split("/")[2:])] = data
    with tempfile.TemporaryDirectory() as tmp:
        names = sorted(frames)
        for h in names:
            with open(os.path.join(tmp, h + ".zst"), "wb") as f:
                f.write(frames[h])
        # Frames that name a zstd dictionary decode with the store's dictionaries/<id>.
        by_dict = {}
        for h in names:
            by_dict.setdefault(frame_dictionary_id(frames[h]), []).append(h)
        for dict_id, group in by_dict.items():
            flags = []
            if dict_id:
                with open(os.path.join(tmp, "dict-%d" % dict_id), "wb") as f:
                    f.write(dictionaries[dict_id])
                flags = ["-D", "dict-%d" % dict_id]
            for i in range(0, len(group), 1000):
                subprocess.run(["zstd", "-d", "-q", "--rm"] + flags + [h + ".zst" for h in group[i:i + 1000]],
                               cwd=tmp, check=True)
        for h in names:
            with open(os.path.join(tmp, h), "rb") as f:
                doc = json.loads(f.read())
            if digest(doc)[len("sha256:"):] != h:
                sys.exit("%s: the JCS here does not reproduce the object's digest" % h)
            if h in metadata:
                doc["metadata"] = metadata[h]
            yield h, doc


def frame_dictionary_id(frame):
    """The Dictionary_ID a zstd frame header names (RFC 8878 3.1.1), 0 for none."""
    fhd = frame[4]
    size = (0, 1, 2, 4)[fhd & 3]
    at = 5 + (0 if fhd & 0x20 else 1)  # a window descriptor unless Single_Segment_flag
    return int.from_bytes(frame[at:at + size], "little") if size else 0


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "fast-import":
        fast_import(sys.argv[2:])
    elif len(sys.argv) == 5 and sys.argv[1] == "from-store":
        docs = list(store_documents(sys.argv[2]))
        with open(sys.argv[3], "wb") as f:
            fast_import(None, f, docs)
        with open(sys.argv[4], "wb") as f:
            fast_import(None, f, docs, pretty_bytes)
    elif len(sys.argv) >= 3 and sys.argv[1] == "pretty":
        fast_import(sys.argv[2:], render=pretty_bytes)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
