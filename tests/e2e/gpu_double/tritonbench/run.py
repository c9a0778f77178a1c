"""Test double of tritonbench's run.py (see README.md): fixed values instead of a GPU's."""
import argparse
import json
import os
import sys
import time

import tritonbench  # noqa: F401  (from the checkout: the bench must put it first on sys.path)

here = os.path.dirname(os.path.abspath(__file__))
data = os.environ.get("GPU_DOUBLE_TB_DATA") or os.path.join(here, "..", "..", "..", "data", "tritonbench")
parser = argparse.ArgumentParser()
parser.add_argument("--op", required=True)
parser.add_argument("--mode", default="fwd", choices=["fwd", "bwd", "fwd_bwd", "fwd_no_grad"])
parser.add_argument("--metrics", required=True)
parser.add_argument("--output-json", required=True)
args = parser.parse_args()
assert args.metrics == "latency,accuracy", args.metrics
out = args.output_json
assert not out.startswith(here), "the output goes to kistore's scratch folder, not the checkout"
# What tritonbench writes into its working folder: it must be kistore's scratch folder.
with open("tritonbench.log", "w") as log:
    log.write("run %s\n" % args.op)

if args.op == "fails":
    print("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", file=sys.stderr)
    sys.exit(1)
if args.op == "hangs":
    time.sleep(100)
if args.op == "silent":
    sys.exit(0)
if args.op == "linked":
    os.symlink("/etc/hostname", out)
    sys.exit(0)
if args.op == "fifo":
    os.mkfifo(out)
    sys.exit(0)
if args.op == "huge":
    with open(out, "w") as f:
        f.write("{" + " " * (17 << 20) + "}")
    sys.exit(0)
if args.op == "garbled":
    with open(out, "w") as f:
        f.write('{"tritonbench_x_fwd[x_1-a]_latency": "0.1",')
    sys.exit(0)

with open(os.path.join(data, "tb-%s.json" % args.op)) as f:
    measured = json.load(f)
wrong = set(filter(None, os.environ.get("GPU_DOUBLE_WRONG", "").split(",")))
slower = float(os.environ.get("GPU_DOUBLE_SLOWER", "1"))
baseline = {"vector_add": "torch_add", "softmax": "naive_softmax"}[args.op]
result = {}
for key, value in measured.items():
    key = key.replace("_fwd[", "_%s[" % args.mode, 1)
    backend = key[key.index("-", key.index("[")) + 1:key.index("]")]
    if key.endswith("]_latency") and backend != baseline and isinstance(value, str):
        value = str(float(value) * slower)
        result[key] = value
        result[key[:-len("latency")] + "accuracy"] = 0.0 if backend in wrong else 1.0
        continue
    result[key] = value
with open(out, "w") as f:
    json.dump(result, f, indent=4)
if os.environ.get("GPU_DOUBLE_UPGRADE"):  # the driver changes while the benchmarks run (gpu_double/nvidia-smi)
    with open(os.environ["GPU_DOUBLE_UPGRADE"], "w") as f:
        f.write("driver upgraded\n")
print("(the table tritonbench prints)")
