"""Memory bandwidth of tessera's PyTorch ops (libtessera_torch.so) against torch eager and torch.compile.

Usage:
    python3 tests/bench/torch_ops_bench.py --lib PATH/libtessera_torch.so [--quick]

CUDA only (float16 throughout). It takes a few minutes on an H200, most of them torch.compile's
first calls (six functions, forward and backward, each compiled once; dynamo's cache limits are
raised so that nothing is evicted). For each op, three implementations of the same math are timed:
  tessera   torch.ops.tessera.<op>
  eager     layer_norm: F.layer_norm; rms_norm: F.rms_norm where torch has it, else
            (x.float() * rsqrt(mean(x.float()^2, -1) + eps) * w.float()).to(x.dtype);
            softmax: torch.softmax(x, -1); cross_entropy: F.cross_entropy(logits, target) (it
            upcasts internally); bias_gelu: F.gelu(x + bias); dropout: F.dropout(x, 0.1, training=True)
  compile   torch.compile(eager function), default mode, compiled once (the first calls, whose
            wall time is printed, are the warm-up), then timed
Shapes: x [32768, 4096] (weights/bias [4096]); cross_entropy logits [8192, 32768] with int64
targets. --quick: x [8192, 2048], logits [2048, 8192], shorter timing budgets.

Passes: "fwd" times the forward alone; "fwd+bwd" times the forward and torch.autograd.grad of every
input that has a gradient (x, weight, bias / logits) with a fixed random upstream gradient
(cross_entropy: a scalar 1); "bwd" = (fwd+bwd) - fwd. The inputs require grad in every pass, so
the forward is the training forward (it saves what its backward needs), the same for the three.
Timing: triton.testing.do_bench (median; warmup 25 ms, rep 100 ms; L2 flushed between calls)
when triton imports, else CUDA events (10 warm-up calls, median of 50, L2 flushed between calls).

GB/s counts the minimum traffic, in bytes of float16 (2) unless said:
  layer_norm, rms_norm  fwd: read x, write y, read the weights; bwd: read x, dy, write dx, read
                        the weights, write their gradients (mean/rstd rows are ignored)
  softmax               fwd: read x, write y; bwd: read y, dy, write dx
  cross_entropy         fwd: read logits (+ int64 targets); bwd: read logits, write dlogits
  bias_gelu             fwd: read x, bias, write y; bwd: read x, dy, bias, write dx, dbias
  dropout               fwd: read x, write y; bwd: read dy, write dx
  copy                  y.copy_(x) of the x shape, 2 * size bytes: the ceiling
fwd+bwd GB/s counts both passes' bytes over the fwd+bwd time.

Before timing, each tessera op's output and gradients are compared once with eager's (float16
tolerances: |t - e| <= 1e-3 * max|e| + 1e-2 * |e| element-wise); dropout, whose mask differs from
torch's, is checked on its own terms instead (kept fraction within 4 sigma of 0.9, kept values
x / 0.9, gradient mask * dy / 0.9). A mismatch is marked in the table.

Every implementation runs in its own try/except: one that fails prints `error: ...` in its cells
and the script goes on. Exit status 1 when any tessera cell errored or any tessera check failed
(0 otherwise; 2: no GPU or bad arguments). --device cpu only smoke-tests this script itself (tiny
shapes, a wall-clock timer; the numbers mean nothing).
"""
import argparse
import inspect
import math
import os
import statistics
import sys
import time
import traceback

os.environ.setdefault("PYTHONUNBUFFERED", "1")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

try:
    import triton  # noqa: E402
    import triton.testing  # noqa: E402
except Exception:  # noqa: BLE001 - triton is optional
    triton = None

EPS_LN = 1e-5
EPS_RMS = 1e-6
P_DROP = 0.1
SEED = 1234
IMPLS = ("tessera", "eager", "compile")


def say(*a):
    print(*a, flush=True)


def short(e, n=200):
    s = str(e).strip().splitlines()
    return f"{type(e).__name__}: {s[0] if s else ''}"[:n]


# --- the functions timed (each its own def: torch.compile caches per code object) ---------------

def tess_layer_norm(x, w, b):
    return torch.ops.tessera.layer_norm(x, w, b, EPS_LN)


def eager_layer_norm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b, EPS_LN)


def tess_rms_norm(x, w):
    return torch.ops.tessera.rms_norm(x, w, EPS_RMS)


if hasattr(F, "rms_norm"):
    def eager_rms_norm(x, w):
        return F.rms_norm(x, (x.shape[-1],), w, EPS_RMS)
