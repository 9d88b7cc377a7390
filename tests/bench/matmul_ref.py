"""Triton 3.6 and cuBLAS (torch.matmul) side of tests/bench/bench_matmul.cpp: the same shapes,
TFLOP/s, timed with triton.testing.do_bench (median). Triton's kernel is the classic grouped-order
matmul of its tutorial 03 (the algorithm tessera's example runs), with an autotuned choice over the
usual configs and, separately, num_stages=1. `matmul_ref.py one DTYPE M N K BM BN BK WARPS STAGES` runs one
shape and configuration (for a profiler), `matmul_ref.py DTYPE` one dtype's shapes, `matmul_ref.py bias_gelu` the fused epilogue alone
(bf16 8192^3 against eager torch and torch.compile too). DTYPE: bf16, fp16, tf32 (f32 tensors, tl.dot's default
input_precision; cuBLAS with allow_tf32) or int8 (i32 accumulator and output; cuBLAS through
torch._int_mm; TOP/s). Each kernel's output is checked against torch before it is timed."""
import sys

import torch
import triton
import triton.language as tl

from triton_configs import tflops, time_configs


@triton.jit
def tile_product(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, BLOCK_M: tl.constexpr,
                 BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, ACC_INT: tl.constexpr):
    """This program's tile of A.B in the tutorial's grouped order: (acc, its rows, its columns)."""
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    in_group = GROUP_M * num_pid_n
    first_m = (pid // in_group) * GROUP_M
    size_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % in_group) % size_m)
    pid_n = (pid % in_group) // size_m
    rm = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    rn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32 if ACC_INT else tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + ks[None, :] * stride_ak, mask=ks[None, :] < K, other=0)
        b = tl.load(b_ptr + ks[:, None] * stride_bk + rn[None, :] * stride_bn, mask=ks[:, None] < K, other=0)
        acc = tl.dot(a, b, acc, out_dtype=tl.int32 if ACC_INT else tl.float32)
    return acc, pid_m * BLOCK_M + tl.arange(0, BLOCK_M), pid_n * BLOCK_N + tl.arange(0, BLOCK_N)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                  ACC_INT: tl.constexpr):
    acc, om, on = tile_product(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, BLOCK_M, BLOCK_N,
                               BLOCK_K, GROUP_M, ACC_INT)
    tl.store(c_ptr + om[:, None] * stride_cm + on[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
             mask=(om[:, None] < M) & (on[None, :] < N))


@triton.jit
def matmul_bias_gelu_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                            stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                            GROUP_M: tl.constexpr):
    """matmul_kernel's product with tessera's fused epilogue (examples/matmul_kernels.hpp
    make_matmul_bias_gelu): C = bf16(GELU(A.B + bias)), f32 bias, GELU with erf."""
    acc, om, on = tile_product(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, BLOCK_M, BLOCK_N,
                               BLOCK_K, GROUP_M, False)
    x = acc + tl.load(bias_ptr + on, mask=on < N, other=0.0)[None, :]
    y = 0.5 * x * (1.0 + tl.math.erf(x * 0.70710678118654752))
    tl.store(c_ptr + om[:, None] * stride_cm + on[None, :] * stride_cn, y.to(tl.bfloat16),
             mask=(om[:, None] < M) & (on[None, :] < N))


CONFIGS = [  # (BM, BN, BK, warps, stages): Triton tutorial's CUDA configs
    (128, 256, 64, 8, 3), (64, 256, 32, 4, 4), (128, 128, 32, 4, 4), (128, 64, 32, 4, 4),
    (64, 128, 32, 4, 4), (128, 128, 64, 8, 3), (128, 128, 32, 8, 1), (128, 128, 64, 8, 1), (64, 128, 32, 4, 1),
    (128, 256, 64, 8, 4),  # not the tutorial's: tessera's best on Hopper, timed on both sides
]


def run(a, b, c, cfg):
    bm, bn, bk, w, s = cfg
    M, K = a.shape
    N = b.shape[1]
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, ACC_INT=a.dtype == torch.int8,
                        num_warps=w, num_stages=s)


