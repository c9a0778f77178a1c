# test double: Liger-Kernel source folder (the benchmark scripts need no kernel here)
