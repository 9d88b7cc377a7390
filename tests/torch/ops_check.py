"""Correctness checks of the PyTorch custom ops in libtessera_torch.so (namespace ``tessera``).

Usage:
    python3 tests/torch/ops_check.py --lib PATH/libtessera_torch.so [--device cpu|cuda] [-v]

--device defaults to cuda when torch sees a GPU, else cpu. -v prints the full traceback of every
unexpected exception. Exit status: 0 when every check passed, 1 when any failed (or the library
could not be loaded), 2 on bad arguments.

The ops under test (torch.ops.tessera.*), each against a float32 torch reference computed from the
same inputs (upcast), then cast to the op's output dtype:
  layer_norm(x, weight, bias, eps=1e-5)     F.layer_norm over the last dim
  rms_norm(x, weight, eps=1e-6)             x * rsqrt(mean(x^2, -1) + eps) * weight, in float32
  softmax(x, dim=-1)                        torch.softmax over the last dim (only the last dim)
  cross_entropy(logits, target, ignore_index=-100)
                                            F.cross_entropy(logits.float(), target, ignore_index=...);
                                            a float32 scalar whatever the logits' dtype
  bias_gelu(x, bias)                        F.gelu(x + bias), the exact (erf) form
  matmul(a, b)                              a @ b for 2-D a [M, K], b [K, N] (any strides)
  dropout(x, p, seed)                       keep with probability 1-p, scale kept by 1/(1-p); the
                                            mask is a function of (seed, element index) alone
  attention(q, k, v, causal=False, scale=None)
                                            softmax(q @ k^T * scale [causal mask]) @ v in float32;
                                            float16 and bfloat16 only, on cpu too

Dtypes: float32 on cpu (a slow interpreter there, so the shapes are tiny); float32, float16 and
bfloat16 on cuda. For every op, dtype and shape (2-D and 3-D inputs, odd and non-power-of-two
last dims, a non-contiguous input, default and explicit scalar arguments) the script checks:
  fwd          the output's dtype and shape, and its values against the reference;
  grad[...]    each gradient after .backward(random upstream grad) against the reference's
               autograd gradient (cross_entropy: logits only; rows whose target is ignore_index
               must get exactly zero gradient).
Element-wise bound: |out - ref| <= atol * max|ref| + rtol * |ref|, and at least one subnormal step of
the output's type (see TOL and TIGHT_ATOL below).
Columns: "max err" is max|out - ref| (dropout: the largest relative error, or a z-score in sigmas
where the check is statistical); "of tol" is the largest share of its bound that an entry used.
dropout: kept values are x / (1-p) up to the dtype's rounding (3 epsilons relative) and dropped
ones are 0; the kept fraction is within 3 sigma of 1-p for p = 0.1 and 0.5 (1M elements on cuda,
4096 on cpu); the mask varies along and across rows and neighbouring elements are independent;
the same seed gives an identical output, another seed another mask; the mask is the same for
every dtype and for a 3-D input as for its 2-D view (it depends on (seed, index) only); a
non-contiguous input gives what its contiguous copy gives; p = 0 is the identity (a new tensor,
not the input); the gradient is mask * upstream / (1-p) with the forward's mask.
Errors: softmax over a dim other than the last, and a weight, bias or target of the wrong length,
raise RuntimeError.
Meta: every op on device="meta" tensors returns the right shape, dtype and device, also through
backward (each input's gradient has the input's shape and dtype).
opcheck: where torch.library.opcheck exists (torch >= 2.4, not Debian's 1.13), each op's .default
overload on two sample inputs that require grad; one row per opcheck test.
"""
import argparse
import math
import sys
import traceback
import zlib

import torch
import torch.nn.functional as F

OPS = ("layer_norm", "rms_norm", "softmax", "cross_entropy", "bias_gelu", "dropout", "matmul", "attention")

# (rtol, atol) by dtype; atol is relative to max|ref| of the compared tensor.
TOL = {
    torch.float32: (1e-4, 1e-4),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (2e-2, 2e-2),
}
# Softmax outputs and cross-entropy gradients hold many entries far below the tensor's largest one,
# each computed with a small relative error: a much smaller atol there (float16 keeps 1e-4 for its
# subnormals), so that an error in the small entries is not hidden by the large ones.
TIGHT_ATOL = {torch.float32: 1e-6, torch.float16: 1e-4, torch.bfloat16: 1e-4}

VERBOSE = False


def T():
    return torch.ops.tessera


def dname(dtype):
    return str(dtype).replace("torch.", "") if dtype is not None else "-"


def first_line(e):
    s = str(e).strip().splitlines()
    return f"{type(e).__name__}: {s[0] if s else ''}"[:160]


class Report:
    """Collects and prints one row per check: op, dtype, check, max error, ok."""

    def __init__(self):
        self.rows = []
        print(f"{'op':<14} {'dtype':<9} {'check':<44} {'max err':>10} {'of tol':>7}  ok", flush=True)
        print("-" * 94, flush=True)

    def add(self, op, dtype, check, err, ok, note="", used=None):
        if err is None:
            e = "-"
        elif isinstance(err, str):
            e = err
        else:
            e = f"{err:.3g}" if math.isfinite(err) else str(err)
        u = "-" if used is None else f"{used:.0%}" if used < 100 else ">100x"
        row = (op, dname(dtype), check, e, bool(ok), note)
        self.rows.append(row)
        line = f"{row[0]:<14} {row[1]:<9} {row[2]:<44} {row[3]:>10} {u:>7}  {'ok' if ok else 'FAIL'}"
        if note and not ok:
            line += f"  {note}"
        print(line, flush=True)

    def run(self, op, dtype, check, fn):
        """fn() returns (err, ok, note) or (err, ok, note, used), used = the largest fraction of the
        tolerance taken by an entry; an exception is a failed row."""
        used = None
        try:
            res = fn()
            err, ok, note = res[:3]
            if len(res) > 3:
                used = res[3]
        except Exception as e:  # noqa: BLE001 - every failure is a row, the script goes on
            if VERBOSE:
                traceback.print_exc()
            err, ok, note = None, False, "exception " + first_line(e)
        self.add(op, dtype, check, err, ok, note, used)
        return ok

    def failures(self):
        return [r for r in self.rows if not r[4]]