def bias_gelu(M, N, K):
    """bf16 C = GELU(A.B + bias) at M x N x K: eager torch (cuBLAS, then the epilogue), torch.compile
    of the same expression (default mode: cuBLAS and one fused pointwise kernel), and Triton's
    matmul_bias_gelu_kernel over CONFIGS; tessera_bench_matmul's last case is tessera's side.
    Returns the number of failed checks."""
    torch.manual_seed(0)
    a = torch.rand(M, K, device="cuda", dtype=torch.bfloat16) * 2 - 1
    b = torch.rand(K, N, device="cuda", dtype=torch.bfloat16) * 2 - 1
    bias = torch.rand(N, device="cuda", dtype=torch.float32) * 2 - 1
    torch.backends.cuda.matmul.allow_tf32 = False  # the f32 reference stays f32

    def eager(a, b, bias):
        return torch.nn.functional.gelu(torch.matmul(a, b).float() + bias).to(torch.bfloat16)

    compiled = torch.compile(eager)
    ref = (torch.nn.functional.gelu(torch.matmul(a.float(), b.float()) + bias)).to(torch.bfloat16)
    flops = 2.0 * M * N * K
    name = f"bias_gelu bf16 {M}x{N}x{K}"
    failed = 0
    for label, fn in (("eager", eager), ("torch.compile", compiled)):
        ok = torch.allclose(fn(a, b, bias).float(), ref.float(), rtol=2e-2, atol=5e-1)
        t = tflops(lambda: fn(a, b, bias), flops)
        print(f"{label:13s} {name} {t:8.1f} TFLOP/s check {'ok' if ok else 'FAILED'}", flush=True)
        failed += not ok

    def launcher(cfg):
        bm, bn, bk, w, s = cfg
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)

        def run():
            matmul_bias_gelu_kernel[grid](a, b, bias, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                          c.stride(0), c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8,
                                          num_warps=w, num_stages=s)
        return run, lambda: torch.allclose(c.float(), ref.float(), rtol=2e-2, atol=5e-1)
    return failed + time_configs(name, CONFIGS, launcher, flops)


def main():
    shapes = [("bf16", 4096, 4096, 4096), ("bf16", 8192, 8192, 8192), ("fp16", 8192, 8192, 8192),
              ("bf16", 8192, 8192, 512), ("bf16", 16384, 1024, 1024), ("tf32", 4096, 4096, 4096),
              ("int8", 8192, 8192, 8192)]
    configs = CONFIGS
    if len(sys.argv) == 2:  # one DTYPE's shapes only
        shapes = [sh for sh in shapes if sh[0] == sys.argv[1]]
    layout = "nn"
    # one DTYPE M N K BM BN BK WARPS STAGES [LAYOUT] (for a profiler; LAYOUT nn, tn, nt or tt: t is
    # a column-major operand, as tessera_bench_matmul's)
    if len(sys.argv) in (11, 12) and sys.argv[1] == "one":
        dt, *nums = sys.argv[2:11]
        shapes = [(dt, *map(int, nums[:3]))]
        configs = [tuple(map(int, nums[3:]))]
        layout = sys.argv[11] if len(sys.argv) == 12 else "nn"
    failed = 0
    for dt, M, N, K in shapes:
        dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "tf32": torch.float32, "int8": torch.int8}[dt]
        torch.backends.cuda.matmul.allow_tf32 = dt == "tf32"
        torch.manual_seed(0)
        if dt == "int8":
            a = torch.randint(-128, 128, (M, K), device="cuda", dtype=dtype)
            b = torch.randint(-128, 128, (K, N), device="cuda", dtype=dtype)
            cublas = lambda: torch._int_mm(a, b)  # noqa: E731
            out_dtype = torch.int32
        else:
            a = torch.rand(M, K, device="cuda", dtype=dtype) * 2 - 1
            b = torch.rand(K, N, device="cuda", dtype=dtype) * 2 - 1
            if layout[0] == "t":
                a = a.t().contiguous().t()
            if layout[1] == "t":
                b = b.t().contiguous().t()
            cublas = lambda: torch.matmul(a, b)  # noqa: E731
            out_dtype = dtype
        ref = cublas()
        flops = 2.0 * M * N * K
        ms = triton.testing.do_bench(cublas, warmup=25, rep=200, return_mode="median")
        print(f"cuBLAS  {dt} {M}x{N}x{K} {flops / ms / 1e9:8.1f} TFLOP/s", flush=True)
        best, best_s1 = 0.0, 0.0
        for cfg in configs:
            c = (torch.full((M, N), -1, device="cuda", dtype=out_dtype) if dt == "int8" else
                 torch.full((M, N), float("nan"), device="cuda", dtype=out_dtype))
            try:
                run(a, b, c, cfg)
            except Exception as e:  # out of resources for a config
                first = next((ln for ln in str(e).splitlines() if "Error" in ln or "error" in ln), str(e)[:200])
                print(f"triton  {dt} {M}x{N}x{K} {cfg} could not run: {type(e).__name__}: {first.strip()[:300]}", flush=True)
                continue
            ok = (torch.equal(c, ref) if dt == "int8" else
                  torch.allclose(c.float(), ref.float(), rtol=2e-2, atol=5e-1))
            ms = triton.testing.do_bench(lambda: run(a, b, c, cfg), warmup=25, rep=200, return_mode="median")
            t = flops / ms / 1e9
            print(f"triton  {dt} {M}x{N}x{K} {str(cfg):24s} {t:8.1f} TFLOP/s check {'ok' if ok else 'FAILED'}", flush=True)
            if not ok:
                failed += 1
                continue
            best = max(best, t)
            if cfg[4] == 1:
                best_s1 = max(best_s1, t)
        print(f"BEST triton {dt} {M}x{N}x{K}{'' if layout == 'nn' else ' ' + layout} {best:.1f} TFLOP/s; with num_stages=1 {best_s1:.1f}", flush=True)
    if len(sys.argv) == 1 or sys.argv[1] == "bias_gelu":
        failed += bias_gelu(8192, 8192, 8192)
    return 3 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
