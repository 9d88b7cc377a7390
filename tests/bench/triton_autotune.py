"""Triton's side of tests/bench/bench_autotune.cpp: autotuning wall time of the same two kernels
(triton_ref.py's softmax_kernel and layer_norm_fwd) over the same 8 configs and sizes. Prints one
JSON line per case: {"impl": "triton", "name", "metric": "s", "value", "best"}.
  autotune_<kernel>_8_configs  first call of a fresh @triton.autotune with an empty TRITON_CACHE_DIR
  autotune_<kernel>_cached     first call of another fresh autotuner over a fresh JITFunction of the
                               same source (nothing in memory), with the disk cache the first filled
                               (compiled kernels, and the tuning result: cache_results=True)
Timed from the call to torch.cuda.synchronize() after it; torch/triton import, the CUDA context,
buffers and the compiler's start-up (add_kernel compiled first) are outside the clock, as in the
C++ side. Both use do_bench's default budgets (warmup=25 ms, rep=100 ms per config)."""
import json
import os
import sys
import tempfile
import time

# Before triton and the driver read them: an empty Triton cache, and no driver JIT cache.
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="triton_autotune_")
os.environ.setdefault("CUDA_CACHE_DISABLE", "1")

import torch  # noqa: E402
import triton  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from triton_ref import add_kernel, layer_norm_fwd, softmax_kernel  # noqa: E402

ROWS, COLS = 8192, 4096


def eight_configs(block_name):
    # num_stages=1 as tessera's configs (neither kernel has a loop to pipeline at these sizes).
    return [triton.Config({block_name: block}, num_warps=warps, num_stages=1)
            for block in (4096, 8192) for warps in (4, 8, 16, 32)]


def emit(name, seconds, best):
    print(json.dumps({"impl": "triton", "name": name, "metric": "s", "value": round(seconds, 4), "best": best}),
          flush=True)


def describe(config):
    kw = " ".join(f"{k}={v}" for k, v in config.kwargs.items())
    return f"{kw} num_warps={config.num_warps}"


def bench_kernel(name, jit_fn, block_name, key, run, check):
    for suffix in ("_8_configs", "_cached"):
        fresh = triton.jit(jit_fn.fn)  # a new JITFunction: an empty in-memory kernel cache
        tuned = triton.autotune(configs=eight_configs(block_name), key=[key], cache_results=True)(fresh)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        run(tuned)
        torch.cuda.synchronize()
        seconds = time.perf_counter() - t0
        check()
        emit(f"autotune_{name}{suffix}", seconds, describe(tuned.best_config))


def bench_softmax():
    x = torch.rand(ROWS, COLS, device="cuda")
    out = torch.empty_like(x)
    run = lambda k: k[(ROWS,)](x, out, COLS, COLS)
    check = lambda: torch.testing.assert_close(out, torch.softmax(x, dim=1), rtol=1e-4, atol=1e-7)
    bench_kernel("softmax", softmax_kernel, "BLOCK", "n_cols", run, check)


def bench_layer_norm():
    x = torch.rand(ROWS, COLS, device="cuda", dtype=torch.float16)
    w = 1.0 + (torch.arange(COLS, device="cuda") % 7).to(torch.float16) * 0.125
    b = torch.full((COLS,), 0.25, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    mean = torch.empty(ROWS, device="cuda")
    rstd = torch.empty(ROWS, device="cuda")
    run = lambda k: k[(ROWS,)](x, y, w, b, mean, rstd, COLS, COLS, 1e-5)
    want = lambda: torch.nn.functional.layer_norm(x.float(), (COLS,), w.float(), b.float(), 1e-5)
    check = lambda: torch.testing.assert_close(y.float(), want(), rtol=1e-2, atol=1e-2)
    bench_kernel("layer_norm", layer_norm_fwd, "BLOCK_SIZE", "N", run, check)


if __name__ == "__main__":
    n = 1 << 20
    a, c = torch.rand(n, device="cuda"), torch.empty(n, device="cuda")
    add_kernel[(triton.cdiv(n, 1024),)](a, a, c, n, BLOCK=1024, num_warps=4)  # compiler start-up
    torch.cuda.synchronize()
    bench_softmax()
    bench_layer_norm()
