"""Test double of a benchmark script that fails as one out of GPU memory does."""
import sys

from utils import update_benchmark_data_csv

update_benchmark_data_csv([])  # an empty table first: a failed script's file must not count
sys.stderr.write("Traceback (most recent call last):\n  File \"benchmark_double_fails.py\", line 9\n"
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB (test double)\n")
sys.exit(1)
