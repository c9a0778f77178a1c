#!/usr/bin/env python3
"""Deterministic generator of synthetic KernelIndex bundles for kistore benchmarks.

    bench/gen.py N [--seed S] [--out FILE|DIR] [--shard-bytes B] [--digests K]

Writes N bundles as JSON Lines, one bundle per line: {run, protocol, environment, workload,
implementation}, each a full KernelIndex document (apiVersion, kind, spec, metadata), shaped like
what `kistore import liger` derives from Liger-Kernel's published tables:

- 6 protocols (forward / backward / full pass x speed / peak memory),
- 6 environments (GPUs),
- about N/8 workloads (kernel x shape), each measured on one GPU under one protocol, so that it
  forms one comparison group of 4..12 runs (mean 8),
- 10 implementations (8 providers, two Liger releases for the Liger ones),
- every run unique (its own timestamp and upstream id).

The run's spec.*Digest members are the real digests of the documents the bundle carries:
digest = "sha256:" + sha256(JCS(document without "metadata")), with JCS (RFC 8785) implemented
below for the subset generated here (ASCII member names, strings, integers, finite floats).

--out FILE writes one file. --out DIR/ (a trailing slash or an existing folder) writes
DIR/part-0000.jsonl, ... each at most --shard-bytes (default 15 MiB), because kistore reads
at most 16 MiB per input file; `kistore add DIR` reads the whole folder in one commit.
Without --out, stdout.

--extra FILE also writes bundle N+1 to FILE (the first N are the same either way).

--digests K prints the digests of the first K runs to stderr as "<digest> <role> <line>",
for checking against `kistore digest`.

Also importable: canonical(doc), digest(doc), bundles(n, seed) (a generator).
"""

import argparse
import decimal
import hashlib
import json
import os
import random
import struct
import sys

API = "kernelindex.dev/v1alpha1"
SOURCE = "liger-kernel-bench"

# ----------------------------------------------------------------------------- JCS (RFC 8785)


def es_number(x):
    """ECMAScript Number::toString of a finite double (what RFC 8785 prescribes)."""
    if isinstance(x, bool):
        raise TypeError("booleans are not numbers")
    if isinstance(x, int):
        if abs(x) > 2**53:
            raise ValueError("integer beyond 2^53 cannot round-trip through a double: %d" % x)
        return str(x)
    if x != x or x in (float("inf"), float("-inf")):
        raise ValueError("JCS cannot represent %r" % x)
    if x == 0:
        return "0"  # -0 too
    sign = "-" if x < 0 else ""
    # repr() is the shortest round-tripping form, as ECMAScript's; only the layout differs.
    t = decimal.Decimal(repr(abs(x))).normalize().as_tuple()
    digits = "".join(map(str, t.digits))
    k = len(digits)
    n = t.exponent + k  # value = 0.digits * 10^n
    if k <= n <= 21:
        s = digits + "0" * (n - k)
    elif 0 < n <= 21:
        s = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        s = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mant = digits if k == 1 else digits[0] + "." + digits[1:]
        s = mant + "e" + ("+" if e >= 0 else "-") + str(abs(e))
    return sign + s


def _jcs(v, out):
    if v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif isinstance(v, (int, float)):
        out.append(es_number(v))
    elif isinstance(v, str):
        out.append(json.dumps(v, ensure_ascii=False))
    elif isinstance(v, list):
        out.append("[")
        for i, item in enumerate(v):
            if i:
                out.append(",")
            _jcs(item, out)
        out.append("]")
    elif isinstance(v, dict):
        # RFC 8785 sorts by UTF-16 code units; for the BMP-only names generated here that is the
        # code point order Python's sort uses.
        out.append("{")
        for i, key in enumerate(sorted(v)):
            if i:
                out.append(",")
            out.append(json.dumps(key, ensure_ascii=False))
            out.append(":")
            _jcs(v[key], out)
        out.append("}")
    else:
        raise TypeError("not JSON: %r" % (v,))


def canonical(doc):
    """JCS bytes of `doc` without its top-level metadata."""
    out = []
    _jcs({k: v for k, v in doc.items() if k != "metadata"}, out)
    return "".join(out).encode("utf-8")


def digest(doc):
    return "sha256:" + hashlib.sha256(canonical(doc)).hexdigest()


# ----------------------------------------------------------------------------- tables

