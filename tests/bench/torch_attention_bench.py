"""TFLOP/s of torch.ops.tessera.attention against torch's scaled_dot_product_attention (SDPA: the
flash backend where it applies), forward and backward.

Usage: python3 tests/bench/torch_attention_bench.py --lib PATH/libtessera_torch.so [--profile] [--only TEXT]

CUDA, [B, H, N, D] q, k, v. "fwd" times the op (tessera's forward also writes the row log-sum-exp
that its backward takes); "fwd+bwd" the op and torch.autograd.grad of q, k and v with a fixed
upstream gradient; "bwd" is their difference. FLOPs as FlashAttention and Triton's tutorial count
them: 4·B·H·N²·D forward, 2.5 times that backward, half of each when causal.
Each tessera result is compared with SDPA's first: |t - e| <= 2e-2 * max|e| for O, dQ, dK, dV.
--profile prints each backward kernel's time (torch.profiler, one fwd+bwd) to show which one to tune.
Timing: triton.testing.do_bench (median, L2 flushed) when triton imports, else CUDA events.
"""
import argparse
import sys

import torch
import torch.nn.functional as F

from torch_matmul_bench import timer

SHAPES = [("fp16", 4, 32, 4096, 128, False), ("bf16", 4, 32, 4096, 128, True), ("fp16", 4, 32, 4096, 64, False),
          ("bf16", 8, 16, 2048, 64, True)]


def relative_error(got, want):
    return (got.float() - want.float()).abs().max().item() / want.float().abs().max().item()


def kernel_times(fn):
    """Microseconds per CUDA kernel name over one call of fn."""
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    times = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            times[e.name] = times.get(e.name, 0.0) + getattr(e, "device_time", getattr(e, "cuda_time", 0.0))
    return times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--only", default="", help="the cases whose name contains this text")
    args = ap.parse_args()
    torch.ops.load_library(args.lib)
    bench = timer()
    failed = False
    print(f"{'case':>32} {'pass':>8} {'tessera':>10} {'sdpa':>10}  tess/sdpa")
    for dt, b, h, n, d, causal in SHAPES:
        name = f"{dt} B{b} H{h} N{n} D{d}{' causal' if causal else ''}"
        if args.only not in name:
            continue
        dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[dt]
        torch.manual_seed(0)
        q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=dtype, requires_grad=True) for _ in range(3))
        d_o = torch.randn(b, h, n, d, device="cuda", dtype=dtype)
        impls = {"tessera": lambda: torch.ops.tessera.attention(q, k, v, causal),
                 "sdpa": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)}
        outs = {impl: f() for impl, f in impls.items()}
        grads = {impl: torch.autograd.grad(outs[impl], (q, k, v), d_o) for impl in impls}
        errs = [relative_error(outs["tessera"], outs["sdpa"])]
        errs += [relative_error(g, r) for g, r in zip(grads["tessera"], grads["sdpa"])]
        ok = max(errs) <= 2e-2
        failed |= not ok
        fwd_flops = 4.0 * b * h * n * n * d * (0.5 if causal else 1.0)
        ms = {}
        for impl, f in impls.items():
            ms[impl, "fwd"] = bench(f)
            ms[impl, "fwd+bwd"] = bench(lambda f=f: torch.autograd.grad(f(), (q, k, v), d_o))
            ms[impl, "bwd"] = ms[impl, "fwd+bwd"] - ms[impl, "fwd"]
        for part, flops in (("fwd", fwd_flops), ("bwd", 2.5 * fwd_flops), ("fwd+bwd", 3.5 * fwd_flops)):
            t, s = (flops / ms[impl, part] / 1e9 for impl in impls)
            print(f"{name:>32} {part:>8} {t:10.1f} {s:10.1f}  {t / s:8.3f}x" +
                  ("" if ok else "  CHECK FAILED (errors o/dq/dk/dv " + " ".join(f"{e:.2e}" for e in errs) + ")"),
                  flush=True)
        if args.profile:
            times = kernel_times(lambda: torch.autograd.grad(impls["tessera"](), (q, k, v), d_o))
            slowest = sorted(times.items(), key=lambda kt: -kt[1])[:6]
            print("    tessera kernels (us): " + ", ".join(f"{kernel[:40]} {us:.0f}" for kernel, us in slowest))
    print("TFLOP/s; tess/sdpa = tessera / torch's scaled_dot_product_attention")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
