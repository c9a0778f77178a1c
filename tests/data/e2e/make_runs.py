#!/usr/bin/env python3
"""Make valid variations of the seed bundle for kistore's end-to-end tests.

Variation i changes only the run: its p20 measurement and its primary
(timing.latencyNs.median) value, each base + i (so variation i ranks i+1 among
the seed and variations 1..N of its group), its observedAt minute and second,
and its sourceNative.externalId (suffix "-v<i>", with no "/", so that it never
extends another id as a path).  The protocol and environment
are untouched, so the run's recorded digests still match and every variation is
a valid bundle with a distinct run digest.

  make_runs.py FIXTURE --start S --count N --format jsonl    > runs.jsonl
  make_runs.py FIXTURE --count N --format array              > runs.json
  make_runs.py FIXTURE --count N --format jsonl --per-file K --out DIR
      (DIR/part000.jsonl, part001.jsonl, ... with K lines each)

--run-only writes the run document alone (no protocol/environment), and
--no-metadata drops every metadata member: both keep lines small (a JSON Lines
file is one input, and kistore refuses inputs over 16 MiB).
--bad-line L (1-based, jsonl) makes line L invalid: its spec.status is a number.
--tag T puts T into the externalId, to keep separate batches distinct.
--digests prints, instead of the documents, the digest of each variation's run,
computed here (sorted keys, no whitespace: RFC 8785 for these documents, whose
numbers are integers or plain decimals), independently of kistore.
"""
import argparse
import hashlib
import json
import os
import sys


def run_digest(run):
    """sha256 of JCS(run without metadata): valid for the seed's kind of content."""
    doc = {k: v for k, v in run.items() if k != "metadata"}

    def check(v):
        if isinstance(v, float) and ("e" in repr(v) or "inf" in repr(v) or v != v):
            raise SystemExit("make_runs.py: number %r needs real JCS" % v)
        if isinstance(v, dict):
            for x in v.values():
                check(x)
        if isinstance(v, list):
            for x in v:
                check(x)

    check(doc)
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fixture")
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--format", choices=["jsonl", "array"], default="jsonl")
    ap.add_argument("--per-file", type=int, default=0)
    ap.add_argument("--out")
    ap.add_argument("--run-only", action="store_true")
    ap.add_argument("--no-metadata", action="store_true")
    ap.add_argument("--bad-line", type=int, default=0)
    ap.add_argument("--tag", default="")
    ap.add_argument("--digests", action="store_true")
    a = ap.parse_args()

    with open(a.fixture, encoding="utf-8") as f:
        bundle = json.load(f)
    if a.no_metadata:
        for doc in bundle.values():
            doc.pop("metadata", None)
    doc = bundle["run"] if a.run_only else bundle
    spec = bundle["run"]["spec"]
    base_id = spec["sourceNative"]["externalId"]
    base_value = spec["measurements"][0]["value"]
    base_median = spec["timing"]["latencyNs"]["median"]

    def variation(i, line_no):
        spec["measurements"][0]["value"] = base_value + i
        spec["timing"]["latencyNs"]["median"] = base_median + i
        spec["observedAt"] = "2025-11-11T06:%02d:%02d.000Z" % (i // 60 % 60, i % 60)
        spec["sourceNative"]["externalId"] = "%s-%sv%d" % (base_id, a.tag, i)
        spec["status"] = 7 if a.bad_line and line_no == a.bad_line else "passed"
        if a.digests:
            return run_digest(bundle["run"])
        return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)

    indices = range(a.start, a.start + a.count)
    if a.digests:
        for n, i in enumerate(indices):
            print(variation(i, 0))
        return
    if a.format == "array":
        sys.stdout.write("[\n" + ",\n".join(variation(i, 0) for i in indices) + "\n]\n")
        return
    if a.per_file:
        os.makedirs(a.out, exist_ok=True)
        out = None
        for n, i in enumerate(indices):
            if n % a.per_file == 0:
                if out:
                    out.close()
                out = open(os.path.join(a.out, "part%03d.jsonl" % (n // a.per_file)), "w", encoding="utf-8")
            out.write(variation(i, n % a.per_file + 1) + "\n")
        if out:
            out.close()
        return
    w = sys.stdout.write
    for n, i in enumerate(indices):
        w(variation(i, n + 1) + "\n")


if __name__ == "__main__":
    main()