else:
    def eager_rms_norm(x, w):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS_RMS) * w.float()).to(x.dtype)


def tess_softmax(x):
    return torch.ops.tessera.softmax(x, -1)


def eager_softmax(x):
    return torch.softmax(x, -1)


def tess_cross_entropy(logits, target):
    return torch.ops.tessera.cross_entropy(logits, target, -100)


def eager_cross_entropy(logits, target):
    return F.cross_entropy(logits, target)


def tess_bias_gelu(x, b):
    return torch.ops.tessera.bias_gelu(x, b)


def eager_bias_gelu(x, b):
    return F.gelu(x + b)


def tess_dropout(x):
    return torch.ops.tessera.dropout(x, P_DROP, SEED)


def eager_dropout(x):
    return F.dropout(x, p=P_DROP, training=True)


# --- the cases ----------------------------------------------------------------------------------

class Case:
    def __init__(self, name, tess, eager, make, grad_idx, fwd_bytes, bwd_bytes, shape_text):
        self.name, self.tess, self.eager, self.make = name, tess, eager, make
        self.grad_idx, self.fwd_bytes, self.bwd_bytes, self.shape_text = grad_idx, fwd_bytes, bwd_bytes, shape_text


def cases(cfg, dev):
    M, N, CM, CV, dt = cfg["M"], cfg["N"], cfg["CE_M"], cfg["CE_V"], cfg["dtype"]
    h = torch.empty((), dtype=dt).element_size()   # 2: float16
    g = torch.Generator(device=dev).manual_seed(0)
    tn = {torch.float16: "f16", torch.float32: "f32"}.get(dt, str(dt))

    def randn(*shape, scale=1.0, offset=0.0):
        return (torch.randn(shape, generator=g, device=dev, dtype=torch.float32) * scale + offset).to(dt)

    def x_():
        return randn(M, N, scale=1.5, offset=0.25)

    def nonzero_x():
        x = randn(M, N)
        return torch.where(x == 0, torch.ones_like(x), x)   # a zero output then means "dropped"

    mn = M * N
    return [
        Case("layer_norm", tess_layer_norm, eager_layer_norm,
             lambda: [x_(), randn(N, scale=0.1, offset=1.0), randn(N, scale=0.1)], [0, 1, 2],
             2 * mn * h + 2 * N * h, 3 * mn * h + 3 * N * h, f"x [{M}, {N}] {tn}"),
        Case("rms_norm", tess_rms_norm, eager_rms_norm,
             lambda: [x_(), randn(N, scale=0.1, offset=1.0)], [0, 1],
             2 * mn * h + N * h, 3 * mn * h + 2 * N * h, f"x [{M}, {N}] {tn}"),
        Case("softmax", tess_softmax, eager_softmax,
             lambda: [randn(M, N, scale=3.0)], [0],
             2 * mn * h, 3 * mn * h, f"x [{M}, {N}] {tn}"),
        Case("cross_entropy", tess_cross_entropy, eager_cross_entropy,
             lambda: [randn(CM, CV, scale=2.0), torch.randint(0, CV, (CM,), generator=g, device=dev)], [0],
             CM * CV * h + CM * 8, 2 * CM * CV * h + CM * 8, f"logits [{CM}, {CV}] {tn}, int64 targets"),
        Case("bias_gelu", tess_bias_gelu, eager_bias_gelu,
             lambda: [randn(M, N, scale=1.5), randn(N, scale=0.5)], [0, 1],
             2 * mn * h + N * h, 3 * mn * h + 2 * N * h, f"x [{M}, {N}] {tn}"),
        Case("dropout", tess_dropout, eager_dropout,
             lambda: [nonzero_x()], [0],
             2 * mn * h, 2 * mn * h, f"x [{M}, {N}] {tn}, p={P_DROP}"),
    ]


# --- timing -------------------------------------------------------------------------------------

