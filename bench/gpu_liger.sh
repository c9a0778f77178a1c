#!/usr/bin/env bash
# Issue 18's measurement on a GPU host with no network (NOTES.md "Running on a GPU host with no
# network"): `kistore bench liger` with Liger-Kernel's own benchmark_geglu.py and
# benchmark_swiglu.py, then the same again with --rerun, signed by a throwaway controller key.
#
#   bench/gpu_liger.sh prepare LIGER_GIT_DIR   # here: build/gpu-carry/ (kistore stripped, the shared
#                                              # libraries ldd lists beyond glibc and libstdc++,
#                                              # Liger-Kernel's src, benchmark/scripts, pyproject.toml)
#   bench/gpu_liger.sh run                     # there (carry build/gpu-carry): results under $OUT
#
# kistore runs through the dynamic loader with --library-path, so that the libraries it brings
# are its own and never reach the Python it starts (torch keeps the host's libstdc++ and OpenSSL).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
carry=$root/build/gpu-carry
case "${1:-}" in
prepare)
    git_dir=${2:?LIGER_GIT_DIR: a clone or mirror of linkedin/Liger-Kernel}
    rm -rf "$carry" && mkdir -p "$carry/lib" || exit 1
    git --git-dir="$git_dir" archive --prefix=Liger-Kernel/ HEAD src benchmark/scripts pyproject.toml |
        gzip -9 >"$carry/liger.tar.gz" || exit 1
    bin=${KISTORE:-$root/build/kistore}  # the binary to carry
    strip -o "$carry/kistore" "$bin" || exit 1
    for lib in $(ldd "$bin" | awk '$3 ~ /^\// {print $3}'); do
        case $(basename "$lib") in libc.so* | libm.so* | libstdc++* | libgcc_s* | libresolv*) ;; *) cp -L "$lib" "$carry/lib/" ;; esac
    done
    cp "$root/tests/data/keys/controller" "$root/tests/data/keys/controller.pub" "$carry/"
    cp "${BASH_SOURCE[0]}" "$carry/gpu_liger.sh"
    du -sh "$carry"
    ;;
run)
    C=$carry
    [[ -x $C/kistore ]] || C=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    : "${OUT:?OUT: the folder for the results}"
    W=/tmp/gpu-work
    rm -rf "$W" && mkdir -p "$W" && cd "$W" || exit 1
    K() { /lib64/ld-linux-x86-64.so.2 --library-path "$C/lib" "$C/kistore" "$@"; }
    export KISTORE_AUTHOR="kistore bench <bench@example.org>" KISTORE_DIR=$W/store
    echo "== preflight"
    command -v nvidia-smi python3
    python3 -c 'import torch, triton, transformers; print(torch.__version__, triton.__version__, transformers.__version__)'
    tar xzf "$C/liger.tar.gz" || exit 1
    cp "$C/controller" "$C/controller.pub" . && chmod 600 controller
    K init >/dev/null && K trust add bench@example.org controller.pub >/dev/null || exit 1
    echo "== capture"
    K capture | tee "$OUT/environment.json"
    scripts=(benchmark_geglu.py benchmark_swiglu.py)
    t0=$(date +%s.%N)
    K --json bench liger --liger Liger-Kernel "${scripts[@]}" --timeout 240 >"$OUT/bench1.json"
    echo "bench 1: exit $?"
    t1=$(date +%s.%N)
    K --json bench liger --liger Liger-Kernel "${scripts[@]}" --timeout 240 --rerun --sign controller >"$OUT/bench2.json"
    echo "bench 2 (--rerun): exit $?"
    t2=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN {printf "bench 1: %.1f s\nbench 2: %.1f s\n", b - a, c - b}' | tee "$OUT/times.txt"
    K verify | tail -3
    tar czf "$OUT/store.tar.gz" store
    ;;
*)
    echo "usage: bench/gpu_liger.sh prepare LIGER_GIT_DIR | run" >&2
    exit 2
    ;;
esac
