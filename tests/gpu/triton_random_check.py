"""Triton's side of tessera's random numbers: runs tl.randint4x, tl.rand and tl.randn (Triton 3.6,
on the GPU) for the seeds and offsets of tests/gpu/numerics_gpu_test.cpp and checks them against
the same plain Philox-4x32-10 reference that test holds tessera to (tests/common/
numerics_reference.hpp, written again here in numpy): randint4x and rand bit for bit, randn within
the same bound. Both matching one reference is what makes tessera's numbers Triton's. Prints one
line per seed and exits 1 on a mismatch."""
import sys

import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def streams(offsets, words, uniform, normal, seed, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    off = tl.load(offsets + offs, mask=mask)
    r0, r1, r2, r3 = tl.randint4x(seed, off)
    tl.store(words + offs * 4 + 0, r0, mask=mask)
    tl.store(words + offs * 4 + 1, r1, mask=mask)
    tl.store(words + offs * 4 + 2, r2, mask=mask)
    tl.store(words + offs * 4 + 3, r3, mask=mask)
    tl.store(uniform + offs, tl.rand(seed, off), mask=mask)
    tl.store(normal + offs, tl.randn(seed, off), mask=mask)


def philox(c0, k0, k1):
    """Philox-4x32-10 on counters (c0, 0, 0, 0), numpy uint32 arrays, key (k0, k1)."""
    c = [c0.astype(np.uint64), np.zeros_like(c0, np.uint64), np.zeros_like(c0, np.uint64), np.zeros_like(c0, np.uint64)]
    k0, k1 = np.uint64(k0), np.uint64(k1)
    m32 = np.uint64(0xFFFFFFFF)
    for _ in range(10):
        p0 = np.uint64(0xD2511F53) * c[0]
        p1 = np.uint64(0xCD9E8D57) * c[2]
        c = [((p1 >> np.uint64(32)) ^ c[1] ^ k0) & m32, p1 & m32, ((p0 >> np.uint64(32)) ^ c[3] ^ k1) & m32, p0 & m32]
        k0 = (k0 + np.uint64(0x9E3779B9)) & m32
        k1 = (k1 + np.uint64(0xBB67AE85)) & m32
    return [x.astype(np.uint32) for x in c]


def uniform(x):
    s = x.view(np.int32).astype(np.int64)
    s = np.where(s < 0, -s - 1, s)
    return s.astype(np.float32) * np.float32(4.6566127342e-10)


def main():
    n = 1 << 20
    # Offsets 0, 1, ... then a fixed pseudo-random half (any int32 bits).
    rng = np.random.default_rng(11)
    offsets = np.concatenate([np.arange(n // 2, dtype=np.int32),
                              rng.integers(-2**31, 2**31, n // 2, dtype=np.int64).astype(np.int32)])
    failed = 0
    for seed in (42, -7, 0x123456789abcdef):
        words = torch.empty(4 * n, dtype=torch.int32, device="cuda")
        uni = torch.empty(n, dtype=torch.float32, device="cuda")
        nor = torch.empty(n, dtype=torch.float32, device="cuda")
        streams[(n // 1024,)](torch.from_numpy(offsets).cuda(), words, uni, nor, seed, n, BLOCK=1024)
        got_words = words.cpu().numpy().view(np.uint32).reshape(n, 4)
        got_uni, got_nor = uni.cpu().numpy(), nor.cpu().numpy()
        seed64 = seed & 0xFFFFFFFFFFFFFFFF
        ref = philox(offsets.view(np.uint32), seed64 & 0xFFFFFFFF, seed64 >> 32)
        bad_words = sum(int((got_words[:, j] != ref[j]).sum()) for j in range(4))
        bad_uni = int((got_uni.view(np.uint32) != uniform(ref[0]).view(np.uint32)).sum())
        u1 = np.maximum(np.float32(1e-7), uniform(ref[0])).astype(np.float64)
        l = -2.0 * np.log(u1)
        want = np.sqrt(l) * np.cos(np.float64(np.float32(6.283185307179586)) * uniform(ref[1]).astype(np.float64))
        held = l >= 1e-5
        bound = 4e-6 * (1 + np.abs(want)) + 4e-7 / np.sqrt(np.maximum(l, 1e-30))
        bad_nor = int((np.abs(got_nor.astype(np.float64) - want) > bound)[held].sum())
        ok = bad_words == 0 and bad_uni == 0 and bad_nor == 0
        failed += not ok
        print(f"triton random seed {seed}: randint4x {bad_words} words differ, rand {bad_uni} differ, "
              f"randn {bad_nor} beyond the bound (max |diff| {np.abs(got_nor - want)[held].max():.2e}) "
              f"{'ok' if ok else 'FAILED'}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
