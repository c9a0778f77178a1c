"""Test double of Liger-Kernel's benchmark/scripts/utils.py: the same CSV columns and the same
merge into ../data/all_benchmark_data.csv beside this file (update_benchmark_data_csv), the
version read with importlib.metadata, and no GPU."""
import csv
import os
import time
from collections import OrderedDict
from importlib.metadata import version

import liger_kernel  # noqa: F401  (the checkout's src/ must be on the path)

LIGER_KERNEL_VERSION = version("liger-kernel")
FIELDS = ["kernel_name", "kernel_provider", "kernel_operation_mode", "metric_name", "metric_unit", "x_name",
          "x_label", "x_value", "y_value_50", "y_value_20", "y_value_80", "extra_benchmark_config_str",
          "gpu_name", "timestamp", "liger_version"]


def get_formatted_time():
    return os.environ.get("GPU_DOUBLE_TIME") or time.strftime("%Y-%m-%d %H:%M:%S")


def update_benchmark_data_csv(rows, filename="all_benchmark_data.csv", overwrite=True):
    def key(row):
        return (row["kernel_name"], row["kernel_provider"], row["kernel_operation_mode"] or "", row["metric_name"],
                row["x_name"], str(row["x_value"]), row["extra_benchmark_config_str"] or "", row["gpu_name"])

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../data", filename)
    existing = OrderedDict()
    if os.path.isfile(path):
        with open(path) as f:
            for row in csv.DictReader(f):
                existing[key(row)] = row
    for row in rows:
        row = dict(row, liger_version=LIGER_KERNEL_VERSION)
        if key(row) not in existing or overwrite:
            existing[key(row)] = row
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode="w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        for row in existing.values():
            writer.writerow(row)
