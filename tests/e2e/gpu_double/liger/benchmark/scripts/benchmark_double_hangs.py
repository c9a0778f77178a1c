"""Test double of a benchmark script that never ends."""
import time

time.sleep(3600)