PASSES = [
    ("forward", "the forward pass of the module", "forward"),
    ("backward", "the backward pass of the module output given a random upstream gradient", "backward"),
    ("full", "the forward pass followed by the backward pass of its output given a random upstream gradient",
     "full (forward + backward)"),
]

GPUS = [
    ("NVIDIA A100-SXM4-80GB", "nvidia", "sm_80"),
    ("NVIDIA GeForce RTX 4090", "nvidia", "sm_89"),
    ("NVIDIA H100 80GB HBM3", "nvidia", "sm_90"),
    ("NVIDIA L40S", "nvidia", "sm_89"),
    ("NVIDIA B200", "nvidia", "sm_100"),
    ("AMD Instinct MI300X", "amd", "gfx942"),
]

KERNELS = [
    ("cross_entropy", "Cross-entropy loss", ["BT", "V"]),
    ("fused_linear_cross_entropy", "Fused linear + cross-entropy loss", ["BT", "H", "V"]),
    ("geglu", "GeGLU MLP", ["bsz", "hidden_size", "intermediate_size", "T"]),
    ("swiglu", "SwiGLU MLP", ["bsz", "hidden_size", "intermediate_size", "T"]),
    ("tiled_geglu", "GeGLU MLP (tiled benchmark)", ["bsz", "hidden_size", "intermediate_size", "T"]),
    ("rms_norm", "RMSNorm", ["M", "H"]),
    ("layer_norm", "LayerNorm", ["M", "N"]),
    ("rope", "Rotary position embedding (RoPE)", ["num_q_heads", "num_kv_heads", "head_dim", "T"]),
    ("kl_div", "KL divergence loss", ["B", "T", "V"]),
    ("jsd", "Jensen-Shannon divergence", ["B", "T", "V"]),
    ("fused_linear_jsd", "Fused linear + Jensen-Shannon divergence", ["BT", "H", "V"]),
    ("group_norm", "GroupNorm", ["B", "C", "num_groups", "H"]),
    ("embedding", "Embedding lookup", ["B", "T", "V", "D"]),
    ("dyt", "Dynamic Tanh (DyT) normalization", ["BT", "H"]),
    ("softmax", "Softmax", ["M", "N"]),
    ("sparsemax", "Sparsemax", ["M", "N"]),
]

SLUG = {"B": "batch", "BT": "tokens", "H": "hidden", "T": "seq", "V": "vocab", "bsz": "batch",
        "hidden_size": "hidden", "intermediate_size": "intermediate", "num_q_heads": "qheads",
        "num_kv_heads": "kvheads", "head_dim": "head-dim", "num_groups": "groups"}

SIZES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072]

DTYPES = [("torch.bfloat16", "bf16"), ("torch.float16", "fp16"), ("torch.float32", "fp32")]

PROVIDERS = [  # (provider, project, Liger releases)
    ("liger", "Liger-Kernel", ["0.6.2", "0.6.3"]),
    ("liger_tiled", "Liger-Kernel", ["0.6.2", "0.6.3"]),
    ("huggingface", "transformers", [None]),
    ("torch", "PyTorch", [None]),
    ("torch_compile", "PyTorch", [None]),
    ("deepspeed_tiled", "DeepSpeed", [None]),
    ("megatron", "Megatron-LM", [None]),
    ("cutile", None, [None]),
]

COMMON_NOTES = ("The upstream CSV records no CUDA, driver, or torch version; the Liger release rides "
                "each run's labels.")


def slugify(s):
    out, dash = [], False
    for c in s.lower():
        if c.isascii() and c.isalnum():
            if dash and out:
                out.append("-")
            dash = False
            out.append(c)
        else:
            dash = True
    return "".join(out)


def doc(kind, spec, metadata):
    return {"kind": kind, "spec": spec, "metadata": metadata, "apiVersion": API}