class Rand:
    """Reproducible data: drawn on the CPU from a generator seeded by the case's name."""

    def __init__(self, name, device):
        self.g = torch.Generator().manual_seed(zlib.crc32(name.encode()) & 0x7FFFFFFF)
        self.device = device

    def randn(self, shape, dtype, scale=1.0, offset=0.0):
        return (torch.randn(tuple(shape), generator=self.g) * scale + offset).to(self.device, dtype)

    def rand(self, shape):
        return torch.rand(tuple(shape), generator=self.g).to(self.device)

    def randint(self, high, shape):
        return torch.randint(0, high, tuple(shape), generator=self.g).to(self.device)

    def nonzero(self, shape, dtype):
        """Values in +-[0.5, 1.5): no zeros, so a zero in a dropout output is a dropped element."""
        mag = torch.rand(tuple(shape), generator=self.g) + 0.5
        sign = torch.randint(0, 2, tuple(shape), generator=self.g).float() * 2 - 1
        return (mag * sign).to(self.device, dtype)


def compare(out, ref, rtol, atol):
    """(max|out - ref|, ok, note, used): ok when shapes match, NaN/inf entries agree and every finite
    entry has |out - ref| <= max(atol * max|ref| + rtol * |ref|, one subnormal step of out's type);
    used = max(|out - ref| / that bound)."""
    if tuple(out.shape) != tuple(ref.shape):
        return None, False, f"shape {tuple(out.shape)}, expected {tuple(ref.shape)}"
    a = out.detach().float().reshape(-1)
    b = ref.detach().float().reshape(-1).to(a.device)
    nan_a, nan_b = torch.isnan(a), torch.isnan(b)
    if not torch.equal(nan_a, nan_b):
        return float("nan"), False, f"NaN differs at {int((nan_a != nan_b).sum())} of {b.numel()} entries"
    inf_b = torch.isinf(b)
    if not torch.equal(torch.isinf(a), inf_b) or not torch.equal(a[inf_b], b[inf_b]):
        return float("inf"), False, "infinite entries differ"
    fin = torch.isfinite(b)
    if int(fin.sum()) == 0:
        return 0.0, True, "", 0.0
    a, b = a[fin], b[fin]
    diff = (a - b).abs()
    scale = float(b.abs().max())
    allowed = atol * scale + rtol * b.abs()
    if out.dtype.is_floating_point:
        # One step of the output type's subnormals is allowed everywhere: over many classes the
        # largest cross-entropy gradient is ~4e-4 (16384 classes), and atol times it falls below
        # float16's subnormal step (5.96e-8), which one rounding can cross.
        fi = torch.finfo(out.dtype)
        allowed = allowed.clamp_min(fi.tiny * fi.eps)
    bad = diff > allowed
    err = float(diff.max())
    ratio = diff / allowed                      # 0/0 -> NaN (exact and allowed), x/0 -> inf
    ratio = ratio.masked_fill(diff == 0, 0.0)
    used = float(ratio.max())
    nbad = int(bad.sum())
    if nbad:
        i = int(torch.argmax((diff - allowed).masked_fill(~bad, -1.0)))
        return err, False, (f"{nbad}/{b.numel()} entries off (rtol {rtol:g}, atol {atol:g}*{scale:.3g}); "
                            f"worst: got {float(a[i]):.6g}, expected {float(b[i]):.6g}"), used
    return err, True, "", used


def fwd_bwd(rep, op, dtype, label, tess_fn, ref_fn, names, tensors, grad_names, rnd,
            fwd_tol, bwd_tol, out_dtype, extra=None):
    """Runs tess_fn and ref_fn (the latter on float32 copies) on the same inputs, compares the
    outputs, then backpropagates one random upstream gradient through both and compares each
    gradient named in grad_names. extra(t_in, out) -> (err, ok, note) adds a row after the grads."""
    t_in = [t.detach().clone().requires_grad_(n in grad_names) for n, t in zip(names, tensors)]
    r_in = [(t.detach().float() if t.is_floating_point() else t.detach().clone()).requires_grad_(n in grad_names)
            for n, t in zip(names, tensors)]
    state = {}

    def fwd():
        out = tess_fn(*t_in)
        ref = ref_fn(*r_in)
        state["out"], state["ref"] = out, ref
        if out.dtype != out_dtype:
            return None, False, f"output dtype {dname(out.dtype)}, expected {dname(out_dtype)}"
        if out.device.type != tensors[0].device.type:
            return None, False, f"output on {out.device}, expected {tensors[0].device}"
        return compare(out, ref.detach().to(out_dtype), *fwd_tol)

    rep.run(op, dtype, f"{label} fwd", fwd)
    if not grad_names:
        return
    if "out" not in state:
        rep.add(op, dtype, f"{label} grad", None, False, "not run: the forward raised")
        return
    bwd_exc = None
    try:
        out, ref = state["out"], state["ref"]
        g = rnd.randn(out.shape, out.dtype, scale=1.0, offset=0.25) if out.dim() else \
            torch.tensor(0.75, dtype=out.dtype, device=out.device)
        out.backward(g)
        ref.backward(g.float())
    except Exception as e:  # noqa: BLE001
        if VERBOSE:
            traceback.print_exc()
        bwd_exc = e
    for n in grad_names:
        i = names.index(n)

        def grad_check():
            if bwd_exc is not None:
                raise bwd_exc
            got, exp = t_in[i].grad, r_in[i].grad
            if got is None:
                return None, False, "no gradient reached the input"
            if got.dtype != t_in[i].dtype:
                return None, False, f"gradient dtype {dname(got.dtype)}, expected {dname(t_in[i].dtype)}"
            return compare(got, exp.to(got.dtype), *bwd_tol)

        rep.run(op, dtype, f"{label} grad[{n}]", grad_check)
    if extra is not None:
        def extra_check():
            if bwd_exc is not None:
                raise bwd_exc
            return extra[1](t_in, state["out"])

        rep.run(op, dtype, f"{label} {extra[0]}", extra_check)


