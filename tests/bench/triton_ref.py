"""Triton reference for tests/bench/bench.cpp: the same kernels, sizes and configs.
Prints one JSON line per case: {"impl": "triton", "name", "metric", "value"}.
`python3 triton_ref.py first_call` must run in a fresh process with an empty TRITON_CACHE_DIR."""
import json
import sys
import time

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def emit(name, metric, value):
    print(json.dumps({"impl": "triton", "name": name, "metric": metric, "value": round(value, 4)}), flush=True)


def bench_vector_add():
    for log2n in (24, 28):
        n = 1 << log2n
        x = torch.rand(n, device="cuda")
        y = torch.rand(n, device="cuda")
        out = torch.empty_like(x)
        for block, warps in ((1024, 4), (4096, 8)):
            fn = lambda: add_kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block, num_warps=warps)
            ms = triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")
            emit(f"vector_add_fp32_2^{log2n}_B{block}_W{warps}", "GB/s", 3 * 4 * n / (ms * 1e-3) / 1e9)
        assert torch.equal(out, x + y)


def bench_launch():
    n = 1024
    x = torch.rand(n, device="cuda")
    y = torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    add_kernel[(1,)](x, y, out, n, BLOCK=1024, num_warps=4)
    torch.cuda.synchronize()
    iters = 20000
    for rnd in range(2):
        t0 = time.perf_counter()
        for _ in range(iters):
            add_kernel[(1,)](x, y, out, n, BLOCK=1024, num_warps=4)
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        if rnd == 1:
            emit("launch_cached_vector_add", "us/launch", (t1 - t0) * 1e6 / iters)


def bench_first_call():
    n = 1 << 20
    x = torch.rand(n, device="cuda")
    y = torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024, num_warps=4)
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    emit("first_call_vector_add", "ms", (t1 - t0) * 1e3)


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "all"
    if mode == "first_call":
        bench_first_call()
    else:
        bench_vector_add()
        bench_launch()
