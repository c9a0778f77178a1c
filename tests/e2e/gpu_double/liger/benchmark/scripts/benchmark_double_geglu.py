"""Test double of benchmark_geglu.py: fixed values instead of a GPU's (see ../../README.md)."""
import argparse
import json
import os

from utils import get_formatted_time, update_benchmark_data_csv

parser = argparse.ArgumentParser()
parser.add_argument("--overwrite", action="store_true")
args = parser.parse_args()
slower = float(os.environ.get("GPU_DOUBLE_SLOWER", "1"))
config = json.dumps({"bsz": 8, "hidden_size": 4096, "intermediate_size": 11008, "hidden_act": "gelu_pytorch_tanh",
                     "dtype": "torch.bfloat16"})
stamp = get_formatted_time()
rows = []
for metric, unit, modes in (("speed", "ms", ("forward", "full")), ("memory", "MB", ("full",))):
    for mode in modes:
        for provider, base in (("liger", 1.25), ("huggingface", 1.75)):
            for t in (1024, 2048):
                y = base * t / 1024 * (10 if metric == "memory" else 1) * (3 if mode == "full" else 1)
                if metric == "speed" and provider == "liger":
                    y *= slower
                rows.append({"kernel_name": "geglu", "kernel_provider": provider, "kernel_operation_mode": mode,
                             "metric_name": metric, "metric_unit": unit, "x_name": "T", "x_label": "sequence length",
                             "x_value": t, "y_value_50": y, "y_value_20": y * 0.99, "y_value_80": y * 1.01,
                             "extra_benchmark_config_str": config, "gpu_name": "NVIDIA H200", "timestamp": stamp})
update_benchmark_data_csv(rows, overwrite=args.overwrite)
if os.environ.get("GPU_DOUBLE_UPGRADE"):
    with open(os.environ["GPU_DOUBLE_UPGRADE"], "w") as f:
        f.write("driver upgraded\n")
print("**************************************\n     BENCHMARKING GEGLU (test double)\n")