def shape_str(shape):
    return "x".join(str(s) for s in shape)


def norm_shapes(device):
    if device == "cpu":
        return [(4, 96), (5, 33), (2, 3, 33), (3, 64)]  # (3, 64): a row that fills its block (EVEN)
    # (4096, 1024): more row blocks than the backward programs of bias+GELU (8 per multiprocessor),
    # so a program's loop takes several, and the dbias partials have many rows to add.
    return [(64, 1024), (37, 1000), (2, 3, 777), (16, 4096), (8, 12288), (4096, 1024)]


def noncontig(rnd, shape, dtype, **kw):
    """A [M, N] tensor that is the transpose of a contiguous [N, M] one."""
    m, n = shape
    return rnd.randn((n, m), dtype, **kw).t()


# ----------------------------------------------------------------------------------------------
# layer_norm, rms_norm, softmax, bias_gelu, cross_entropy
# ----------------------------------------------------------------------------------------------

def ref_rms_norm(x, w, eps):
    xf = x.float()
    return xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()


def check_layer_norm(rep, device, dtype):
    shapes = norm_shapes(device)
    cases = [(s, None) for s in shapes[:1]] + [(shapes[1], 1e-2)] + [(s, 1e-5) for s in shapes[2:]]
    cases.append(("noncontig", 1e-5))
    for shape, eps in cases:
        label = shape_str(shape) if shape != "noncontig" else "noncontig " + shape_str(shapes[1])
        rnd = Rand(f"layer_norm {label} {dtype}", device)
        x = noncontig(rnd, shapes[1], dtype, scale=1.5, offset=0.25) if shape == "noncontig" else \
            rnd.randn(shape, dtype, scale=1.5, offset=0.25)
        n = x.shape[-1]
        w = rnd.randn((n,), dtype, scale=0.1, offset=1.0)
        b = rnd.randn((n,), dtype, scale=0.1)
        if eps is None:
            tess = lambda x, w, b: T().layer_norm(x, w, b)  # noqa: E731 - the schema's default eps
            ref = lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)  # noqa: E731
            label += " eps=default"
        else:
            tess = lambda x, w, b, eps=eps: T().layer_norm(x, w, b, eps)  # noqa: E731
            ref = lambda x, w, b, eps=eps: F.layer_norm(x, (x.shape[-1],), w, b, eps)  # noqa: E731
            label += f" eps={eps:g}"
        fwd_bwd(rep, "layer_norm", dtype, label, tess, ref, ["x", "weight", "bias"], [x, w, b],
                ["x", "weight", "bias"], rnd, TOL[dtype], TOL[dtype], dtype)


def check_rms_norm(rep, device, dtype):
    shapes = norm_shapes(device)
    cases = [(s, None) for s in shapes[:1]] + [(shapes[1], 1e-2)] + [(s, 1e-6) for s in shapes[2:]]
    cases.append(("noncontig", 1e-6))
    for shape, eps in cases:
        label = shape_str(shape) if shape != "noncontig" else "noncontig " + shape_str(shapes[1])
        rnd = Rand(f"rms_norm {label} {dtype}", device)
        x = noncontig(rnd, shapes[1], dtype, scale=1.5, offset=0.25) if shape == "noncontig" else \
            rnd.randn(shape, dtype, scale=1.5, offset=0.25)
        w = rnd.randn((x.shape[-1],), dtype, scale=0.1, offset=1.0)
        if eps is None:
            tess = lambda x, w: T().rms_norm(x, w)  # noqa: E731 - the schema's default eps
            ref = lambda x, w: ref_rms_norm(x, w, 1e-6)  # noqa: E731
            label += " eps=default"
        else:
            tess = lambda x, w, eps=eps: T().rms_norm(x, w, eps)  # noqa: E731
            ref = lambda x, w, eps=eps: ref_rms_norm(x, w, eps)  # noqa: E731
            label += f" eps={eps:g}"
        fwd_bwd(rep, "rms_norm", dtype, label, tess, ref, ["x", "weight"], [x, w], ["x", "weight"], rnd,
                TOL[dtype], TOL[dtype], dtype)


