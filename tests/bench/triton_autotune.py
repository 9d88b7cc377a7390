"""Triton's side of tests/bench/bench_autotune.cpp: autotuning wall time of the same two kernels
(triton_ref.py's softmax_kernel and layer_norm_fwd) over the same 8 configs and sizes. Prints one
JSON line per case: {"impl": "triton", "name", "metric": "s", "value", "best", "ok", "check"}.
Layer norm is tuned twice: the tutorial's kernel (impl "triton", three loops over the row) and
tessera's single pass (layer_norm_fwd_one_pass, impl "triton_same_algo"); the latter in a child
process (`triton_autotune.py layer_norm_one_pass`) with a fresh Triton cache of its own, so that
it compiles its launcher as the tutorial's did rather than reuse it.
  autotune_<kernel>_8_configs  first call of a fresh @triton.autotune with an empty TRITON_CACHE_DIR
  autotune_<kernel>_cached     first call of another fresh autotuner over a fresh JITFunction of the
                               same source (nothing in memory), with the disk cache the first filled
                               (compiled kernels, and the tuning result: cache_results=True)
Timed from the call to torch.cuda.synchronize() after it; torch/triton import, the CUDA context,
buffers and the compiler's start-up (add_kernel compiled first) are outside the clock, as in the
C++ side. Both use do_bench's default budgets (warmup=25 ms, rep=100 ms per config).
After each tuning the outputs are poisoned with NaN, the tuned kernel runs once more (its best
config) and what it wrote is checked against torch in float64 (triton_ref.py's Check and bounds);
a failure marks the line "ok": false and the script exits 3 after the other cases."""
import os
import subprocess
import sys
import tempfile
import time
import traceback

# Before triton and the driver read them: an empty Triton cache, and no driver JIT cache.
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="triton_autotune_")
os.environ.setdefault("CUDA_CACHE_DISABLE", "1")

import torch  # noqa: E402
import triton  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import triton_ref as ref  # noqa: E402
from triton_ref import (F16, SOFTMAX, STATS, Check, add_kernel, emit, layer_norm_fwd,  # noqa: E402
                        layer_norm_fwd_one_pass, layer_norm_refs, layer_norm_weights, poison, softmax_kernel)

ROWS, COLS = 8192, 4096


def eight_configs(block_name):
    # num_stages=1 as tessera's configs (neither kernel has a loop to pipeline at these sizes).
    return [triton.Config({block_name: block}, num_warps=warps, num_stages=1)
            for block in (4096, 8192) for warps in (4, 8, 16, 32)]


def describe(config):
    kw = " ".join(f"{k}={v}" for k, v in config.kwargs.items())
    return f"{kw} num_warps={config.num_warps}"


def bench_kernel(name, jit_fn, block_name, key, run, outputs, check_fn, impl="triton"):
    for suffix in ("_8_configs", "_cached"):
        check = Check(impl, f"autotune_{name}{suffix}")
        seconds, best = None, "?"
        try:
            fresh = triton.jit(jit_fn.fn)  # a new JITFunction: an empty in-memory kernel cache
            tuned = triton.autotune(configs=eight_configs(block_name), key=[key], cache_results=True)(fresh)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            run(tuned)
            torch.cuda.synchronize()
            seconds = time.perf_counter() - t0
            best = describe(tuned.best_config)
            poison(*outputs)
            run(tuned)
            torch.cuda.synchronize()
            check_fn(check)
        except Exception as e:  # noqa: BLE001 - this case fails, the next one runs
            traceback.print_exc()
            check.fail("could not run: " + " ".join(f"{type(e).__name__}: {e}".split())[:400])
        emit(f"autotune_{name}{suffix}", "s", seconds, check, impl, best=best)


def bench_softmax():
    x = torch.rand(ROWS, COLS, device="cuda")
    out = torch.empty_like(x)
    want = torch.softmax(x.double(), dim=1)
    run = lambda k: k[(ROWS,)](x, out, COLS, COLS)
    check = lambda c: c.close("out", out, want, **SOFTMAX)
    bench_kernel("softmax", softmax_kernel, "BLOCK", "n_cols", run, [out], check)


def bench_layer_norm(jit_fn, impl):
    eps = 1e-5
    x = torch.rand(ROWS, COLS, device="cuda", dtype=torch.float16)
    w, b = layer_norm_weights(COLS)
    y = torch.empty_like(x)
    mean = torch.empty(ROWS, device="cuda")
    rstd = torch.empty(ROWS, device="cuda")
    want_y, want_mean, want_rstd, _, _ = layer_norm_refs(x, w, b, eps)
    run = lambda k: k[(ROWS,)](x, y, w, b, mean, rstd, COLS, COLS, eps)

    def check(c):
        c.close("y", y, want_y, **F16)
        c.close("mean", mean, want_mean, **STATS)
        c.close("rstd", rstd, want_rstd, **STATS)
    bench_kernel("layer_norm", jit_fn, "BLOCK_SIZE", "N", run, [y, mean, rstd], check, impl)


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "all"
    if mode not in ("all", "layer_norm_one_pass"):
        print("usage: triton_autotune.py [all|layer_norm_one_pass]", file=sys.stderr)
        sys.exit(2)
    n = 1 << 20
    a, c = torch.rand(n, device="cuda"), torch.empty(n, device="cuda")
    add_kernel[(triton.cdiv(n, 1024),)](a, a, c, n, BLOCK=1024, num_warps=4)  # compiler start-up
    torch.cuda.synchronize()
    child_failed = False
    if mode == "all":
        bench_softmax()
        bench_layer_norm(layer_norm_fwd, "triton")
        sys.stdout.flush()
        # tessera's algorithm in a fresh process: this module's first lines give it an empty cache.
        rc = subprocess.run([sys.executable, os.path.abspath(__file__), "layer_norm_one_pass"]).returncode
        if rc not in (0, ref.EXIT_CHECK_FAILED):  # it crashed before emitting its lines
            for suffix in ("_8_configs", "_cached"):
                check = Check("triton_same_algo", f"autotune_layer_norm{suffix}")
                check.fail(f"the process tuning layer_norm_one_pass exited {rc} (its traceback is above)")
                emit(f"autotune_layer_norm{suffix}", "s", None, check, "triton_same_algo", best="?")
        child_failed = rc != 0
    else:
        bench_layer_norm(layer_norm_fwd_one_pass, "triton_same_algo")
    if ref.FAILED or child_failed:
        names = ", ".join(f"{impl} {name}" for impl, name in ref.FAILED) or "see the child process above"
        print(f"triton_autotune.py: case(s) FAILED their correctness check or could not run: {names}", file=sys.stderr)
        sys.exit(ref.EXIT_CHECK_FAILED)