def protocols():
    out = []
    for memory in (False, True):
        for mode, timed, title in PASSES:
            harness = {"name": "Liger-Kernel benchmark scripts",
                       "repository": "https://github.com/linkedin/Liger-Kernel"}
            if not memory:
                notes = ("Timed: " + timed + ", via triton.testing.do_bench with quantiles 0.5/0.2/0.8 "
                         "(median with p20/p80 spread). " + COMMON_NOTES +
                         " Comparable only within one kernel, workload, timed pass, and GPU.")
                spec = {"harness": harness,
                        "measurement": {"timer": "cuda_events", "primaryStatistic": "median"},
                        "comparability": {"notes": notes, "family": "liger_kernel_bench"}}
                meta = {"name": "liger-bench-do-bench-" + mode,
                        "title": "Liger benchmark harness \u00b7 " + title + " pass"}
            else:
                notes = ("Measured: peak GPU memory allocated through PyTorch while running " + timed +
                         ", over 10 repetitions with quantiles 0.5/0.2/0.8 (median with p20/p80 spread), "
                         "in MiB. " + COMMON_NOTES +
                         " Comparable only within one kernel, workload, measured pass, and GPU.")
                spec = {"harness": harness,
                        "measurement": {"meter": "cuda_max_memory_allocated", "unit": "MiB",
                                        "primaryStatistic": "median"},
                        "comparability": {"notes": notes, "family": "liger_kernel_bench"}}
                meta = {"name": "liger-bench-peak-memory-" + mode,
                        "title": "Liger benchmark harness \u00b7 " + title + " pass \u00b7 peak memory"}
            out.append((mode, memory, doc("BenchmarkProtocol", spec, meta)))
    return out


def environments():
    out = []
    for name, vendor, arch in GPUS:
        short = name.split(" ", 1)[1]
        spec = {"hardware": {"vendor": vendor, "product": name, "architecture": arch}, "software": {}}
        meta = {"name": "liger-bench-" + slugify(name), "title": "Liger benchmark host \u00b7 " + short}
        out.append((slugify(name), doc("ExecutionEnvironment", spec, meta)))
    return out


def implementations():
    out = []
    for provider, project, releases in PROVIDERS:
        for release in releases:
            spec = {"name": provider}
            name, title = "liger-impl-" + slugify(provider), provider
            if project:
                spec["project"] = project
                title += " \u00b7 " + project
            if release:
                spec["revision"] = release
                name += "-" + slugify(release)
                title += " " + release
            out.append((provider, release, doc("Implementation", spec, {"name": name, "title": title})))
    return out


def f32(x):
    """x rounded to a float32, as a double: the long-mantissa values of the real tables."""
    return struct.unpack("f", struct.pack("f", x))[0]


def jcs_safe(x):
    """A float whose JCS form is not an integer (keeps floats floats in both languages)."""
    while x == int(x):
        x = f32(x * 1.0000001 + 1e-3)
    return x


# ----------------------------------------------------------------------------- bundles


