"""Attention forward, the peers of tessera_bench_attention (tests/bench/bench_attention.cpp) on the
same shapes: torch's scaled_dot_product_attention (the flash backend where it applies) and a
Triton 3.6 kernel of the same loop as examples/attention_kernels.hpp (FlashAttention-2: running row
max and sum, exp2, P cast to the input type as the second dot's operand), over its configs. TFLOP/s
as 4·B·H·N²·D, half when causal. Every timed kernel is checked against SDPA first.
    python3 attention_ref.py                           every shape
    python3 attention_ref.py one DTYPE B H N D CAUSAL BM BN WARPS STAGES
"""
import sys

import torch
import triton
import triton.language as tl

from triton_configs import tflops, time_configs


@triton.jit
def attention_kernel(q, k, v, o, n, scale, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_D: tl.constexpr,
                     CAUSAL: tl.constexpr):
    """Q, K, V, O: [heads, n, HEAD_D] contiguous; program (i, h) takes BLOCK_M rows of head h."""
    head = tl.program_id(1).to(tl.int64) * n * HEAD_D
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_D)
    q_tile = tl.load(q + head + rows[:, None] * HEAD_D + dims[None, :], mask=rows[:, None] < n, other=0.0)
    scale_log2 = scale * 1.4426950408889634
    m = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_D), tl.float32)
    keys_end = tl.minimum(n, (tl.program_id(0) + 1) * BLOCK_M) if CAUSAL else n
    for j0 in range(0, keys_end, BLOCK_N):
        keys = j0 + tl.arange(0, BLOCK_N)
        k_t = tl.load(k + head + keys[None, :] * HEAD_D + dims[:, None], mask=keys[None, :] < n, other=0.0)
        seen = keys[None, :] < n
        if CAUSAL:
            seen = seen & (keys[None, :] <= rows[:, None])
        scores = tl.where(seen, tl.dot(q_tile, k_t) * scale_log2, float("-inf"))
        m_new = tl.maximum(m, tl.max(scores, 1))
        p = tl.math.exp2(scores - m_new[:, None])
        alpha = tl.math.exp2(m - m_new)
        l = l * alpha + tl.sum(p, 1)
        v_tile = tl.load(v + head + keys[:, None] * HEAD_D + dims[None, :], mask=keys[:, None] < n, other=0.0)
        acc = tl.dot(p.to(q_tile.dtype), v_tile, acc * alpha[:, None])
        m = m_new
    tl.store(o + head + rows[:, None] * HEAD_D + dims[None, :], (acc / l[:, None]).to(o.dtype.element_ty),
             mask=rows[:, None] < n)


SHAPES = [("fp16", 4, 32, 4096, 128, False), ("bf16", 4, 32, 4096, 128, True), ("fp16", 4, 32, 4096, 64, False)]


def configs_for(d):  # (BM, BN, warps, stages): bench_attention.cpp's configs_for
    if d > 64:
        return [(128, 32, 8, 1), (128, 32, 8, 2), (128, 64, 8, 1), (128, 64, 8, 2), (64, 64, 4, 2)]
    return [(128, 64, 8, 1), (128, 64, 8, 2), (128, 64, 8, 3), (128, 128, 8, 2), (64, 64, 4, 2)]


def bench_shape(dt, B, H, N, D, causal, configs):
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[dt]
    torch.manual_seed(0)
    q, k, v = (torch.rand(B, H, N, D, device="cuda", dtype=dtype) * 2 - 1 for _ in range(3))
    scale = 1.0 / D ** 0.5
    flops = 4.0 * B * H * N * N * D * (0.5 if causal else 1.0)
    name = f"{dt} B{B} H{H} N{N} D{D}{' causal' if causal else ''}"
    sdpa = lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)  # noqa: E731
    ref = sdpa()
    print(f"sdpa    {name} {tflops(sdpa, flops):8.1f} TFLOP/s", flush=True)

    def launcher(cfg):
        bm, bn, w, s = cfg
        o = torch.full_like(q, float("nan"))
        grid = (triton.cdiv(N, bm), B * H)

        def run():
            attention_kernel[grid](q, k, v, o, N, scale, BLOCK_M=bm, BLOCK_N=bn, HEAD_D=D, CAUSAL=causal,
                                   num_warps=w, num_stages=s)
        atol = 4 * (2 ** -8 if dt == "bf16" else 2 ** -11)  # |O| <= 1: a few units of the type's rounding
        return run, lambda: torch.allclose(o.float(), ref.float(), rtol=0, atol=atol)
    return time_configs(name, configs, launcher, flops)


def main():
    failed = 0
    if len(sys.argv) == 12 and sys.argv[1] == "one":
        dt = sys.argv[2]
        B, H, N, D, causal, bm, bn, w, s = map(int, sys.argv[3:12])
        failed += bench_shape(dt, B, H, N, D, bool(causal), [(bm, bn, w, s)])
    else:
        for dt, B, H, N, D, causal in SHAPES:
            failed += bench_shape(dt, B, H, N, D, causal, configs_for(D))
    return 3 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
