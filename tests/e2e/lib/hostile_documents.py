#!/usr/bin/env python3
"""Writes a bundle whose every string field that kistore shows is hostile.

usage: hostile_documents.py FIXTURE OUT.json ATTACK-OUT

From the seed fixture: the run's metadata title is an attack string followed
by a megabyte, its name, the protocol's metadata title (the timed pass that
rank and groups show), the environment's GPU, the workload's definition and
the implementation's name (that rank shows) carry the attack string: escape
sequences that clear the screen and set the window title, a newline followed
by a fake table line, C1 controls, DEL and bidirectional overrides. The run's
sourceNative benchmark (the group's benchmark label) is the attack string and
a megabyte too. Digests of the new documents are computed here (their specs
hold strings and integers only, so sorted compact JSON is their RFC 8785 form).
Writes the attack string's raw bytes to ATTACK-OUT, for the caller's assertions.
"""
import copy
import hashlib
import json
import sys

ATTACK = ("\x1b[2J\x1b[H\x1b]0;pwned\x07 evil\nlevel reproduced \u202eexe.txt\u2066x\u2069"
          "\u009b31m\u0085\x7f\r\ttab")
MEGABYTE = "M" * (1 << 20)


def digest(doc):
    body = {k: v for k, v in doc.items() if k != "metadata"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def main():
    fixture = json.load(open(sys.argv[1], encoding="utf-8"))
    api = fixture["run"]["apiVersion"]
    bundle = copy.deepcopy(fixture)
    bundle["protocol"]["metadata"] = {"title": ATTACK, "name": ATTACK}
    env = bundle["environment"]
    env["spec"]["hardware"]["product"] = ATTACK
    env.pop("metadata", None)
    bundle["workload"] = {"apiVersion": api, "kind": "Workload",
                          "metadata": {"title": ATTACK},
                          "spec": {"definition": ATTACK, "parameters": {"seq": 1024}}}
    bundle["implementation"] = {"apiVersion": api, "kind": "Implementation",
                                "metadata": {"title": ATTACK},
                                "spec": {"name": ATTACK, "project": ATTACK, "revision": ATTACK}}
    run = bundle["run"]
    run["metadata"] = {"title": ATTACK + MEGABYTE, "name": ATTACK}
    spec = run["spec"]
    spec["environmentDigest"] = digest(env)
    spec["workloadDigest"] = digest(bundle["workload"])
    spec["implementationDigest"] = digest(bundle["implementation"])
    spec["sourceNative"]["benchmark"] = ATTACK + MEGABYTE
    spec["sourceNative"]["externalId"] = "hostile/backward/hostile/gpu/shape/2025-11-11-06-22-57"
    json.dump(bundle, open(sys.argv[2], "w", encoding="utf-8"), ensure_ascii=False)
    open(sys.argv[3], "w", encoding="utf-8", newline="").write(ATTACK)


main()
