#!/usr/bin/env python3
"""Hostile git objects and packs for kistore's attack tests, made by hand.

Stock git refuses to write most of these (an object under an id its bytes do
not hash to, a tree 100,000 levels deep it could not walk back, a pack entry
that lies about its size), so they are written here, byte by byte, in git's
formats (git's loose objects, and packs and indexes as gitformat-pack(5)
describes them).

  craft_objects.py loose GITDIR TYPE [--as ID] < BYTES
      write a loose object; with --as, under the id ID whatever BYTES hash
      to (a forgery). Prints the id it was written under.
  craft_objects.py deep GITDIR DEPTH
      write DEPTH trees, each holding the next as "d", the last one empty,
      as one pack and its index in GITDIR/objects/pack. Prints the
      outermost tree's id.
  craft_objects.py commit GITDIR TREE [--parent ID] [--message M]
      write a commit (fixed author and time). Prints its id.
  craft_objects.py tree-plus GITDIR TREE NAME MODE ID
      write TREE with one more entry NAME (MODE, ID), in git's order.
      Prints the new tree's id.
  craft_objects.py pack-deep OUT DEPTH [--parent ID]
      a pack of a commit whose tree is {"zz": a chain of DEPTH trees}.
      Prints the commit's id.
  craft_objects.py pack-huge OUT
      a pack whose first entry, a blob, declares 1 TiB (and holds 13 bytes).
      Prints an id to advertise for it.
  craft_objects.py pack-idx-huge GITDIR ID
      a pack and its index in GITDIR/objects/pack whose only entry is the
      blob ID, declaring 1 TiB.
  craft_objects.py pack-idx-as GITDIR TYPE ID < BYTES
      a pack and its index in GITDIR/objects/pack whose only entry holds
      BYTES as a TYPE, listed in the index under the id ID whatever BYTES
      hash to (an index that lies).
  craft_objects.py pack-idx-deflated GITDIR TYPE ID [--declare N] [--flip K]
                   [--filler MIB] < BYTES
      a pack and its index in GITDIR/objects/pack whose entry ID holds
      BYTES as a TYPE in deflate's fixed-Huffman blocks (never stored ones),
      declaring N bytes (default: their size), the stream's byte K (counted
      from its end) flipped; with --filler, MIB MiB of random bytes follow as
      a second entry, so that the pack is big enough for what N claims.
"""
import argparse
import hashlib
import os
import struct
import sys
import zlib

TYPES = {"commit": 1, "tree": 2, "blob": 3}
AUTHOR = b"forger <forger@example.invalid> 1700000000 +0000"


def object_id(kind, data):
    return hashlib.sha1(b"%s %d\0" % (kind.encode(), len(data)) + data).hexdigest()


def write_loose(gitdir, kind, data, as_id=None):
    oid = as_id or object_id(kind, data)
    folder = os.path.join(gitdir, "objects", oid[:2])
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, oid[2:])
    if os.path.exists(path):
        os.chmod(path, 0o644)
        os.unlink(path)
    with open(path, "wb") as f:
        f.write(zlib.compress(b"%s %d\0" % (kind.encode(), len(data)) + data))
    return oid


def tree_entry(mode, name, oid):
    return mode.encode() + b" " + name + b"\0" + bytes.fromhex(oid)


def read_tree(gitdir, oid):
    path = os.path.join(gitdir, "objects", oid[:2], oid[2:])
    if os.path.exists(path):
        raw = zlib.decompress(open(path, "rb").read())
        return raw[raw.index(b"\0") + 1:]
    import subprocess
    return subprocess.run(["git", "--git-dir=" + gitdir, "cat-file", "tree", oid],
                          check=True, capture_output=True).stdout


def parse_tree(data):
    entries = []
    while data:
        space = data.index(b" ")
        nul = data.index(b"\0", space)
        entries.append((data[:space].decode(), data[space + 1:nul], data[nul + 1:nul + 21].hex()))
        data = data[nul + 21:]
    return entries


def order_key(entry):
    mode, name, _ = entry
    return name + (b"/" if mode == "40000" else b"")


def commit_bytes(tree, parent=None, message=b"forged\n"):
    text = b"tree " + tree.encode() + b"\n"
    if parent:
        text += b"parent " + parent.encode() + b"\n"
    return text + b"author " + AUTHOR + b"\ncommitter " + AUTHOR + b"\n\n" + message


def deep_chain(depth):
    """The trees of a chain DEPTH deep, innermost first, and the outermost id."""
    objects = []
    inner = b""
    oid = object_id("tree", inner)
    objects.append(("tree", inner))
    for _ in range(depth - 1):
        data = tree_entry("40000", b"d", oid)
        oid = object_id("tree", data)
        objects.append(("tree", data))
    return objects, oid


def entry_header(kind_number, size):
    byte = (kind_number << 4) | (size & 15)
    size >>= 4
    out = bytearray()
    while size:
        out.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    out.append(byte)
    return bytes(out)


def pack_bytes(entries):
    """entries: (kind, declared size, raw zlib payload)."""
    body = bytearray(b"PACK" + struct.pack(">II", 2, len(entries)))
    offsets = []
    for kind, size, payload in entries:
        offsets.append(len(body))
        body += entry_header(TYPES[kind], size)
        body += payload
    return bytes(body + hashlib.sha1(body).digest()), offsets


