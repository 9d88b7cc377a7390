"""Triton reference for tests/bench/bench.cpp: the same kernels, sizes and configs.
Prints one JSON line per case: {"impl", "name", "metric", "value", "ok", "check"}, where impl is
  triton            Triton's tutorial kernel (as published, or adapted for RMSNorm): the library baseline
  triton_same_algo  tessera's algorithm written in Triton (same grid, loops, partial sums, warps),
                    only where the tutorial's differs: layer norm forward, layer norm and RMSNorm
                    backward; compare.py's "compiler" ratio
Every timed kernel is first run once on outputs poisoned with NaN and checked element by element
against torch in float64 (bounds below, at F16 and friends); a failure marks its line "ok": false,
prints "CHECK FAILED <impl> <case>: ..." lines to stderr, and the script goes on with the next case
and exits 3 at the end (1: it crashed; 2: bad arguments).
  python3 triton_ref.py [all|basic|rows|norm_bwd]
  python3 triton_ref.py first_call [vector_add|layer_norm] [first_call|disk_hit]
first_call must run in a fresh process with an empty TRITON_CACHE_DIR (disk_hit: the one it
filled); `first_call layer_norm` also times tessera's algorithm in a child process (see
same_algo_first_call)."""
import json
import math
import os
import subprocess
import sys
import time
import traceback

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


@triton.jit
def _layer_norm_bwd_dx_fused(DX,  # pointer to the input gradient
                             DY,  # pointer to the output gradient
                             DW,  # pointer to the partial sum of weights gradient
                             DB,  # pointer to the partial sum of biases gradient
                             X,  # pointer to the input
                             W,  # pointer to the weights
                             Mean,  # pointer to the mean
                             Rstd,  # pointer to the 1/std
                             Lock,  # pointer to the lock
                             stride,  # how much to increase the pointer when moving by 1 row
                             N,  # number of columns in X
                             GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    # Triton's tutorial 05 backward kernel, as published.
    # Map the program id to the elements of X, DX, and DY it should compute.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    # Offset locks and weights/biases gradient pointer for parallel reduction
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols
    # Load data to SRAM
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    # Compute dx
    xhat = (x - mean) * rstd
    wdy = w * dy
    xhat = tl.where(mask, xhat, 0.)
    wdy = tl.where(mask, wdy, 0.)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    # Write dx
    tl.store(DX + cols, dx, mask=mask)
    # Accumulate partial sums for dw/db
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = (dy).to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    # First store doesn't accumulate
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)

    # need a barrier to ensure all threads finished before
    # releasing the lock
    tl.debug_barrier()

    # Release the lock
    tl.atomic_xchg(Lock, 0)


@triton.jit
def _layer_norm_bwd_dwdb(DW,  # pointer to the partial sum of weights gradient
                         DB,  # pointer to the partial sum of biases gradient
                         FINAL_DW,  # pointer to the weights gradient
                         FINAL_DB,  # pointer to the biases gradient
                         M,  # GROUP_SIZE_M
                         N,  # number of columns
                         BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    # Triton's tutorial 05, as published.
    # Map the program id to the elements of DW and DB it should compute.
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    # Iterate through the rows of DW and DB to sum the partial sums.
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.)
        db += tl.load(DB + offs, mask=mask, other=0.)
    # Write the final sum to the output.
    sum_dw = tl.sum(dw, axis=0)
    sum_db = tl.sum(db, axis=0)
    tl.store(FINAL_DW + cols, sum_dw, mask=cols < N)
    tl.store(FINAL_DB + cols, sum_db, mask=cols < N)


@triton.jit
def _rms_norm_bwd_dx_fused(DX, DY, DW, X, W, Rstd, Lock, stride, N,
                           GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    # The tutorial's _layer_norm_bwd_dx_fused for y = x * rstd * w: no mean, no bias.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    rstd = tl.load(Rstd + row)
    xhat = x * rstd
    wdy = w * dy
    xhat = tl.where(mask, xhat, 0.)
    wdy = tl.where(mask, wdy, 0.)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    dx = (wdy - xhat * c1) * rstd
    tl.store(DX + cols, dx, mask=mask)
    partial_dw = (dy * xhat).to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)