def make_timer(cfg, dev):
    """fn -> milliseconds per call, and a description."""
    if dev == "cpu":
        def wall(fn):
            fn()
            ts = []
            for _ in range(cfg["events_n"]):
                t0 = time.perf_counter()
                fn()
                ts.append((time.perf_counter() - t0) * 1e3)
            return statistics.median(ts)
        return wall, f"wall clock, median of {cfg['events_n']} (cpu smoke test)"
    if triton is not None:
        kw = {"warmup": cfg["warmup"], "rep": cfg["rep"]}
        if "return_mode" in inspect.signature(triton.testing.do_bench).parameters:
            kw["return_mode"] = "median"

        def tb(fn):
            r = triton.testing.do_bench(fn, **kw)
            return float(r[0] if isinstance(r, (list, tuple)) else r)
        return tb, f"triton {triton.__version__} do_bench({', '.join(f'{k}={v}' for k, v in kw.items())})"
    flush = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device=dev)

    def events(fn):
        for _ in range(10):
            fn()
        torch.cuda.synchronize()
        ts = []
        for _ in range(cfg["events_n"]):
            flush.zero_()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            ts.append(s.elapsed_time(e))
        return statistics.median(ts)
    return events, f"CUDA events, 10 warm-up calls, median of {cfg['events_n']}, L2 flushed (triton not importable)"


def sync(dev):
    if dev == "cuda":
        torch.cuda.synchronize()


def fwd_and_fwdbwd(fn, inputs, grad_idx, dy):
    grad_inputs = [inputs[i] for i in grad_idx]

    def fwd():
        return fn(*inputs)

    def fwdbwd():
        out = fn(*inputs)
        g = dy if out.dim() else torch.ones_like(out)
        return torch.autograd.grad(out, grad_inputs, g)

    return fwd, fwdbwd


# --- the check of tessera against eager ---------------------------------------------------------

def close(name, got, exp, rtol=1e-2, atol=1e-3):
    """None when |got - exp| <= atol * max|exp| + rtol * |exp| everywhere, else a message."""
    if got is None:
        return f"{name}: missing"
    if tuple(got.shape) != tuple(exp.shape):
        return f"{name}: shape {tuple(got.shape)}, expected {tuple(exp.shape)}"
    a, b = got.detach().float(), exp.detach().float()
    if not bool(torch.isfinite(a).all()):
        return f"{name}: non-finite values"
    diff = (a - b).abs()
    bound = atol * b.abs().max() + rtol * b.abs()
    bad = int((diff > bound).sum())
    return None if bad == 0 else f"{name}: {bad}/{b.numel()} entries off, max |diff| {float(diff.max()):.3g}"


def check_tessera(case, inputs, dy):
    """None when tessera's output and gradients agree with eager's (dropout: its own rules)."""
    gi = [inputs[i] for i in case.grad_idx]
    out = case.tess(*inputs)
    if out.dtype != (torch.float32 if case.name == "cross_entropy" else inputs[0].dtype):
        return f"output dtype {out.dtype}"
    g = dy if out.dim() else torch.ones_like(out)
    grads = torch.autograd.grad(out, gi, g)
    if case.name == "dropout":
        x, y, dx = inputs[0], out.detach(), grads[0]
        kept = y != 0
        n, q = kept.numel(), 1.0 - P_DROP
        z = abs(int(kept.sum()) / n - q) / math.sqrt(q * (1 - q) / n)
        if z > 4.0:
            return f"kept fraction {int(kept.sum()) / n:.6f}, expected {q} ({z:.1f} sigma)"
        tol = 3 * torch.finfo(x.dtype).eps
        exp = (x.detach().float() / q).to(x.dtype).float()
        rel = ((y.float() - exp).abs() / exp.abs()).masked_fill(~kept, 0)
        if float(rel.max()) > tol:
            return f"kept values differ from x/(1-p) by {float(rel.max()):.3g} relative"
        exp_dx = torch.where(kept, dy.float() / q, torch.zeros_like(dy, dtype=torch.float32)).to(dx.dtype)
        return close("grad x", dx, exp_dx, rtol=tol, atol=0.0)
    ref = case.eager(*inputs)
    ref_grads = torch.autograd.grad(ref, gi, g.to(ref.dtype))
    msgs = [close("output", out, ref)]
    msgs += [close(f"grad[{i}]", a, b) for i, a, b in zip(case.grad_idx, grads, ref_grads)]
    msgs = [m for m in msgs if m]
    return "; ".join(msgs) if msgs else None


# --- main ---------------------------------------------------------------------------------------

def raise_dynamo_limits():
    try:
        import torch._dynamo
        c = torch._dynamo.config
        for k in ("cache_size_limit", "recompile_limit"):
            if hasattr(c, k):
                setattr(c, k, max(int(getattr(c, k)), 64))
        if hasattr(c, "accumulated_cache_size_limit"):
            c.accumulated_cache_size_limit = max(int(c.accumulated_cache_size_limit), 512)
    except Exception as e:  # noqa: BLE001
        say(f"note: could not raise dynamo's cache limits ({short(e)})")