def check_softmax(rep, device, dtype):
    shapes = norm_shapes(device)
    fwd_tol = (TOL[dtype][0], TIGHT_ATOL[dtype])
    cases = []
    for i, shape in enumerate(shapes):
        cases.append((shape, "default" if i == 0 else (-1 if i % 2 else len(shape) - 1), "plain"))
    cases.append((shapes[0], -1, "+1000"))      # large values: the row max must be subtracted
    cases.append((shapes[1], -1, "-inf"))       # masked entries (-inf, never a whole row)
    cases.append((shapes[1], -1, "noncontig"))
    for shape, dim, kind in cases:
        label = shape_str(shape)
        rnd = Rand(f"softmax {label} {dim} {kind} {dtype}", device)
        if kind == "noncontig":
            x = noncontig(rnd, shape, dtype, scale=3.0)
            label = "noncontig " + label
        else:
            x = rnd.randn(shape, dtype, scale=3.0, offset=1000.0 if kind == "+1000" else 0.0)
            if kind == "-inf":
                x = x.clone()
                x.view(-1)[::7] = float("-inf")
                label += " with -inf"
            elif kind == "+1000":
                label += " offset 1000"
        if dim == "default":
            tess = lambda x: T().softmax(x)  # noqa: E731 - the schema's default dim
            label += " dim=default"
        else:
            tess = lambda x, dim=dim: T().softmax(x, dim)  # noqa: E731
            label += f" dim={dim}"
        ref = lambda x: torch.softmax(x, -1)  # noqa: E731
        fwd_bwd(rep, "softmax", dtype, label, tess, ref, ["x"], [x], ["x"], rnd, fwd_tol, TOL[dtype], dtype)


def check_bias_gelu(rep, device, dtype):
    # (32, 64) on cpu: whole [32, 64] tiles, so both halves of the mask fold (EVEN_M, EVEN_N)
    shapes = norm_shapes(device) + ([(32, 64)] if device == "cpu" else [])
    for shape in shapes + ["noncontig"]:
        label = shape_str(shape) if shape != "noncontig" else "noncontig " + shape_str(shapes[1])
        rnd = Rand(f"bias_gelu {label} {dtype}", device)
        x = noncontig(rnd, shapes[1], dtype, scale=1.5) if shape == "noncontig" else rnd.randn(shape, dtype, scale=1.5)
        b = rnd.randn((x.shape[-1],), dtype, scale=0.5)
        tess = lambda x, b: T().bias_gelu(x, b)  # noqa: E731
        ref = lambda x, b: F.gelu(x + b)  # noqa: E731
        fwd_bwd(rep, "bias_gelu", dtype, label, tess, ref, ["x", "bias"], [x, b], ["x", "bias"], rnd,
                TOL[dtype], TOL[dtype], dtype)


def matmul_shapes(device):
    """(M, K, N): multiples of the tiles and not, small K, a K below the 16 of a tensor-core step;
    on the GPU, a forward (192x3000 @ 3000x160) and a dB (4096x64 @ 64x96: Aᵀ·dC over K = 4096) of
    few tiles over a long K, which split K."""
    if device == "cpu":
        return [(32, 48, 40), (33, 17, 65)]
    return [(256, 512, 384), (1000, 300, 777), (129, 64, 4100), (64, 8, 48), (192, 3000, 160), (4096, 64, 96)]


def check_matmul(rep, device, dtype):
    for m, k, n in matmul_shapes(device):
        for layout in ("nn", "tn", "nt"):
            label = f"{m}x{k} @ {k}x{n} {layout}"
            rnd = Rand(f"matmul {label} {dtype}", device)
            # "t": the operand is the transposed view of a contiguous tensor (column-major).
            a = noncontig(rnd, (m, k), dtype) if layout[0] == "t" else rnd.randn((m, k), dtype)
            b = noncontig(rnd, (k, n), dtype) if layout[1] == "t" else rnd.randn((k, n), dtype)
            tess = lambda a, b: T().matmul(a, b)  # noqa: E731
            ref = lambda a, b: a @ b  # noqa: E731
            # Sums of k products: the error bound grows with sqrt(k) for f16/bf16 rounding of the output.
            fwd_bwd(rep, "matmul", dtype, label, tess, ref, ["a", "b"], [a, b], ["a", "b"], rnd,
                    TOL[dtype], TOL[dtype], dtype)


def ref_attention(q, k, v, causal, scale):
    s = (q @ k.transpose(-1, -2)) * scale
    if causal:
        n = q.shape[-2]
        s = s.masked_fill(~torch.ones(n, n, dtype=torch.bool, device=q.device).tril(), float("-inf"))
    return torch.softmax(s, -1) @ v


def check_attention(rep, device, dtype):
    """float16 and bfloat16 only (the kernels' dots take 16-bit operands), on the CPU too."""
    # ([..., n, head_dim], causal, scale or None for 1/sqrt(head_dim))
    if device == "cpu":
        # a negative scale: the forward's max of the scaled scores (no SCALE_POSITIVE)
        cases = [((1, 2, 40, 16), False, None), ((2, 1, 33, 32), True, 0.3), ((1, 1, 64, 16), False, None),
                 ((1, 2, 40, 16), True, -0.25)]
    else:
        # n = 256: every block whole (the kernels' EVEN path), beside lengths no block divides
        cases = [((2, 4, 300, 64), False, None), ((2, 4, 300, 64), True, None), ((1, 2, 257, 128), True, 0.1),
                 ((3, 130, 32), False, None), ((1, 2, 256, 128), False, None), ((1, 2, 256, 64), True, None),
                 ((1, 2, 300, 64), False, -0.2)]
    for shape, causal, scale in cases:
        label = f"{shape_str(shape)}" + (" causal" if causal else "") + ("" if scale is None else f" scale={scale}")
        rnd = Rand(f"attention {label} {dtype}", device)
        q, k, v = (rnd.randn(shape, dtype) for _ in range(3))
        sc = scale if scale is not None else shape[-1] ** -0.5
        if scale is None:
            tess = lambda q, k, v: T().attention(q, k, v, causal)  # noqa: E731 - the schema's default scale
        else:
            tess = lambda q, k, v: T().attention(q, k, v, causal, scale)  # noqa: E731
        ref = lambda q, k, v: ref_attention(q, k, v, causal, sc)  # noqa: E731
        fwd_bwd(rep, "attention", dtype, label, tess, ref, ["q", "k", "v"], [q, k, v], ["q", "k", "v"], rnd,
                TOL[dtype], TOL[dtype], dtype)


