#!/usr/bin/env python3
"""Format 3's index files read and forged with stock git (SPEC §2), for tests.

  index_lines.py file  REPO FAMILY KEY       the path of the file that holds KEY
                                             (or would: the file its digits lead to)
  index_lines.py line  REPO FAMILY KEY       the line whose key is KEY
  index_lines.py keys  REPO FAMILY [PREFIX]  every key of the family, in order
  index_lines.py set   REPO FAMILY KEY LINE  writes (git hash-object -w) that
                                             file with KEY's line replaced by
                                             LINE, inserted in key order, or
                                             removed when LINE is "-"; prints
                                             the `git update-index --index-info`
                                             line that puts it in place (a
                                             removed last line removes the file)
  index_lines.py raw   REPO PATH TEXT        writes TEXT (with \\n escapes) as a
                                             blob; prints its --index-info line

REPO is a git directory; the tree read is main's (or $INDEX_REF). LINE is
taken as given, so a test can write what no kistore writes: a line out of
order, a key twice, a member too many. Nothing here checks the trie's shape:
that is what the tests make kistore do.
"""
import json
import os
import subprocess
import sys

REF = os.environ.get("INDEX_REF", "main")


def git(repo, *args, data=None):
    return subprocess.run(["git", "--git-dir", repo, *args], input=data, capture_output=True, check=True).stdout


def files(repo, family):
    out = git(repo, "ls-tree", "-r", "--name-only", "-z", REF, "--", f"refs/{family}/")
    return [p.decode() for p in out.split(b"\0") if p]


def digits(path, family):
    return "".join(path[len(f"refs/{family}/"):].split("/"))


def file_for(repo, family, key):
    paths = files(repo, family)
    for p in paths:
        if key.startswith(digits(p, family)):
            return p
    # No file holds it: the file a first line of that digit would make, when
    # the family's folder has no entry for the digit.
    if any(digits(p, family).startswith(key[0]) for p in paths):
        sys.exit(f"index_lines.py: no file of refs/{family}/ leads to {key}")
    return f"refs/{family}/{key[0]}"


def lines_of(repo, path):
    try:
        text = git(repo, "cat-file", "blob", f"{REF}:{path}").decode()
    except subprocess.CalledProcessError:
        return []
    return text.splitlines(keepends=True)


def key_of(line):
    return json.loads(line)["@key"]


def main(argv):
    cmd = argv[1]
    if cmd == "raw":
        repo, path, text = argv[2:5]
        blob = git(repo, "hash-object", "-w", "--stdin", data=text.encode().decode("unicode_escape").encode("latin-1"))
        print(f"100644 {blob.decode().strip()}\t{path}")
        return
    repo, family = argv[2], argv[3]
    if cmd == "keys":
        prefix = argv[4] if len(argv) > 4 else ""
        for p in files(repo, family):
            for line in lines_of(repo, p):
                if key_of(line).startswith(prefix):
                    print(key_of(line))
        return
    key = argv[4]
    path = file_for(repo, family, key)
    if cmd == "file":
        print(path)
        return
    lines = lines_of(repo, path)
    if cmd == "line":
        for line in lines:
            if key_of(line) == key:
                sys.stdout.write(line)
                return
        sys.exit(f"index_lines.py: no line @{key} in {path}")
    if cmd == "set":
        new = argv[5]
        kept = [l for l in lines if key_of(l) != key]
        if new != "-":
            kept.append(new if new.endswith("\n") else new + "\n")
            kept.sort(key=key_of)
        if not kept:
            print(f"0 {'0' * 40}\t{path}")
            return
        blob = git(repo, "hash-object", "-w", "--stdin", data="".join(kept).encode())
        print(f"100644 {blob.decode().strip()}\t{path}")
        return
    sys.exit(f"index_lines.py: unknown command {cmd}")


if __name__ == "__main__":
    main(sys.argv)