def cell_error(e):
    """A table cell for an exception (the log above it has the message)."""
    return f"error: {type(e).__name__}"


def gbs(nbytes, ms):
    return nbytes / (ms * 1e-3) / 1e9


def measure_copy(cfg, dev, timer):
    """GB/s of y.copy_(x) for x of the ops' x shape (read + write: 2 * size bytes): the ceiling."""
    try:
        src = torch.randn(cfg["M"], cfg["N"], device=dev).to(cfg["dtype"])
        dst = torch.empty_like(src)
        ms = timer(lambda: dst.copy_(src))
        r = gbs(2 * src.numel() * src.element_size(), ms)
        say(f"copy [{cfg['M']}, {cfg['N']}] {src.dtype}: {ms:.4f} ms, {r:.0f} GB/s")
        return r
    except Exception as e:  # noqa: BLE001
        say(f"copy: error: {short(e)}")
        return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True, help="path of libtessera_torch.so")
    ap.add_argument("--quick", action="store_true", help="smaller shapes and timing budgets")
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                    help="cpu: a smoke test of this script only (tiny shapes, meaningless numbers)")
    ap.add_argument("--ops", default="", help="comma list: only these ops (default all)")
    ap.add_argument("--tessera-only", action="store_true", help="time tessera alone (an A/B of its variants)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print tracebacks of errors")
    args = ap.parse_args(argv)
    dev = args.device
    if dev == "cuda" and not torch.cuda.is_available():
        say("torch_ops_bench: needs a CUDA GPU (torch sees none)")
        return 2
    if dev == "cpu":   # float32: torch's CPU kernels lack float16 in old versions
        cfg = dict(M=64, N=96, CE_M=16, CE_V=96, warmup=1, rep=1, events_n=3, dtype=torch.float32)
    elif args.quick:
        cfg = dict(M=8192, N=2048, CE_M=2048, CE_V=8192, warmup=10, rep=30, events_n=20, dtype=torch.float16)
    else:
        cfg = dict(M=32768, N=4096, CE_M=8192, CE_V=32768, warmup=25, rep=100, events_n=50, dtype=torch.float16)

    lib_error = None
    try:
        torch.ops.load_library(args.lib)
    except Exception as e:  # noqa: BLE001 - every tessera cell then reports it
        lib_error = f"cannot load {args.lib}: {short(e)}"
        say(f"torch_ops_bench: {lib_error}")
    raise_dynamo_limits()
    timer, timer_text = make_timer(cfg, dev)
    where = torch.cuda.get_device_name() if dev == "cuda" else "cpu"
    say(f"torch_ops_bench: torch {torch.__version__}, {where}; timer: {timer_text}")
    t_start = time.perf_counter()

    copy_gbs = measure_copy(cfg, dev, timer)

    results = {}   # (op, impl) -> {"fwd": ms | error str, "fwdbwd": ms | error str}
    checks = {}    # op -> "ok" | "MISMATCH: ..." | "error: ..."
    all_cases = [c for c in cases(cfg, dev) if not args.ops or c.name in args.ops.split(",")]
    impls = ("tessera",) if args.tessera_only else IMPLS
    for case in all_cases:
        say(f"== {case.name}: {case.shape_text}")
        try:
            inputs = case.make()
        except Exception as e:  # noqa: BLE001
            say(f"  inputs: error: {short(e)}")
            for impl in IMPLS:
                results[(case.name, impl)] = {"fwd": cell_error(e), "fwdbwd": cell_error(e)}
            checks[case.name] = "error: inputs"
            continue
        for i in case.grad_idx:
            inputs[i].requires_grad_(True)
        x0 = inputs[0]
        # The upstream gradient of a tensor output (cross_entropy's scalar gets a 1 instead).
        dy = None if case.name == "cross_entropy" else torch.randn(x0.shape, device=dev).to(x0.dtype)

        if lib_error:
            checks[case.name] = "error: no library"
        else:
            try:
                m = check_tessera(case, inputs, dy)
                checks[case.name] = "ok" if m is None else "MISMATCH: " + m
            except Exception as e:  # noqa: BLE001
                if args.verbose:
                    traceback.print_exc()
                checks[case.name] = "error: " + short(e, 120)
        say(f"  check tessera vs eager: {checks[case.name]}")

        for impl in impls:
            res = results[(case.name, impl)] = {}
            if impl == "tessera" and lib_error:
                res["fwd"] = res["fwdbwd"] = "error: no library"
                continue
            try:
                fn = {"tessera": case.tess, "eager": case.eager}.get(impl)
                if impl == "compile":
                    fn = torch.compile(case.eager)
            except Exception as e:  # noqa: BLE001
                res["fwd"] = res["fwdbwd"] = cell_error(e)
                say(f"  {impl:<8} error: {short(e)}")
                continue
            fwd, fwdbwd = fwd_and_fwdbwd(fn, inputs, case.grad_idx, dy)
            for pas, f, nbytes in (("fwd", fwd, case.fwd_bytes), ("fwdbwd", fwdbwd, case.fwd_bytes + case.bwd_bytes)):
                try:
                    t0 = time.perf_counter()
                    f()
                    sync(dev)
                    first = time.perf_counter() - t0
                    ms = timer(f)
                    res[pas] = ms
                    say(f"  {impl:<8} {pas:<7} {ms:9.4f} ms  {gbs(nbytes, ms):7.0f} GB/s   (first call {first:.2f} s)")
                except Exception as e:  # noqa: BLE001
                    if args.verbose:
                        traceback.print_exc()
                    res[pas] = cell_error(e)
                    say(f"  {impl:<8} {pas:<7} error: {short(e)}")
                    if dev == "cuda":
                        torch.cuda.empty_cache()
        del inputs, dy, x0
        if dev == "cuda":
            torch.cuda.empty_cache()

    # --- tables ---
    def cell_ms(op, impl, pas):
        r = results.get((op, impl), {})
        if pas == "bwd":
            a, b = r.get("fwd"), r.get("fwdbwd")
            if isinstance(b, str):
                return b
            if isinstance(a, str):
                return a
            if a is None or b is None or b <= a:
                return None
            return b - a
        return r.get(pas)

    say("")
    say(f"{'times (ms)':<14} " + " ".join(f"{i + ' ' + p:>22}" for i in IMPLS for p in ("fwd", "fwd+bwd")))
    for case in all_cases:
        cells = []
        for impl in IMPLS:
            for pas in ("fwd", "fwdbwd"):
                v = cell_ms(case.name, impl, pas)
                cells.append(f"{v:22.4f}" if isinstance(v, float) else f"{(v or 'n/a')[:22]:>22}")
        say(f"{case.name:<14} " + " ".join(cells))

    say("")
    hdr = f"{'op':<14} {'pass':<8} {'tessera':>22} {'eager':>22} {'compile':>22} {'tess/best':>10} {'tess/copy':>10}  check"
    say(hdr)
    say("-" * len(hdr))
    failed = False
    for case in all_cases:
        for pas in ("fwd", "bwd", "fwd+bwd"):
            nbytes = {"fwd": case.fwd_bytes, "bwd": case.bwd_bytes, "fwd+bwd": case.fwd_bytes + case.bwd_bytes}[pas]
            key = "fwdbwd" if pas == "fwd+bwd" else pas
            vals, cells = {}, []
            for impl in IMPLS:
                v = cell_ms(case.name, impl, key)
                if isinstance(v, float):
                    vals[impl] = gbs(nbytes, v)
                    cells.append(f"{vals[impl]:22.1f}")
                else:
                    if impl == "tessera" and isinstance(v, str):
                        failed = True
                    cells.append(f"{(v or 'n/a')[:22]:>22}")
            best = max([vals[i] for i in ("eager", "compile") if i in vals], default=None)
            r_best = f"{vals['tessera'] / best:9.2f}x" if "tessera" in vals and best else f"{'-':>10}"
            r_copy = f"{vals['tessera'] / copy_gbs:10.2f}" if "tessera" in vals and copy_gbs else f"{'-':>10}"
            chk = checks.get(case.name, "-") if pas == "fwd" else ""
            say(f"{case.name:<14} {pas:<8} " + " ".join(cells) + f" {r_best} {r_copy}  {chk[:60]}")
        if checks.get(case.name) != "ok":
            failed = True
    copy_cell = f"{copy_gbs:22.1f}" if copy_gbs else f"{'error':>22}"
    say(f"{'copy':<14} {'-':<8} {copy_cell} {'':>22} {'':>22} {'':>10} {'1.00' if copy_gbs else '-':>10}")
    say(f"GB/s, {cfg['dtype']}; bwd = (fwd+bwd) - fwd; tess/best = tessera / max(eager, compile); "
        f"tess/copy = tessera / copy. Total {time.perf_counter() - t_start:.0f} s.")
    if failed:
        say("torch_ops_bench: FAILED (a tessera cell errored or a tessera check failed)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
