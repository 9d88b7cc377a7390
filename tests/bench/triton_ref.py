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


@triton.jit
def softmax_kernel(x_ptr, out_ptr, stride, n_cols, BLOCK: tl.constexpr):
    # One row per program, the row in one tile: the classic form of Triton's tutorial 02.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * stride + cols, num / tl.sum(num, axis=0), mask=mask)


@triton.jit
def layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    # Triton's tutorial 05 forward kernel, as published.
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    mean = 0
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


@triton.jit
def rms_norm_fwd(X, Y, W, Rstd, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0.).to(tl.float32)
    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    tl.store(Y + row * stride + cols, (x * rstd * w).to(tl.float16), mask=mask)
    tl.store(Rstd + row, rstd)


def bench_rows():
    for rows, cols in ((32768, 4096), (8192, 8192)):
        x = torch.rand(rows, cols, device="cuda")
        out = torch.empty_like(x)
        block = triton.next_power_of_2(cols)
        warps = 16 if block >= 8192 else 8 if block >= 2048 else 4
        fn = lambda: softmax_kernel[(rows,)](x, out, cols, cols, BLOCK=block, num_warps=warps)
        ms = triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")
        emit(f"softmax_fp32_{rows}x{cols}", "GB/s", 2 * 4 * rows * cols / (ms * 1e-3) / 1e9)
        assert torch.allclose(out, torch.softmax(x, dim=1), atol=1e-6)
        ms = triton.testing.do_bench(lambda: torch.softmax(x, dim=1), warmup=25, rep=200, return_mode="median")
        emit(f"softmax_fp32_{rows}x{cols}_torch", "GB/s", 2 * 4 * rows * cols / (ms * 1e-3) / 1e9)
    rows, cols = 32768, 4096
    x = torch.rand(rows, cols, device="cuda", dtype=torch.float16)
    w = torch.full((cols,), 1.5, device="cuda", dtype=torch.float16)
    b = torch.full((cols,), 0.25, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    mean = torch.empty(rows, device="cuda")
    rstd = torch.empty(rows, device="cuda")
    block = min(65536 // x.element_size(), triton.next_power_of_2(cols))
    warps = min(max(block // 256, 1), 8)
    fn = lambda: layer_norm_fwd[(rows,)](x, y, w, b, mean, rstd, cols, cols, 1e-5, BLOCK_SIZE=block, num_warps=warps)
    ms = triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")
    emit("layer_norm_fwd_fp16_32768x4096", "GB/s", 2 * 2 * rows * cols / (ms * 1e-3) / 1e9)
    fn = lambda: rms_norm_fwd[(rows,)](x, y, w, rstd, cols, cols, 1e-5, BLOCK=triton.next_power_of_2(cols), num_warps=8)
    ms = triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")
    emit("rms_norm_fwd_fp16_32768x4096", "GB/s", 2 * 2 * rows * cols / (ms * 1e-3) / 1e9)


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
        if mode in ("all", "basic"):
            bench_vector_add()
            bench_launch()
        if mode in ("all", "rows"):
            bench_rows()
