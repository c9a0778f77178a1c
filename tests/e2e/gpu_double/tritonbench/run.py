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
if args.op == "othermode":  # measured another mode than the one asked for
    with open(out, "w") as f:
        json.dump({"tritonbench_othermode_bwd[x_1-a]_latency": "0.1"}, f)
    sys.exit(0)
if args.op == "escapes":  # terminal control sequences in its stderr and in a backend's name
    with open(out, "w") as f:
        json.dump({"tritonbench_escapes_fwd[x_1-\x1b]0;owned\x07\x1b[2J]_latency": "0.1"}, f)
    print("\x1b]0;window title\x07\x1b[2Jcleared", file=sys.stderr)
    sys.exit(1 if os.environ.get("GPU_DOUBLE_FAIL_ESCAPES") else 0)
if args.op == "outlink":  # its output folder swapped for a link to a folder elsewhere
    folder = os.path.dirname(out)
    victim = os.environ["GPU_DOUBLE_VICTIM"]
    os.rename(folder, folder + ".moved")
    os.symlink(victim, folder)
    with open(out, "w") as f:
        json.dump({"tritonbench_outlink_fwd[x_1-a]_latency": "0.1"}, f)
    sys.exit(0)
if args.op == "stubborn":  # ignores SIGTERM, with a child of its own in a session of its own
    import signal
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = os.fork()
    if child == 0:
        os.setsid()
        time.sleep(100)
        os._exit(0)
    with open(os.environ["GPU_DOUBLE_PIDS"], "w") as f:
        f.write("%d\n" % child)
    time.sleep(100)
    sys.exit(0)
if args.op == "daemon":  # leaves a process outside its process group (setsid), to run on for 100 s
    child = os.fork()
    if child == 0:
        os.setsid()
        sleeper = os.fork()
        if sleeper == 0:
            time.sleep(100)
            os._exit(0)
        with open(os.environ["GPU_DOUBLE_PIDS"], "w") as f:
            f.write("%d\n" % sleeper)
        os._exit(0)
    os.waitpid(child, 0)
    if os.environ.get("GPU_DOUBLE_HANG"):  # and then waits, for kistore to be interrupted
        time.sleep(100)
    sys.exit(0)
if args.op == "garbled":
    with open(out, "w") as f:
        f.write('{"tritonbench_x_fwd[x_1-a]_latency": "0.1",')
    sys.exit(0)

twice = args.op == "twice"  # vector_add, with its first input again as x_4096.0, 5 times slower
with open(os.path.join(data, "tb-%s.json" % ("vector_add" if twice else args.op))) as f:
    measured = json.load(f)
if twice:
    for key in [k for k in measured if "[x_4096-" in k and k.endswith("_latency")]:
        measured[key.replace("[x_4096-", "[x_4096.0-")] = str(float(measured[key]) * 5)
    measured = {k.replace("vector_add", "twice"): v for k, v in measured.items()}
wrong = set(filter(None, os.environ.get("GPU_DOUBLE_WRONG", "").split(",")))
slower = float(os.environ.get("GPU_DOUBLE_SLOWER", "1"))
baseline = {"vector_add": "torch_add", "twice": "torch_add", "softmax": "naive_softmax"}[args.op]
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