def check_cross_entropy(rep, device, dtype):
    # (M, V, ignore_index or None for the schema's default, label). V = 16384 is two whole column
    # blocks of 8192: the forward's unmasked (EVEN) loop, whose last prefetch reloads the last block.
    if device == "cpu":
        cases = [(4, 96, None, ""), (5, 33, -100, ""), (6, 33, 3, ""), (3, 64, -100, ""), (3, 16384, -100, "")]
    else:
        cases = [(64, 1000, None, ""), (37, 4096, -100, ""), (64, 50257, -100, " large vocab"),
                 (16, 32000, 3, ""), (24, 16384, 5, ""),
                 # gradients near float16's subnormals (the largest ~4e-4): the one-step floor of compare()
                 (2101, 16384, -100, " many rows")]
    for m, v, ii, extra_label in cases:
        label = f"{m}x{v}" + (" ignore=default" if ii is None else f" ignore={ii}") + extra_label
        rnd = Rand(f"cross_entropy {label} {dtype}", device)
        logits = rnd.randn((m, v), dtype, scale=2.0)
        target = rnd.randint(v, (m,))
        ignore = -100 if ii is None else ii
        target[1] = ignore               # some ignored rows, never all of them
        target[m // 2] = ignore
        if ii is None:
            tess = lambda lg, t: T().cross_entropy(lg, t)  # noqa: E731 - the schema's default ignore_index
        else:
            tess = lambda lg, t, ii=ii: T().cross_entropy(lg, t, ii)  # noqa: E731
        ref = lambda lg, t, ignore=ignore: F.cross_entropy(lg, t, ignore_index=ignore)  # noqa: E731

        def ignored_rows_zero(t_in, out, ignore=ignore):
            g = t_in[0].grad
            rows = t_in[1] == ignore
            nz = int((g[rows] != 0).sum())
            return float(g[rows].float().abs().max()), nz == 0, f"{nz} nonzero gradient entries in ignored rows"

        fwd_bwd(rep, "cross_entropy", dtype, label, tess, ref, ["logits", "target"], [logits, target], ["logits"],
                rnd, TOL[dtype], (TOL[dtype][0], TIGHT_ATOL[dtype]), torch.float32,
                extra=("ignored rows: zero grad", ignored_rows_zero))


def check_cross_entropy_mean(rep, device):
    """The forward's reduction (tessera::cross_entropy_mean, one program looping over blocks of
    4096 rows) against torch's sum over the counted rows: 9000 rows take three steps, the last
    partial; a single row; every row ignored gives NaN (0 / 0), as F.cross_entropy's mean; past
    65536 rows the op reduces with torch's ops instead."""
    rnd = Rand("cross_entropy_mean", device)
    for rows, ignored in [(9000, 0.1), (1, 0.0), (7, 1.0), (65537, 0.1)]:
        losses = rnd.randn((rows,), torch.float32).abs()
        target = rnd.randint(50, (rows,))
        target[rnd.rand((rows,)) < ignored] = -100
        losses[target == -100] = 0  # as cross_entropy_fwd leaves them

        def check(losses=losses, target=target):
            mean, count = torch.ops.tessera.cross_entropy_mean(losses, target, -100)
            want_count = (target != -100).sum().float()
            want = losses.double().sum() / want_count.double()
            err, ok, note = compare(count, want_count, 0.0, 0.0)[:3]
            if not ok:
                return err, ok, "count: " + note
            return compare(mean, want.float(), 2e-6, 0.0)  # an f32 sum of n terms: about log2(n) ulps

        rep.run("cross_entropy", torch.float32, f"mean over {rows} rows, {ignored:.0%} ignored", check)


# ----------------------------------------------------------------------------------------------
# dropout
# ----------------------------------------------------------------------------------------------

def kept_values(x, y, p):
    """Every nonzero of y equals x / (1-p) up to the dtype's rounding; (largest relative error, ok,
    note, used). Zeros are the dropped elements (x has none)."""
    if tuple(y.shape) != tuple(x.shape) or y.dtype != x.dtype:
        return None, False, f"output {tuple(y.shape)} {dname(y.dtype)}, expected {tuple(x.shape)} {dname(x.dtype)}"
    yf = y.detach().float()
    exp = (x.detach().float() / (1.0 - p)).to(x.dtype).float()
    kept = yf != 0
    if not bool(torch.isfinite(yf).all()):
        return float("nan"), False, "non-finite outputs"
    rel = ((yf - exp).abs() / exp.abs()).masked_fill(~kept, 0.0)
    err = float(rel.max())
    tol = 3 * torch.finfo(x.dtype).eps
    nbad = int((rel > tol).sum())
    return err, nbad == 0, f"{nbad} kept values differ from x/(1-p) by more than {tol:.2g} relative", err / tol


def z_score(count, n, q):
    """|count/n - q| in binomial standard deviations."""
    sigma = math.sqrt(q * (1 - q) / n)
    return abs(count / n - q) / sigma


def check_dropout(rep, device, dtype, masks_f32):
    shape = (1024, 1024) if device == "cuda" else (8, 512)
    n3 = 777 if device == "cuda" else 33
    seed = 1234
    rnd = Rand(f"dropout {shape} {dtype}", device)
    x = rnd.nonzero(shape, dtype)   # no zeros: a zero output is a dropped element
    op = "dropout"
    for p in (0.1, 0.5):
        tag = f"p={p:g} {shape_str(shape)}"
        st = {}

        def fwd(p=p, st=st):
            y = T().dropout(x, p, seed)
            st["y"] = y
            return kept_values(x, y, p)

        if not rep.run(op, dtype, f"{tag} kept = x/(1-p), dropped = 0", fwd) and "y" not in st:
            continue
        y = st["y"]
        mask = y != 0
        n = mask.numel()

        def frac(p=p, mask=mask, n=n):
            z = z_score(int(mask.sum()), n, 1 - p)
            return z, z <= 3.0, f"kept {int(mask.sum())}/{n}, expected {1 - p:g} within 3 sigma", z / 3.0

        rep.run(op, dtype, f"{tag} kept fraction (z, sigmas)", frac)

        def varies(mask=mask):
            along = bool((mask[:, 1:] != mask[:, :1]).any(dim=1).all())
            across = bool((mask[1:] != mask[:1]).any(dim=1).all())
            return None, along and across, f"mask constant along a row: {not along}; a row repeats row 0: {not across}"

        rep.run(op, dtype, f"{tag} mask varies along/across rows", varies)

        def neighbours(p=p, mask=mask):
            flat = mask.reshape(-1)
            pairs = flat[0::2] == flat[1::2]          # disjoint pairs: binomial
            q = p * p + (1 - p) * (1 - p)
            z = z_score(int(pairs.sum()), pairs.numel(), q)
            return z, z <= 4.0, f"neighbours agree {int(pairs.sum())}/{pairs.numel()}, expected {q:g} within 4 sigma", z / 4.0

        rep.run(op, dtype, f"{tag} neighbours independent (z)", neighbours)

        def same_seed(p=p, y=y):
            y2 = T().dropout(x, p, seed)
            return None, torch.equal(y2, y), "a second call with the same seed differs"

        rep.run(op, dtype, f"{tag} same seed: identical", same_seed)

        def other_seed(p=p, mask=mask, n=n):
            m2 = T().dropout(x, p, seed + 1) != 0
            d = int((m2 != mask).sum())
            q = 2 * p * (1 - p)
            z = z_score(d, n, q)
            return z, d > 0 and z <= 4.0, f"{d}/{n} mask entries differ, expected {q:g} (independent masks) within 4 sigma", z / 4.0

        rep.run(op, dtype, f"{tag} other seed: other mask (z)", other_seed)

        if dtype == torch.float32:
            masks_f32[p] = mask
        elif p in masks_f32:
            rep.run(op, dtype, f"{tag} mask = float32's mask",
                    lambda mask=mask, p=p: (None, torch.equal(mask, masks_f32[p].to(mask.device)),
                                            f"{int((mask != masks_f32[p]).sum())} entries differ"))

        def grad(p=p, y=y):
            xg = x.detach().clone().requires_grad_(True)
            yg = T().dropout(xg, p, seed)
            g = rnd.nonzero(shape, dtype)
            yg.backward(g)
            if xg.grad is None:
                return None, False, "no gradient reached x"
            if xg.grad.dtype != dtype:
                return None, False, f"gradient dtype {dname(xg.grad.dtype)}"
            if not torch.equal(yg.detach(), y):
                return None, False, "the forward under autograd differs from the one without"
            exp = torch.where(yg.detach() != 0, g.float() / (1.0 - p), torch.zeros_like(g, dtype=torch.float32))
            return compare(xg.grad, exp.to(dtype), 3 * torch.finfo(dtype).eps, 0.0)

        rep.run(op, dtype, f"{tag} grad = mask*dy/(1-p)", grad)

    def identity():
        y = T().dropout(x, 0.0, seed)
        if y.data_ptr() == x.data_ptr():
            return None, False, "p=0 returned the input's storage (the schema declares no alias)"
        return None, torch.equal(y, x), "p=0 changed the input"

    rep.run(op, dtype, "p=0 identity, a new tensor", identity)

    x3 = rnd.nonzero((2, 3, n3), dtype)

    def three_d():
        y3 = T().dropout(x3, 0.5, seed)
        err, ok, note, used = kept_values(x3, y3, 0.5)
        if not ok:
            return err, ok, note, used
        y2 = T().dropout(x3.reshape(6, n3), 0.5, seed)
        same = torch.equal((y3 != 0).reshape(6, n3), y2 != 0)
        return err, same, "the 3-D input's mask differs from its [6, N] view's", used

    rep.run(op, dtype, f"2x3x{n3} p=0.5 values; mask = 2-D view's", three_d)

    def three_d_grad():
        xg = x3.detach().clone().requires_grad_(True)
        yg = T().dropout(xg, 0.5, seed)
        g = rnd.nonzero(x3.shape, dtype)
        yg.backward(g)
        if xg.grad is None or xg.grad.dtype != dtype:
            return None, False, "no gradient of x's dtype"
        exp = torch.where(yg.detach() != 0, g.float() * 2.0, torch.zeros_like(g, dtype=torch.float32))
        return compare(xg.grad, exp.to(dtype), 3 * torch.finfo(dtype).eps, 0.0)

    rep.run(op, dtype, f"2x3x{n3} p=0.5 grad = mask*dy/(1-p)", three_d_grad)

    def non_contiguous():
        xt = rnd.nonzero((n3, 6), dtype).t()
        y = T().dropout(xt, 0.5, seed)
        yc = T().dropout(xt.contiguous(), 0.5, seed)
        return None, torch.equal(y, yc), "a non-contiguous input gives another result than its contiguous copy"

    rep.run(op, dtype, f"noncontig 6x{n3}: = contiguous copy's", non_contiguous)


# ----------------------------------------------------------------------------------------------
# errors, meta, opcheck
# ----------------------------------------------------------------------------------------------

def expect_runtime_error(fn):
    try:
        fn()
    except RuntimeError:
        return None, True, ""
    except Exception as e:  # noqa: BLE001
        return None, False, f"raised {first_line(e)}, expected RuntimeError"
    return None, False, "no error raised"


def check_errors(rep, device):
    dt = torch.float32
    rnd = Rand("errors", device)
    x2 = rnd.randn((4, 33), dt)
    x3 = rnd.randn((2, 3, 33), dt)
    w = rnd.randn((33,), dt)
    rep.run("softmax", dt, "error: dim=0 of a 2-D input", lambda: expect_runtime_error(lambda: T().softmax(x2, 0)))
    rep.run("softmax", dt, "error: dim=1 of a 3-D input", lambda: expect_runtime_error(lambda: T().softmax(x3, 1)))
    rep.run("softmax", dt, "dim=1 of a 2-D input = dim=-1",
            lambda: (None, torch.equal(T().softmax(x2, 1), T().softmax(x2, -1)), "results differ"))
    rep.run("layer_norm", dt, "error: weight of length N-1",
            lambda: expect_runtime_error(lambda: T().layer_norm(x2, w[:-1], w, 1e-5)))
    rep.run("layer_norm", dt, "error: bias of length N-1",
            lambda: expect_runtime_error(lambda: T().layer_norm(x2, w, w[:-1], 1e-5)))
    rep.run("rms_norm", dt, "error: weight of length N-1",
            lambda: expect_runtime_error(lambda: T().rms_norm(x2, w[:-1], 1e-6)))
    rep.run("bias_gelu", dt, "error: bias of length N-1",
            lambda: expect_runtime_error(lambda: T().bias_gelu(x2, w[:-1])))
    rep.run("matmul", dt, "error: a's columns differ from b's rows",
            lambda: expect_runtime_error(lambda: T().matmul(x2, x2)))
    rep.run("matmul", dt, "error: a 3-D operand",
            lambda: expect_runtime_error(lambda: T().matmul(x3, x2.t())))
    rep.run("matmul", dt, "error: operands of two dtypes",
            lambda: expect_runtime_error(lambda: T().matmul(x2, x2.t().to(torch.float16))))
    h = rnd.randn((1, 2, 8, 16), torch.float16)
    rep.run("attention", torch.float16, "error: float32 q",
            lambda: expect_runtime_error(lambda: T().attention(h.float(), h.float(), h.float())))
    h24 = rnd.randn((1, 2, 8, 24), torch.float16)
    rep.run("attention", torch.float16, "error: head_dim 24",
            lambda: expect_runtime_error(lambda: T().attention(h24, h24, h24)))
    rep.run("attention", torch.float16, "error: k of another sequence length",
            lambda: expect_runtime_error(lambda: T().attention(h, h[:, :, :4], h)))
    rep.run("cross_entropy", dt, "error: target of length M-1",
            lambda: expect_runtime_error(lambda: T().cross_entropy(x2, rnd.randint(33, (3,)), -100)))


def meta_cases(dtype):
    """(op, args builder, names of the float args that get gradients, expected output shape, dtype)."""
    def m(*shape, dt=dtype):
        return torch.empty(shape, device="meta", dtype=dt)
    return [
        ("layer_norm", lambda: [m(2, 3, 33), m(33), m(33), 1e-5], [0, 1, 2], (2, 3, 33), dtype),
        ("rms_norm", lambda: [m(2, 3, 33), m(33), 1e-6], [0, 1], (2, 3, 33), dtype),
        ("softmax", lambda: [m(2, 3, 33), -1], [0], (2, 3, 33), dtype),
        ("cross_entropy", lambda: [m(5, 33), m(5, dt=torch.int64), -100], [0], (), torch.float32),
        ("bias_gelu", lambda: [m(2, 3, 33), m(33)], [0, 1], (2, 3, 33), dtype),
        ("dropout", lambda: [m(2, 3, 33), 0.1, 1234], [0], (2, 3, 33), dtype),
        ("matmul", lambda: [m(5, 33), m(33, 7)], [0, 1], (5, 7), dtype),
    ] + ([] if dtype == torch.float32 else
         [("attention", lambda: [m(2, 3, 40, 32), m(2, 3, 40, 32), m(2, 3, 40, 32), True], [0, 1, 2], (2, 3, 40, 32),
           dtype)])


def check_meta(rep, dtype):
    for name, build, grad_idx, shape, out_dtype in meta_cases(dtype):
        def fwd(name=name, build=build, shape=shape, out_dtype=out_dtype):
            y = getattr(T(), name)(*build())
            ok = y.device.type == "meta" and tuple(y.shape) == shape and y.dtype == out_dtype
            return None, ok, f"got {y.device.type} {tuple(y.shape)} {dname(y.dtype)}, expected meta {shape} {dname(out_dtype)}"

        rep.run(name, dtype, "meta: output shape/dtype", fwd)

        def bwd(name=name, build=build, grad_idx=grad_idx):
            args = build()
            for i in grad_idx:
                args[i] = args[i].requires_grad_(True)
            y = getattr(T(), name)(*args)
            y.backward(torch.empty_like(y))
            bad = [i for i in grad_idx
                   if args[i].grad is None or args[i].grad.shape != args[i].shape or args[i].grad.dtype != args[i].dtype
                   or args[i].grad.device.type != "meta"]
            return None, not bad, f"arguments {bad} got no meta gradient of their shape and dtype"

        rep.run(name, dtype, "meta: backward grads shape/dtype", bwd)


def opcheck_samples(device):
    """Two samples per op; float32, and on cuda the second one float16; float args require grad."""
    dt2 = torch.float16 if device == "cuda" else torch.float32
    rnd = Rand("opcheck", device)

    def r(shape, dt, grad=True, **kw):
        return rnd.randn(shape, dt, **kw).requires_grad_(grad)

    t1 = rnd.randint(33, (4,))
    t1[1] = -100
    t2 = rnd.randint(33, (6,))
    t2[0] = 3
    f32 = torch.float32
    return {
        "layer_norm": [(r((4, 96), f32), r((96,), f32), r((96,), f32), 1e-5),
                       (r((2, 3, 33), dt2), r((33,), dt2), r((33,), dt2), 1e-3)],
        "rms_norm": [(r((4, 96), f32), r((96,), f32), 1e-6), (r((2, 3, 33), dt2), r((33,), dt2), 1e-3)],
        "softmax": [(r((4, 96), f32), -1), (r((2, 3, 33), dt2), 2)],
        "cross_entropy": [(r((4, 33), f32), t1, -100), (r((6, 33), dt2), t2, 3)],
        "bias_gelu": [(r((4, 96), f32), r((96,), f32)), (r((2, 3, 33), dt2), r((33,), dt2))],
        "dropout": [(r((4, 96), f32), 0.1, 1234), (r((2, 3, 33), dt2), 0.5, 7)],
        "matmul": [(r((32, 48), f32), r((48, 40), f32)), (r((33, 17), dt2), r((17, 65), dt2))],
        "attention": [(r((1, 2, 40, 16), torch.float16), r((1, 2, 40, 16), torch.float16),
                       r((1, 2, 40, 16), torch.float16), True),
                      (r((2, 33, 32), torch.bfloat16), r((2, 33, 32), torch.bfloat16), r((2, 33, 32), torch.bfloat16),
                       False, 0.2)],
    }


def check_opcheck(rep, device):
    if not hasattr(torch.library, "opcheck"):
        print(f"opcheck: skipped, torch {torch.__version__} has no torch.library.opcheck", flush=True)
        return
    for name, samples in opcheck_samples(device).items():
        for k, args in enumerate(samples):
            dt = args[0].dtype
            try:
                res = torch.library.opcheck(getattr(T(), name).default, args, raise_exception=False)
            except Exception as e:  # noqa: BLE001
                if VERBOSE:
                    traceback.print_exc()
                rep.add(name, dt, f"opcheck[{k}]", None, False, "exception " + first_line(e))
                continue
            for test, result in res.items():
                ok = isinstance(result, str) and result == "SUCCESS"
                note = "" if ok else first_line(result) if isinstance(result, BaseException) else str(result)[:160]
                rep.add(name, dt, f"opcheck[{k}] {test}", None, ok, note)


# ----------------------------------------------------------------------------------------------

def main(argv=None):
    global VERBOSE
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True, help="path of libtessera_torch.so")
    ap.add_argument("--device", choices=["cpu", "cuda"], default=None,
                    help="default: cuda when available, else cpu")
    ap.add_argument("-v", "--verbose", action="store_true", help="print tracebacks of unexpected exceptions")
    args = ap.parse_args(argv)
    VERBOSE = args.verbose
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        print("ops_check: --device cuda, but torch sees no GPU", flush=True)
        return 1
    try:
        torch.ops.load_library(args.lib)
    except Exception as e:  # noqa: BLE001
        print(f"ops_check: cannot load {args.lib}: {first_line(e)}", flush=True)
        return 1
    missing = [n for n in OPS if not _has_op(n)]
    if missing:
        print(f"ops_check: {args.lib} registers no tessera::{', tessera::'.join(missing)}", flush=True)
        return 1
    torch.manual_seed(0)
    where = torch.cuda.get_device_name() if device == "cuda" else "cpu"
    print(f"ops_check: torch {torch.__version__}, device {device} ({where}), lib {args.lib}", flush=True)
    dtypes = [torch.float32] if device == "cpu" else [torch.float32, torch.float16, torch.bfloat16]

    rep = Report()
    masks_f32 = {}
    for dtype in dtypes:
        check_layer_norm(rep, device, dtype)
        check_rms_norm(rep, device, dtype)
        check_softmax(rep, device, dtype)
        check_cross_entropy(rep, device, dtype)
        check_bias_gelu(rep, device, dtype)
        check_dropout(rep, device, dtype, masks_f32)
        check_matmul(rep, device, dtype)
    check_cross_entropy_mean(rep, device)
    for dtype in (torch.float16, torch.bfloat16):
        check_attention(rep, device, dtype)
    check_errors(rep, device)
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        check_meta(rep, dtype)
    check_opcheck(rep, device)

    fails = rep.failures()
    print("-" * 94, flush=True)
    print(f"ops_check: {len(rep.rows)} checks, {len(fails)} failed", flush=True)
    for r in fails:
        print(f"  FAIL {r[0]} {r[1]} {r[2]}: {r[5] or 'max err ' + r[3]}", flush=True)
    return 1 if fails else 0


def _has_op(name):
    try:
        getattr(torch.ops.tessera, name)
        return True
    except (AttributeError, RuntimeError):
        return False


if __name__ == "__main__":
    sys.exit(main())