@triton.jit
def _rms_norm_bwd_dw(DW, FINAL_DW, M, N, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    # The tutorial's _layer_norm_bwd_dwdb with one partial buffer.
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.)
    tl.store(FINAL_DW + cols, tl.sum(dw, axis=0), mask=cols < N)


@triton.jit
def online_softmax_kernel(x_ptr, out_ptr, stride, n_cols, BLOCK: tl.constexpr):
    # tessera's online_softmax (examples/norm_kernels.hpp): one program per row; a loop over column
    # blocks with a running max m and running sum s, then a loop writing exp(x - m) / s.
    row = tl.program_id(0)
    x_row = x_ptr + row * stride
    out_row = out_ptr + row * stride
    m = tl.full([], float("-inf"), dtype=tl.float32)
    s = tl.zeros([], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf"))
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    inv_s = 1.0 / s
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.)
        tl.store(out_row + cols, tl.exp(x - m) * inv_s, mask=mask)


# ---- tessera's algorithms in Triton (impl "triton_same_algo"), where the tutorial's differ: the same
# grid, loops, partial sums, blocks and warps as examples/norm_kernels.hpp, so that the ratio to
# tessera compares the compilers; the tutorial kernels above stay the library baseline.

@triton.jit
def layer_norm_fwd_one_pass(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    # tessera's make_layer_norm_fwd: the row in one tile, read once; mean, then the variance of the
    # centred tile held in registers (the tutorial reads the row three times, in three loops).
    # The tutorial's signature, so that the benchmarks launch either.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0.).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    centered = tl.where(mask, x - mean, 0.)
    var = tl.sum(centered * centered, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    b = tl.load(B + cols, mask=mask).to(tl.float32)
    tl.store(Y + row * stride + cols, (centered * rstd * w + b).to(Y.dtype.element_ty), mask=mask)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)


@triton.jit
def _add_pair(a1, b1, a2, b2):
    return a1 + a2, b1 + b2


@triton.jit
def layer_norm_bwd_dx_partial(X, DY, DX, W, Mean, Rstd, DW_partial, DB_partial, stride, M, N,
                              BLOCK: tl.constexpr):
    # tessera's make_layer_norm_bwd_dx: a fixed grid of P programs (norm_bwd_programs), program p
    # takes rows p, p + P, ...; w is loaded once; dW and dB accumulate in f32 registers across the
    # rows and are written once to row p of [P, N] f32 buffers (no locks, no f16 partial sums: the
    # tutorial instead runs one program per row and adds f16 partials under a spin lock).
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    w = tl.load(W + cols, mask=mask, other=0.).to(tl.float32)
    inv_n = 1.0 / N
    dw_acc = tl.zeros([BLOCK], dtype=tl.float32)
    db_acc = tl.zeros([BLOCK], dtype=tl.float32)
    for row in range(pid, M, tl.num_programs(0)):
        offs = row * stride + cols
        x = tl.load(X + offs, mask=mask, other=0.).to(tl.float32)
        dy = tl.load(DY + offs, mask=mask, other=0.).to(tl.float32)
        mean = tl.load(Mean + row)
        rstd = tl.load(Rstd + row)
        x_hat = tl.where(mask, (x - mean) * rstd, 0.)
        wdy = w * dy
        # Both row sums in one tuple reduction, as tessera's kernel: one cross-warp exchange.
        s1, s2 = tl.reduce((x_hat * wdy, wdy), 0, _add_pair)
        c1 = s1 * inv_n
        c2 = s2 * inv_n
        tl.store(DX + offs, ((wdy - (x_hat * c1 + c2)) * rstd).to(DX.dtype.element_ty), mask=mask)
        dw_acc += dy * x_hat
        db_acc += dy
    tl.store(DW_partial + pid * N + cols, dw_acc, mask=mask)
    tl.store(DB_partial + pid * N + cols, db_acc, mask=mask)
    # The column sums of the [P, N] partials are the tutorial's _layer_norm_bwd_dwdb (BLOCK_SIZE_M 32,
    # BLOCK_SIZE_N 128, 4 warps), which is exactly tessera's make_layer_norm_bwd_dwdb.


@triton.jit
def rms_norm_bwd_dx_partial(X, DY, DX, W, Rstd, DW_partial, stride, M, N, BLOCK: tl.constexpr):
    # tessera's make_rms_norm_bwd_dx: as layer_norm_bwd_dx_partial for y = x * rstd * w; the column
    # sums are _rms_norm_bwd_dw (tessera's make_rms_norm_bwd_dw).
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    w = tl.load(W + cols, mask=mask, other=0.).to(tl.float32)
    inv_n = 1.0 / N
    dw_acc = tl.zeros([BLOCK], dtype=tl.float32)
    for row in range(pid, M, tl.num_programs(0)):
        offs = row * stride + cols
        x = tl.load(X + offs, mask=mask, other=0.).to(tl.float32)
        dy = tl.load(DY + offs, mask=mask, other=0.).to(tl.float32)
        rstd = tl.load(Rstd + row)
        x_hat = x * rstd  # masked lanes load 0, so x_hat is 0 there already
        wdy = w * dy
        c1 = tl.sum(x_hat * wdy, axis=0) * inv_n
        tl.store(DX + offs, ((wdy - x_hat * c1) * rstd).to(DX.dtype.element_ty), mask=mask)
        dw_acc += dy * x_hat
    tl.store(DW_partial + pid * N + cols, dw_acc, mask=mask)


# Launch parameters of tessera's kernels (examples/norm_kernels.hpp), for the kernels above.
def layer_norm_warps(block):  # layer_norm_options
    return 8 if min(max(block * 2 // 256, 1), 8) >= 8 else 4


def norm_bwd_programs(rows):  # norm_bwd_programs: one per 32 rows, 132 to 512, at most one per row
    return min(rows, max(132, min(rows // 32, 512)))


def norm_bwd_warps(block):  # norm_bwd_dx_options
    return 16 if block >= 8192 else 8 if block >= 1024 else 4


# ---- correctness checks (every timed kernel, once per case, before it is timed)

FAILED = []  # (impl, case) of every case that failed its check or could not run
CHUNK = 1 << 24  # elements compared at a time (float64 temporaries stay a few hundred MB)


def position(i, shape):
    if len(shape) == 2:
        return f" row {i // shape[1]} col {i % shape[1]}"
    return f" element {i}"


class Check:
    """The correctness checks of one case (one JSON line): each comparison adds a summary to the
    line's "check"; one failure makes its "ok" false and prints the first offenders to stderr as
    CHECK FAILED <impl> <case>: <output> row R col C: got G, want W (bound B)."""

    def __init__(self, impl, case):
        self.impl, self.case, self.ok, self.parts = impl, case, True, []

    def fail(self, text):
        self.ok = False
        self.parts.append("FAILED " + text)
        print(f"CHECK FAILED {self.impl} {self.case}: {text}", file=sys.stderr, flush=True)

    def close(self, what, got, want, rtol, atol=0.0, atol_rms=0.0):
        """Element by element, in float64: |got - want| <= atol + atol_rms * rms(want) + rtol * |want|;
        a NaN or an infinity never passes; rtol = atol = atol_rms = 0 asks for equality."""
        if tuple(got.shape) != tuple(want.shape):
            self.fail(f"{what}: shape {tuple(got.shape)}, the reference's {tuple(want.shape)}")
            return
        shape = tuple(want.shape)
        g, w = got.detach().reshape(-1), want.detach().reshape(-1)
        n = w.numel()
        ss = 0.0
        for s in range(0, n, CHUNK):
            ss += float(w[s:s + CHUNK].double().square().sum())
        rms = math.sqrt(ss / max(n, 1))
        floor = atol + atol_rms * rms
        bad, worst, offenders = 0, 0.0, []
        for s in range(0, n, CHUNK):
            gc, wc = g[s:s + CHUNK].double(), w[s:s + CHUNK].double()
            err = (gc - wc).abs()
            bound = floor + rtol * wc.abs()
            off = ~(err <= bound)  # NaN compares false: off
            k = int(off.sum())
            if k:
                for i in off.nonzero()[:max(0, 5 - len(offenders)), 0].tolist():
                    offenders.append((s + i, float(gc[i]), float(wc[i]), float(bound[i])))
                bad += k
            within = ~off & (bound > 0)
            if bool(within.any()):
                worst = max(worst, float((err[within] / bound[within]).max()))
        exact = rtol == 0 and atol == 0 and atol_rms == 0
        if exact:
            bound_text = "exact"
        else:
            bound_text = ("|err| <= " + (f"{atol:.3g} + " if atol > 0 or atol_rms == 0 else "")
                          + (f"{atol_rms:.3g}*rms(want) + " if atol_rms > 0 else "") + f"{rtol:.3g}*|want|")
        if bad == 0:
            self.parts.append(f"{what}: {n} elements " +
                              ("exact" if exact else f"within {bound_text}, worst err/bound {worst:.3g}"))
            return
        self.ok = False
        lines = [f"{what}{position(i, shape)}: got {gv:.8g}, want {wv:.8g} (bound {b:.3g})"
                 for i, gv, wv, b in offenders]
        for line in lines:
            print(f"CHECK FAILED {self.impl} {self.case}: {line}", file=sys.stderr, flush=True)
        self.parts.append(f"FAILED {what}: {bad} of {n} elements off ({bound_text}, rms {rms:.3g}), "
                          f"first: {lines[0]}")


def emit(name, metric, value, check=None, impl="triton", **extra):
    """One JSON line; with a check, its outcome ("ok") and summary ("check"). A case that could not
    run has value null."""
    ok_value = value is not None and math.isfinite(value)
    rec = {"impl": impl, "name": name, "metric": metric, "value": round(value, 4) if ok_value else None}
    rec.update(extra)
    if check is not None:
        rec["ok"] = check.ok
        rec["check"] = "; ".join(check.parts)
        if not check.ok:
            FAILED.append((impl, name))
    print(json.dumps(rec), flush=True)


def case(name, metric, body, impl="triton"):
    """Runs one case: body(check) launches the kernel once on poisoned outputs, checks what it wrote,
    times it and returns the metric. An exception (a compile error, a bad launch, out of memory)
    fails this case only, with the traceback on stderr; the next case still runs."""
    check = Check(impl, name)
    value = None
    try:
        value = body(check)
    except Exception as e:  # noqa: BLE001 - any failure is this case's failure
        traceback.print_exc()
        check.fail("could not run: " + " ".join(f"{type(e).__name__}: {e}".split())[:400])
    emit(name, metric, value, check, impl)


def poison(*tensors):
    """NaN everywhere, so that an element the kernel does not write fails its check."""
    for t in tensors:
        t.fill_(float("nan"))


def gbps(nbytes, fn):
    ms = triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")
    return nbytes / (ms * 1e-3) / 1e9


def run_checked(fn, outputs):
    """Poisons `outputs`, runs fn once and waits for it: what the check then reads is fn's work."""
    poison(*outputs)
    fn()
    torch.cuda.synchronize()


# Bounds, element by element (the same on tessera's side, tests/bench/bench.cpp):
#   vector add             exact
#   softmax (f32)          rtol 1e-4 (exp, sums and the division in f32: a few ulp)
#   norm outputs (f16)     rtol 1e-3 + 1e-3 * rms(want): computed in f32, rounded once to f16
#                          (at most 2^-11 relative)
#   mean, rstd (f32)       rtol 1e-4 + 1e-6
#   the tutorial's dW, dB  rtol 1e-2 + 3e-2 * rms(want): its partial sums are f16 (G rows of
#                          partials, each the f16 sum of M / G rows), so they drift by several f16
#                          ulps of the partials; tessera's algorithm sums in f32 and meets the f16 bound.
F16 = dict(rtol=1e-3, atol_rms=1e-3)
STATS = dict(rtol=1e-4, atol=1e-6)
SOFTMAX = dict(rtol=1e-4, atol=1e-12)
F16_PARTIALS = dict(rtol=1e-2, atol_rms=3e-2)


def bench_vector_add():
    for log2n in (24, 28):
        n = 1 << log2n
        x = torch.rand(n, device="cuda")
        y = torch.rand(n, device="cuda")
        out = torch.empty_like(x)
        want = x + y
        for block, warps in ((1024, 4), (4096, 8)):
            fn = lambda: add_kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block, num_warps=warps)

            def body(check):
                run_checked(fn, [out])
                check.close("out", out, want, 0.0)
                return gbps(3 * 4 * n, fn)
            case(f"vector_add_fp32_2^{log2n}_B{block}_W{warps}", "GB/s", body)
        del x, y, out, want


def bench_launch():
    n = 1024
    x = torch.rand(n, device="cuda")
    y = torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    want = x + y

    def body(check):
        add_kernel[(1,)](x, y, out, n, BLOCK=1024, num_warps=4)
        torch.cuda.synchronize()
        poison(out)  # checked after the rounds
        iters = 20000
        best = float("inf")
        for rnd in range(6):  # as bench.cpp: the best of five rounds after a warm-up round
            t0 = time.perf_counter()
            for _ in range(iters):
                add_kernel[(1,)](x, y, out, n, BLOCK=1024, num_warps=4)
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            if rnd > 0:
                best = min(best, (t1 - t0) * 1e6 / iters)
        check.close("out", out, want, 0.0)
        return best
    case("launch_cached_vector_add", "us/launch", body)


def layer_norm_refs(x, w, b, eps):
    """float64 references of the forward passes: layer norm's y, mean, rstd; RMSNorm's y, rstd."""
    x64, w64 = x.double(), w.double()
    mean = x64.mean(dim=1)
    rstd = 1 / torch.sqrt(x64.var(dim=1, unbiased=False) + eps)
    y = torch.nn.functional.layer_norm(x64, (x.shape[1],), w64, b.double(), eps)
    rms_rstd = torch.rsqrt(x64.square().mean(dim=1) + eps)
    rms_y = x64 * rms_rstd[:, None] * w64
    return y, mean, rstd, rms_y, rms_rstd


def layer_norm_weights(cols):
    """Weights and biases that differ by column (as bench.cpp's), so that a wrong column offset shows."""
    c = torch.arange(cols, device="cuda")
    return (1.0 + (c % 7) * 0.125).to(torch.float16), (0.25 - (c % 5) * 0.125).to(torch.float16)


def bench_rows():
    for rows, cols in ((32768, 4096), (8192, 8192)):
        x = torch.rand(rows, cols, device="cuda")
        out = torch.empty_like(x)
        want = torch.softmax(x.double(), dim=1)
        block = triton.next_power_of_2(cols)
        warps = 16 if block >= 8192 else 8 if block >= 2048 else 4
        fn = lambda: softmax_kernel[(rows,)](x, out, cols, cols, BLOCK=block, num_warps=warps)

        def body(check):
            run_checked(fn, [out])
            check.close("out", out, want, **SOFTMAX)
            return gbps(2 * 4 * rows * cols, fn)
        case(f"softmax_fp32_{rows}x{cols}", "GB/s", body)

        def body_torch(check):
            check.close("out", torch.softmax(x, dim=1), want, **SOFTMAX)
            return gbps(2 * 4 * rows * cols, lambda: torch.softmax(x, dim=1))
        case(f"softmax_fp32_{rows}x{cols}_torch", "GB/s", body_torch)
        del x, out, want

    rows, cols, eps = 32768, 4096, 1e-5
    x = torch.rand(rows, cols, device="cuda", dtype=torch.float16)
    w, b = layer_norm_weights(cols)
    y = torch.empty_like(x)
    mean = torch.empty(rows, device="cuda")
    rstd = torch.empty(rows, device="cuda")
    want_y, want_mean, want_rstd, want_rms_y, want_rms_rstd = layer_norm_refs(x, w, b, eps)
    nbytes = 2 * 2 * rows * cols

    def layer_norm_case(kernel, block, warps, impl):
        fn = lambda: kernel[(rows,)](x, y, w, b, mean, rstd, cols, cols, eps, BLOCK_SIZE=block, num_warps=warps)

        def body(check):
            run_checked(fn, [y, mean, rstd])
            check.close("y", y, want_y, **F16)
            check.close("mean", mean, want_mean, **STATS)
            check.close("rstd", rstd, want_rstd, **STATS)
            return gbps(nbytes, fn)
        case(f"layer_norm_fwd_fp16_{rows}x{cols}", "GB/s", body, impl)

    # Triton's tutorial 05 (three loops over the row), then tessera's single pass.
    block = min(65536 // x.element_size(), triton.next_power_of_2(cols))
    layer_norm_case(layer_norm_fwd, block, min(max(block // 256, 1), 8), "triton")
    block = triton.next_power_of_2(cols)
    layer_norm_case(layer_norm_fwd_one_pass, block, layer_norm_warps(block), "triton_same_algo")

    # RMSNorm: one pass with the row in one tile, as tessera's (the tutorials have no RMSNorm).
    fn = lambda: rms_norm_fwd[(rows,)](x, y, w, rstd, cols, cols, eps, BLOCK=triton.next_power_of_2(cols), num_warps=8)

    def body(check):
        run_checked(fn, [y, rstd])
        check.close("y", y, want_rms_y, **F16)
        check.close("rstd", rstd, want_rms_rstd, **STATS)
        return gbps(nbytes, fn)
    case(f"rms_norm_fwd_fp16_{rows}x{cols}", "GB/s", body)


def group_size_m(N):
    # The tutorial's heuristic for the number of partial dW/dB rows.
    g = 64
    if N <= 8192: g = 96
    if N <= 4096: g = 128
    if N <= 1024: g = 256
    return g


def bench_norm_bwd():
    # Bytes as examples/norm_kernels.hpp counts them (layer_norm_bwd_bytes and friends): x and dy read,
    # dx written (f16), the statistics and w read, dW (dB) written; not the partial buffers.
    eps = 1e-5
    for M, N in ((32768, 4096), (4096, 8192)):
        x = torch.rand(M, N, device="cuda", dtype=torch.float16)
        dy = (torch.rand(M, N, device="cuda", dtype=torch.float16) - 0.5)
        w = 1.0 + torch.rand(N, device="cuda", dtype=torch.float16)
        # The statistics the forward pass saves (f32), and the gradients in float64 through autograd.
        x64, dy64, w64 = x.double(), dy.double(), w.double()
        mean = x64.mean(dim=1).float()
        rstd = (1 / torch.sqrt(x64.var(dim=1, unbiased=False) + eps)).float()
        ms_rstd = torch.rsqrt(x64.square().mean(dim=1) + eps).float()
        xr, wr = x64.clone().requires_grad_(True), w64.clone().requires_grad_(True)
        br = torch.zeros(N, device="cuda", dtype=torch.float64, requires_grad=True)
        torch.nn.functional.layer_norm(xr, (N,), wr, br, eps=eps).backward(dy64)
        ln_dx, ln_dw, ln_db = xr.grad, wr.grad, br.grad
        xr, wr = x64.clone().requires_grad_(True), w64.clone().requires_grad_(True)
        # The true RMSNorm gradient: rstd depends on x too.
        (xr * torch.rsqrt(xr.pow(2).mean(-1, keepdim=True) + eps) * wr).backward(dy64)
        rms_dx, rms_dw = xr.grad, wr.grad
        del xr, wr, br, x64, dy64, w64
        dx = torch.empty_like(x)
        dw = torch.empty((N,), dtype=w.dtype, device="cuda")
        db = torch.empty((N,), dtype=w.dtype, device="cuda")
        shape = f"{M}x{N}"
        ln_bytes, rms_bytes = 6 * M * N + 8 * M + 6 * N, 6 * M * N + 4 * M + 4 * N
        grid = lambda meta: (triton.cdiv(N, meta["BLOCK_SIZE_N"]),)

        def bwd_case(name, nbytes, fn, outputs, refs, dw_bounds, impl):
            def body(check):
                run_checked(fn, outputs)
                check.close("dx", dx, refs[0], **F16)
                check.close("dw", dw, refs[1], **dw_bounds)
                if len(refs) > 2:
                    check.close("db", db, refs[2], **dw_bounds)
                return gbps(nbytes, fn)
            case(name, "GB/s", body, impl)

        # Triton's tutorial 05: one program per row, f16 partial sums in G rows under spin locks.
        BLOCK_SIZE = min(65536 // x.element_size(), triton.next_power_of_2(N))
        num_warps = min(max(BLOCK_SIZE // 256, 1), 8)
        G = group_size_m(N)
        locks = torch.zeros(2 * G, dtype=torch.int32, device="cuda")
        _dw = torch.zeros((G, N), dtype=x.dtype, device="cuda")
        _db = torch.zeros((G, N), dtype=x.dtype, device="cuda")

        def ln():
            locks.zero_()  # the counts (second half) must start at 0 on every call
            _layer_norm_bwd_dx_fused[(M,)](dx, dy, _dw, _db, x, w, mean, rstd, locks, N, N,
                                           BLOCK_SIZE_N=BLOCK_SIZE, GROUP_SIZE_M=G, num_warps=num_warps)
            _layer_norm_bwd_dwdb[grid](_dw, _db, dw, db, min(G, M), N, BLOCK_SIZE_M=32, BLOCK_SIZE_N=128, num_ctas=1)

        def rms():
            locks.zero_()
            _rms_norm_bwd_dx_fused[(M,)](dx, dy, _dw, x, w, ms_rstd, locks, N, N,
                                         BLOCK_SIZE_N=BLOCK_SIZE, GROUP_SIZE_M=G, num_warps=num_warps)
            _rms_norm_bwd_dw[grid](_dw, dw, min(G, M), N, BLOCK_SIZE_M=32, BLOCK_SIZE_N=128, num_ctas=1)

        # tessera's algorithm: P programs striding over the rows, f32 partials in registers, written
        # once to [P, N] f32 buffers, then the same column-sum kernel.
        P = norm_bwd_programs(M)
        block = triton.next_power_of_2(N)
        warps = norm_bwd_warps(block)
        dwp = torch.empty((P, N), dtype=torch.float32, device="cuda")
        dbp = torch.empty((P, N), dtype=torch.float32, device="cuda")

        def ln_same():
            layer_norm_bwd_dx_partial[(P,)](x, dy, dx, w, mean, rstd, dwp, dbp, N, M, N, BLOCK=block, num_warps=warps)
            _layer_norm_bwd_dwdb[grid](dwp, dbp, dw, db, P, N, BLOCK_SIZE_M=32, BLOCK_SIZE_N=128)

        def rms_same():
            rms_norm_bwd_dx_partial[(P,)](x, dy, dx, w, ms_rstd, dwp, N, M, N, BLOCK=block, num_warps=warps)
            _rms_norm_bwd_dw[grid](dwp, dw, P, N, BLOCK_SIZE_M=32, BLOCK_SIZE_N=128)

        # Partial buffers are poisoned too: a partial row left unwritten (or a first store that
        # accumulates) turns dW NaN.
        bwd_case(f"layer_norm_bwd_fp16_{shape}", ln_bytes, ln, [dx, dw, db, _dw, _db],
                 (ln_dx, ln_dw, ln_db), F16_PARTIALS, "triton")
        bwd_case(f"layer_norm_bwd_fp16_{shape}", ln_bytes, ln_same, [dx, dw, db, dwp, dbp],
                 (ln_dx, ln_dw, ln_db), F16, "triton_same_algo")
        bwd_case(f"rms_norm_bwd_fp16_{shape}", rms_bytes, rms, [dx, dw, _dw],
                 (rms_dx, rms_dw), F16_PARTIALS, "triton")
        bwd_case(f"rms_norm_bwd_fp16_{shape}", rms_bytes, rms_same, [dx, dw, dwp],
                 (rms_dx, rms_dw), F16, "triton_same_algo")
        del x, dy, dx, ln_dx, rms_dx, _dw, _db, dwp, dbp

    BLOCK = 4096
    for M, N in ((4096, 65536), (1024, 262144)):
        x = torch.rand(M, N, device="cuda")
        out = torch.empty_like(x)
        want = torch.softmax(x.double(), dim=1)
        fn = lambda: online_softmax_kernel[(M,)](x, out, N, N, BLOCK=BLOCK, num_warps=8)

        def body(check):
            run_checked(fn, [out])
            check.close("out", out, want, **SOFTMAX)
            return gbps(3 * 4 * M * N, fn)
        case(f"online_softmax_fp32_{M}x{N}_B{BLOCK}", "GB/s", body)
        del x, out, want


def bench_first_call(kernel, label):
    """First call in this process (context, buffers and data made, outputs poisoned, before the
    clock starts). `label` is first_call (empty TRITON_CACHE_DIR) or disk_hit (a cache filled by an
    earlier process). kernel: vector_add, layer_norm (the tutorial's), layer_norm_one_pass
    (tessera's algorithm, emitted as triton_same_algo's first_call/disk_hit_layer_norm)."""
    impl, name = "triton", kernel
    if kernel == "vector_add":
        n = 1 << 20
        x = torch.rand(n, device="cuda")
        y = torch.rand(n, device="cuda")
        out = torch.empty_like(x)
        outputs = [out]
        fn = lambda: add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024, num_warps=4)
        check_fn = lambda check: check.close("out", out, x + y, 0.0)
    elif kernel in ("layer_norm", "layer_norm_one_pass"):
        rows, cols, eps = 4096, 4096, 1e-5
        x = torch.rand(rows, cols, device="cuda", dtype=torch.float16)
        w, b = layer_norm_weights(cols)
        y = torch.empty_like(x)
        mean = torch.empty(rows, device="cuda")
        rstd = torch.empty(rows, device="cuda")
        outputs = [y, mean, rstd]
        if kernel == "layer_norm":
            jit_fn = layer_norm_fwd
            block = min(65536 // x.element_size(), triton.next_power_of_2(cols))
            warps = min(max(block // 256, 1), 8)
        else:
            impl, name, jit_fn = "triton_same_algo", "layer_norm", layer_norm_fwd_one_pass
            block = triton.next_power_of_2(cols)
            warps = layer_norm_warps(block)
        fn = lambda: jit_fn[(rows,)](x, y, w, b, mean, rstd, cols, cols, eps, BLOCK_SIZE=block, num_warps=warps)

        def check_fn(check):
            want_y, want_mean, want_rstd, _, _ = layer_norm_refs(x, w, b, eps)
            check.close("y", y, want_y, **F16)
            check.close("mean", mean, want_mean, **STATS)
            check.close("rstd", rstd, want_rstd, **STATS)
    else:
        print(f"triton_ref.py first_call: unknown kernel {kernel!r} (vector_add, layer_norm, layer_norm_one_pass)",
              file=sys.stderr)
        sys.exit(2)
    poison(*outputs)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    check = Check(impl, f"{label}_{name}")
    try:
        check_fn(check)
    except Exception as e:  # noqa: BLE001
        traceback.print_exc()
        check.fail("could not check: " + " ".join(f"{type(e).__name__}: {e}".split())[:400])
    emit(f"{label}_{name}", "ms", (t1 - t0) * 1e3, check, impl)


def same_algo_first_call(label):
    """The first call of tessera's layer-norm algorithm in Triton (layer_norm_one_pass), in a fresh
    process of its own with a Triton cache folder of its own: <TRITON_CACHE_DIR>/tessera_algo, empty
    when `label` is first_call (the run that fills it) and filled when it is disk_hit. Not the
    tutorial's folder: that one holds the compiled launcher for the same signature, which would
    make the cold call warm. Returns False when it failed."""
    parent = os.environ.get("TRITON_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".triton", "cache")
    folder = os.path.join(parent, "tessera_algo")
    os.makedirs(folder, exist_ok=True)
    sys.stdout.flush()
    rc = subprocess.run([sys.executable, os.path.abspath(__file__), "first_call", "layer_norm_one_pass", label],
                        env=dict(os.environ, TRITON_CACHE_DIR=folder)).returncode
    if rc == 0:
        return True
    if rc != EXIT_CHECK_FAILED:  # it crashed before emitting its line: emit a failed one for it
        check = Check("triton_same_algo", f"{label}_layer_norm")
        check.fail(f"the process timing layer_norm_one_pass exited {rc} (its traceback is above)")
        emit(f"{label}_layer_norm", "ms", None, check, "triton_same_algo")
    return False


EXIT_CHECK_FAILED = 3  # every case ran and was emitted, some failed their check or could not run

if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "all"
    child_failed = False
    if mode == "first_call":
        kernel = sys.argv[2] if len(sys.argv) > 2 else "vector_add"
        label = sys.argv[3] if len(sys.argv) > 3 else "first_call"
        bench_first_call(kernel, label)
        if kernel == "layer_norm":
            child_failed = not same_algo_first_call(label)
    elif mode in ("all", "basic", "rows", "norm_bwd"):
        if mode in ("all", "basic"):
            bench_vector_add()
            bench_launch()
        if mode in ("all", "rows"):
            bench_rows()
        if mode in ("all", "rows", "norm_bwd"):
            bench_norm_bwd()
    else:
        print("usage: triton_ref.py [all|basic|rows|norm_bwd] | first_call [vector_add|layer_norm|layer_norm_one_pass]"
              " [first_call|disk_hit]", file=sys.stderr)
        sys.exit(2)
    if FAILED or child_failed:
        names = ", ".join(f"{impl} {name}" for impl, name in FAILED) or "see the process above"
        print(f"triton_ref.py: case(s) FAILED their correctness check or could not run (\"ok\": false): {names}",
              file=sys.stderr)
        sys.exit(EXIT_CHECK_FAILED)
