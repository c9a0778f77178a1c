#!/usr/bin/env python3
"""Writes the seed corpora of fuzz_pack_indexer and fuzz_pack_delta into
tests/fuzz/corpus/pack_indexer/ and tests/fuzz/corpus/pack_delta/.

Each seed is one byte that picks how the fuzz target feeds the pack (bit 0:
no cache of delta bases; bit 1: fix the trailer up; bits 2-7: the size of
the pieces, 0 for all at once; see fuzz_pack_indexer.cc) followed by a pack: two that stock git makes (OFS_DELTA and REF_DELTA
chains) and a few made here byte by byte. A pack_delta seed is one byte (the
base's length over 4), the base, then a delta. Run it from anywhere; it needs
git.
"""
import hashlib
import os
import subprocess
import tempfile
import zlib

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def head(kind, size):
    c = (kind << 4) | (size & 15)
    size >>= 4
    out = bytearray()
    while size:
        out.append(c | 0x80)
        c = size & 0x7F
        size >>= 7
    out.append(c)
    return bytes(out)


def whole(kind, data):
    return head(kind, len(data)) + zlib.compress(data)


def varint(n):
    out = bytearray()
    while True:
        c = n & 0x7F
        n >>= 7
        out.append(c | 0x80 if n else c)
        if not n:
            return bytes(out)


def distance(d):
    out = bytearray([d & 0x7F])
    d >>= 7
    while d:
        d -= 1
        out.insert(0, 0x80 | (d & 0x7F))
        d >>= 7
    return bytes(out)


def pack(count, entries, version=2):
    body = b"PACK" + version.to_bytes(4, "big") + count.to_bytes(4, "big") + entries
    return body + hashlib.sha1(body).digest()


def raw_id(kind, data):
    return hashlib.sha1(kind + b" " + str(len(data)).encode() + b"\0" + data).digest()


def git_packs():
    env = dict(os.environ, HOME="/nonexistent", GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="T",
               GIT_AUTHOR_EMAIL="t@example.org", GIT_COMMITTER_NAME="T", GIT_COMMITTER_EMAIL="t@example.org",
               GIT_AUTHOR_DATE="1700000000 +0000", GIT_COMMITTER_DATE="1700000000 +0000")
    with tempfile.TemporaryDirectory() as d:
        run = lambda *a, **k: subprocess.run(a, cwd=d, env=env, check=True, capture_output=True, **k).stdout
        run("git", "init", "-q", ".")
        for i in range(1, 5):
            lines = [f"{n}{' changed' if n <= i * 20 else ''}" for n in range(1, 120)]
            with open(os.path.join(d, "a.txt"), "w") as f:
                f.write("\n".join(lines) + "\n")
            os.makedirs(os.path.join(d, "dir"), exist_ok=True)
            with open(os.path.join(d, "dir", "b.json"), "w") as f:
                f.write('{"i": %d}\n' % i)
            run("git", "add", "-A")
            run("git", "commit", "-q", "-m", f"c{i}")
        objects = run("git", "rev-list", "--objects", "--all")
        ofs = run("git", "pack-objects", "-q", "--stdout", "--delta-base-offset", "--window=10", "--depth=5", input=objects)
        ref = run("git", "pack-objects", "-q", "--stdout", "--window=10", "--depth=5", input=objects)
        return ofs, ref


def main():
    out = os.path.join(CORPUS, "pack_indexer")
    os.makedirs(out, exist_ok=True)
    hello, target = b"hello, world\n", b"hello, brave new world\n"
    delta = varint(len(hello)) + varint(len(target)) + b"\x90\x07" + bytes([10]) + b"brave new " + b"\x91\x07\x06"
    blob = whole(3, hello)
    tree = b"100644 hello.txt\0" + raw_id(b"blob", hello)
    commit = b"tree " + raw_id(b"tree", tree).hex().encode() + b"\nauthor T <t@example.org> 1700000000 +0000\n" \
             b"committer T <t@example.org> 1700000000 +0000\n\nm\n"
    ofs, ref = git_packs()
    seeds = {
        "git-ofs-delta": b"\x02" + ofs,
        "git-ofs-delta-as-is": b"\x00" + ofs,
        "git-ref-delta-pieces": b"\x1f" + ref,
        "whole-objects": b"\x02" + pack(3, whole(1, commit) + whole(2, tree) + blob),
        "ofs-delta": b"\x06" + pack(2, blob + head(6, len(delta)) + distance(len(blob)) + zlib.compress(delta)),
        "ref-delta-forward": b"\x03" + pack(2, head(7, len(delta)) + raw_id(b"blob", hello) + zlib.compress(delta) + blob),
        "empty-pack": b"\x02" + pack(0, b""),
        "version-3": b"\x02" + pack(1, blob, 3),
        "tag": b"\x02" + pack(1, whole(4, b"object " + raw_id(b"blob", hello).hex().encode() + b"\ntype blob\n")),
        "truncated": b"\x0e" + pack(1, whole(3, bytes(range(256)) * 4))[:300],
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)

    out = os.path.join(CORPUS, "pack_delta")
    os.makedirs(out, exist_ok=True)
    base = b"hello, world"  # 12 bytes: a first byte of 3
    deltas = {
        "copy-insert-copy": varint(12) + varint(22) + b"\x90\x07" + bytes([10]) + b"brave new " + b"\x91\x07\x05",
        "insert-only": varint(12) + varint(5) + bytes([5]) + b"abcde",
        "copy-all-offset-bytes": varint(12) + varint(4) + b"\x9f\x08\x00\x00\x00\x04",
        "copy-past-base": varint(12) + varint(100) + b"\x90\x64",
        "reserved-zero": varint(12) + varint(1) + b"\x00",
    }
    for name, delta in deltas.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(b"\x03" + base + delta)


if __name__ == "__main__":
    main()