def bundles(n, seed=1):
    shared = {}  # id(document) -> digest, for the shared documents (alive throughout)

    rng = random.Random(seed)
    protos = protocols()
    envs = environments()
    impls = implementations()
    for d in [p[-1] for p in protos] + [e[-1] for e in envs] + [m[-1] for m in impls]:
        shared[id(d)] = digest(d)
    seen_workloads = set()
    t0 = 1735689600  # 2025-01-01T00:00:00Z
    i = 0  # runs emitted
    w = 0  # workloads made
    while i < n:
        # One workload, measured on one GPU under one protocol: one comparison group.
        while True:
            kname, definition, dims = KERNELS[rng.randrange(len(KERNELS))]
            params = {d: SIZES[rng.randrange(4, 16)] for d in dims}
            dtype, dslug = DTYPES[rng.randrange(len(DTYPES))]
            params["dtype"] = dtype
            if rng.random() < 0.3:
                params["eps"] = 1e-06
            key = (kname, tuple(sorted(params.items())))
            if key not in seen_workloads:
                seen_workloads.add(key)
                break
        wslug = "-".join(sorted(SLUG.get(d, slugify(d)) + str(params[d]) for d in dims)) + "-" + dslug
        workload = doc("Workload", {"definition": definition, "parameters": params},
                       {"name": ("liger-" + slugify(kname) + "-" + wslug)[:100].rstrip("-"),
                        "title": definition + " \u00b7 " + wslug})
        workload_digest = digest(workload)
        mode, memory, protocol = protos[rng.randrange(len(protos))]
        gslug, environment = envs[rng.randrange(len(envs))]
        size = rng.randint(4, 12)
        base = rng.uniform(0.01, 50.0)  # ms, or MB for memory
        for _ in range(size):
            if i >= n:
                break
            provider, release, implementation = impls[rng.randrange(len(impls))]
            ts = t0 + i * 37 + rng.randrange(37)
            y50 = f32(base * rng.uniform(0.5, 2.0))
            y20 = f32(y50 * rng.uniform(0.97, 1.0))
            y80 = f32(y50 * rng.uniform(1.0, 1.03))
            y20, y50, y80 = jcs_safe(y20), jcs_safe(y50), jcs_safe(y80)
            stamp = _utc(ts)
            tslug = stamp[:10] + "-" + stamp[11:19].replace(":", "-")
            head = [kname, mode] + (["memory"] if memory else [])
            external = "/".join(head + [provider, gslug, wslug, tslug])
            spec = {"status": "passed"}
            if not memory:
                spec["timing"] = {"latencyNs": {"median": round(y50 * 1e6)}, "primaryStatistic": "median"}
                spec["observedAt"] = stamp + ".000Z"
                spec["measurements"] = [
                    {"unit": "ns", "value": round(y20 * 1e6), "metric": "latency", "statistic": "p20"},
                    {"unit": "ns", "value": round(y80 * 1e6), "metric": "latency", "statistic": "p80"}]
                metrics = {"ms_20": y20, "ms_50": y50, "ms_80": y80}
            else:
                spec["observedAt"] = stamp + ".000Z"
                spec["measurements"] = [
                    {"unit": "MB", "value": y50, "metric": "memory", "statistic": "median"},
                    {"unit": "MB", "value": y20, "metric": "memory", "statistic": "p20"},
                    {"unit": "MB", "value": y80, "metric": "memory", "statistic": "p80"}]
                metrics = {"mb_20": y20, "mb_50": y50, "mb_80": y80}
            spec["sourceNative"] = {"source": SOURCE, "metrics": metrics, "benchmark": "/".join(head),
                                    "externalId": external}
            spec["protocolDigest"] = shared[id(protocol)]
            spec["workloadDigest"] = workload_digest
            spec["environmentDigest"] = shared[id(environment)]
            spec["implementationDigest"] = shared[id(implementation)]
            meta = {"name": slugify("liger-" + "-".join(head + [provider, gslug, wslug, tslug]))[:100].rstrip("-"),
                    "title": definition + " \u00b7 " + provider + " \u00b7 " + mode +
                    (" \u00b7 peak memory" if memory else ""),
                    "labels": {"liger_version": release or "0.6.3"}}
            run = doc("BenchmarkRun", spec, meta)
            yield {"run": run, "protocol": protocol, "environment": environment, "workload": workload,
                   "implementation": implementation}
            i += 1
        w += 1


def _utc(ts):
    days, rem = divmod(ts, 86400)
    hh, rem = divmod(rem, 3600)
    mm, ss = divmod(rem, 60)
    # civil_from_days (H. Hinnant), to stay free of the local time zone.
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    if m <= 2:
        y += 1
    return "%04d-%02d-%02dT%02d:%02d:%02d" % (y, m, d, hh, mm, ss)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("n", type=int, help="number of bundles (runs)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", help="output file, or folder for shards (default: stdout)")
    ap.add_argument("--shard-bytes", type=int, default=15 << 20,
                    help="with --out DIR: at most this many bytes per shard (default 15 MiB)")
    ap.add_argument("--extra", metavar="FILE",
                    help="also write bundle N+1 (new to the N) to FILE, for single-add benchmarks")
    ap.add_argument("--digests", type=int, default=0, metavar="K",
                    help="print the digests of the first K bundles' documents to stderr")
    a = ap.parse_args()

    shard_dir = a.out and (a.out.endswith("/") or os.path.isdir(a.out))
    if shard_dir:
        os.makedirs(a.out, exist_ok=True)
    part, out, written = 0, None, 0

    def open_next():
        nonlocal part, out, written
        if out:
            out.close()
        out = open(os.path.join(a.out, "part-%04d.jsonl" % part), "w", encoding="utf-8", newline="\n")
        part += 1
        written = 0

    if shard_dir:
        open_next()
    elif a.out:
        out = open(a.out, "w", encoding="utf-8", newline="\n")
    else:
        out = sys.stdout
    for line_no, b in enumerate(bundles(a.n + (1 if a.extra else 0), a.seed), 1):
        line = json.dumps(b, ensure_ascii=False, separators=(",", ":")) + "\n"
        if line_no > a.n:
            with open(a.extra, "w", encoding="utf-8", newline="\n") as f:
                f.write(line)
            break
        size = len(line.encode("utf-8"))
        if shard_dir and written and written + size > a.shard_bytes:
            open_next()
        out.write(line)
        written += size
        if line_no <= a.digests:
            for role, d in b.items():
                print(digest(d), d["kind"], role, line_no, file=sys.stderr)
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
