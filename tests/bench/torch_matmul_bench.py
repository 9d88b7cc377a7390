"""TFLOP/s of torch.ops.tessera.matmul against torch.matmul (cuBLAS) and torch.compile(torch.matmul).

Usage: python3 tests/bench/torch_matmul_bench.py --lib PATH/libtessera_torch.so

CUDA, bfloat16. For each shape (M, K, N): "fwd" times a @ b; "fwd+bwd" the product and
torch.autograd.grad of both inputs with a fixed upstream gradient (three products: 6·M·N·K flops);
"dA" and "dB" time the backward's two products alone, on the views autograd passes (dC·Bᵀ, a
transposed B; Aᵀ·dC, a transposed A over K = M, where few output tiles split K).
Each tessera result is compared with torch.matmul's first (|t - e| <= 2e-2 * max|e|). Timing:
triton.testing.do_bench (median, L2 flushed) when triton imports, else CUDA events.
"""
import argparse
import sys

import torch

SHAPES = [(4096, 4096, 4096), (8192, 512, 8192), (16384, 1024, 1024)]


def timer():
    try:
        from triton.testing import do_bench
        return lambda fn: do_bench(fn, warmup=25, rep=100)
    except ImportError:
        def events(fn):
            for _ in range(5):
                fn()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            times = []
            for _ in range(20):
                start.record()
                fn()
                end.record()
                torch.cuda.synchronize()
                times.append(start.elapsed_time(end))
            return sorted(times)[len(times) // 2]
        return events


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    args = ap.parse_args()
    torch.ops.load_library(args.lib)
    bench = timer()
    compiled = torch.compile(torch.matmul)
    impls = {"tessera": torch.ops.tessera.matmul, "torch": torch.matmul, "compile": compiled}
    failed = False
    print(f"{'M x K x N':>20} {'pass':>8} " + " ".join(f"{k:>10}" for k in impls) + "  tess/best")
    for m, k, n in SHAPES:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        dc = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
        ref = torch.matmul(a, b)
        got = torch.ops.tessera.matmul(a, b)
        err = (got.float() - ref.float()).abs().max().item() / ref.float().abs().max().item()
        grads = torch.autograd.grad(got, (a, b), dc)
        rgrads = torch.autograd.grad(ref, (a, b), dc)
        gerr = max((g.float() - r.float()).abs().max().item() / r.float().abs().max().item()
                   for g, r in zip(grads, rgrads))
        ok = err <= 2e-2 and gerr <= 2e-2
        failed |= not ok
        products = {"fwd": (a, b), "dA": (dc, b.detach().t()), "dB": (a.detach().t(), dc)}
        for name, flops in (("fwd", 2 * m * n * k), ("dA", 2 * m * n * k), ("dB", 2 * m * n * k),
                            ("fwd+bwd", 6 * m * n * k)):
            row = []
            for impl in impls.values():
                if name in products:
                    fn = lambda impl=impl, x=products[name]: impl(*x)  # noqa: E731
                else:
                    def fn(impl=impl):
                        torch.autograd.grad(impl(a, b), (a, b), dc)
                row.append(flops / bench(fn) / 1e9)
            ratio = row[0] / max(row[1:])
            print(f"{f'{m}x{k}x{n}':>20} {name:>8} " + " ".join(f"{v:10.1f}" for v in row) +
                  f"  {ratio:8.2f}x" + ("" if ok else f"  CHECK FAILED (err {err:.2e}, grad err {gerr:.2e})"))
    print("TFLOP/s, bfloat16; tess/best = tessera / max(torch, compile)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
