# Test double of the tritonbench package (see ../README.md): run.py imports it from beside itself.