def write_pack_and_index(gitdir, objects):
    """objects: (id the index gives it, pack entry). Index version 2."""
    data, offsets = pack_bytes([entry for _, entry in objects])
    base = os.path.join(gitdir, "objects", "pack", "pack-" + data[-20:].hex())
    ends = offsets[1:] + [len(data) - 20]
    rows = sorted((bytes.fromhex(oid), zlib.crc32(data[start:end]), start)
                  for (oid, _), start, end in zip(objects, offsets, ends))
    counts = [0] * 256
    for r in rows:
        counts[r[0][0]] += 1
    fanout = b"".join(struct.pack(">I", sum(counts[:i + 1])) for i in range(256))
    idx = b"\377tOc" + struct.pack(">I", 2) + fanout + b"".join(r[0] for r in rows)
    idx += b"".join(struct.pack(">I", r[1]) for r in rows) + b"".join(struct.pack(">I", r[2]) for r in rows)
    idx += data[-20:]
    idx += hashlib.sha1(idx).digest()
    open(base + ".pack", "wb").write(data)
    open(base + ".idx", "wb").write(idx)


def fixed_huffman(data):
    """zlib's stream of DATA in compressed blocks (zlib keeps a stored block
    only where it is smaller: DATA must compress)."""
    z = zlib.compressobj(9, zlib.DEFLATED, 15, 9, zlib.Z_FIXED)
    out = z.compress(data) + z.flush()
    if out[2] & 6 != 2:
        sys.exit("craft_objects.py: the bytes do not compress; zlib stored them")
    return out


def whole(kind, data):
    return (kind, len(data), zlib.compress(data))


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("loose"); p.add_argument("gitdir"); p.add_argument("type"); p.add_argument("--as", dest="as_id")
    p = sub.add_parser("deep"); p.add_argument("gitdir"); p.add_argument("depth", type=int)
    p = sub.add_parser("commit"); p.add_argument("gitdir"); p.add_argument("tree")
    p.add_argument("--parent"); p.add_argument("--message", default="forged")
    p = sub.add_parser("tree-plus"); p.add_argument("gitdir"); p.add_argument("tree")
    p.add_argument("name"); p.add_argument("mode"); p.add_argument("id")
    p = sub.add_parser("pack-deep"); p.add_argument("out"); p.add_argument("depth", type=int); p.add_argument("--parent")
    p = sub.add_parser("pack-huge"); p.add_argument("out")
    p = sub.add_parser("pack-idx-huge"); p.add_argument("gitdir"); p.add_argument("id")
    p = sub.add_parser("pack-idx-as"); p.add_argument("gitdir"); p.add_argument("type"); p.add_argument("id")
    p = sub.add_parser("pack-idx-deflated"); p.add_argument("gitdir"); p.add_argument("type"); p.add_argument("id")
    p.add_argument("--declare", type=int); p.add_argument("--flip", type=int); p.add_argument("--filler", type=int, default=0)
    a = parser.parse_args()

    if a.cmd == "loose":
        print(write_loose(a.gitdir, a.type, sys.stdin.buffer.read(), a.as_id))
    elif a.cmd == "deep":
        objects, top = deep_chain(a.depth)
        write_pack_and_index(a.gitdir, [(object_id(k, d), whole(k, d)) for k, d in objects])
        print(top)
    elif a.cmd == "commit":
        print(write_loose(a.gitdir, "commit", commit_bytes(a.tree, a.parent, a.message.encode() + b"\n")))
    elif a.cmd == "tree-plus":
        entries = parse_tree(read_tree(a.gitdir, a.tree)) + [(a.mode, a.name.encode(), a.id)]
        entries.sort(key=order_key)
        print(write_loose(a.gitdir, "tree", b"".join(tree_entry(*e) for e in entries)))
    elif a.cmd == "pack-deep":
        objects, top = deep_chain(a.depth)
        root = tree_entry("40000", b"zz", top)
        commit = commit_bytes(object_id("tree", root), a.parent)
        entries = [whole("commit", commit), whole("tree", root)] + [whole(k, d) for k, d in reversed(objects)]
        data, _ = pack_bytes(entries)
        open(a.out, "wb").write(data)
        print(object_id("commit", commit))
    elif a.cmd == "pack-huge":
        data, _ = pack_bytes([("blob", 1 << 40, zlib.compress(b"not 1 TiB\n"))])
        open(a.out, "wb").write(data)
        print(hashlib.sha1(b"an id no object has").hexdigest())
    elif a.cmd == "pack-idx-huge":
        write_pack_and_index(a.gitdir, [(a.id, ("blob", 1 << 40, zlib.compress(b"not 1 TiB\n")))])
    elif a.cmd == "pack-idx-as":
        write_pack_and_index(a.gitdir, [(a.id, whole(a.type, sys.stdin.buffer.read()))])
    elif a.cmd == "pack-idx-deflated":
        data = sys.stdin.buffer.read()
        stream = bytearray(fixed_huffman(data))
        if a.flip:
            stream[-a.flip] ^= 0x55
        objects = [(a.id, (a.type, len(data) if a.declare is None else a.declare, bytes(stream)))]
        if a.filler:
            filler = os.urandom(a.filler << 20)
            objects.append((object_id("blob", filler), ("blob", len(filler), zlib.compress(filler, 1))))
        write_pack_and_index(a.gitdir, objects)


if __name__ == "__main__":
    main()
