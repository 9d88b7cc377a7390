#!/usr/bin/env python3
"""A small GPT trained on a synthetic sequence-reversal task, with tessera's PyTorch ops
(libtessera_torch.so: torch.ops.tessera.*) or with PyTorch's own — the Python twin of gpt.cpp.

Model: token + learned position embedding; `layers` blocks of
  x = x + Wo(attention(rms_norm(x)))     causal, multi-head
  x = x + dropout(W2(bias_gelu(W1 rms_norm(x), b1)) + b2)
then rms_norm and an LM head without bias; the loss is the mean cross-entropy over the counted
positions. With --impl tessera every op tessera has is tessera's: the RMSNorms, the linear layers
(matmul), attention (16-bit, head_dim a power of two from 16 to 128; elsewhere scores, mask,
tessera's softmax and P·V, those two batched products torch's), bias+GELU, dropout and the loss;
with --impl torch they are PyTorch's (the same formulas; attention as scores, mask, softmax and
P·V). The embedding and AdamW are PyTorch's in both.

Task: each sequence is n random tokens a_1..a_n from [1, vocab), a separator 0, then a_n..a_1;
the model reads seq = 2n tokens and predicts each next one, and the loss counts only the reversed
half (the other targets are ignore_index = -100). It is learnable (attend to position 2n - i),
so the loss falls from about ln(vocab - 1) when training works.

Both impls start from the same weights (built on the CPU from --seed) and see the same batches
(a generator of their own, from --seed), so their loss curves differ only by the ops' rounding:
  --compare     tessera against torch: the largest |loss_tessera - loss_torch| / loss_torch over
                all steps must be at most --tol (default 2e-3 in float32, 3e-2 in bfloat16: the ops
                compute in f32 and round once where torch's formulas round between steps), and
                with 20 steps or more each impl's final loss (mean of the last 5 steps) must be
                below 0.9 x its first. Needs --dropout 0: the impls' dropout masks differ.
  --bench       steps/s of tessera, torch, compile (torch under torch.compile) and
                tessera-compile, at a GPU-sized configuration unless the size flags are given
                (a throughput run: 200 steps are too few for that model to learn the task, and
                its loss stays near ln(vocab); the table shows each curve's distance to torch's).
  (none)        one run of --impl, its loss every --log-every steps and its steps/s.
  --cuda-graph  tessera with the whole training step (forward, backward, AdamW with
                capturable=True) captured once in a CUDA graph and replayed, against the same
                run in eager mode: the curves must agree within --tol. Needs --dropout 0 (the
                dropout seeds would be baked into the graph) and CUDA. With --bench, adds its row.
Each check prints PASS or FAIL; the script exits 1 on any FAIL.

  python3 gpt.py --lib build/libtessera_torch.so --compare --device cpu --steps 6 --batch 2 \\
      --seq 8 --dim 32 --layers 1 --heads 2 --vocab 16
  python3 gpt.py --lib .../libtessera_torch.so --compare --device cuda --steps 300
  python3 gpt.py --lib .../libtessera_torch.so --bench --cuda-graph
"""
import argparse
import dataclasses
import math
import os
import sys
import time

import torch
import torch.nn.functional as F

IGNORE_INDEX = -100
SEPARATOR = 0
RMS_EPS = 1e-6
WARMUP_STEPS = 3  # not timed: the first steps compile kernels (tessera's JIT, torch.compile)

# Size flags: the default small run (CPU-friendly with --impl torch) and the --bench run.
SMALL = dict(steps=200, batch=16, seq=32, dim=128, layers=2, heads=4, vocab=32, dtype="float32")
BENCH = dict(steps=200, batch=32, seq=256, dim=512, layers=6, heads=8, vocab=4096, dtype="bfloat16")
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}
DEFAULT_TOL = {"float32": 2e-3, "bfloat16": 3e-2}


# ---- the ops that differ between impls

def attention_formula(q, k, v, mask, softmax):
    """Causal attention of q, k, v [batch, heads, t, hd]: scores, the mask, softmax, P·V."""
    scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    return softmax(scores.masked_fill(mask, float("-inf"))) @ v


class TorchOps:
    """PyTorch's own ops, computed as tessera's are (normalization in f32, loss on f32 logits)."""

    @staticmethod
    def rms_norm(x, w):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + RMS_EPS) * w.float()).to(x.dtype)

    @staticmethod
    def softmax(x):
        return torch.softmax(x, -1)

    @staticmethod
    def linear(x, w, bias=None):
        return F.linear(x, w, bias)

    @staticmethod
    def attention(q, k, v, mask):
        return attention_formula(q, k, v, mask, TorchOps.softmax)

    @staticmethod
    def bias_gelu(x, bias):
        return F.gelu(x + bias)

    @staticmethod
    def dropout(x, p, seed):
        return F.dropout(x, p, training=True)  # torch's RNG: `seed` has no meaning here

    @staticmethod
    def cross_entropy(logits, target):
        return F.cross_entropy(logits.float(), target, ignore_index=IGNORE_INDEX)


class TesseraOps:
    """tessera's ops (torch.ops.tessera.*, from libtessera_torch.so)."""

    @staticmethod
    def rms_norm(x, w):
        return torch.ops.tessera.rms_norm(x, w, RMS_EPS)

    @staticmethod
    def softmax(x):
        return torch.ops.tessera.softmax(x, -1)

    @staticmethod
    def linear(x, w, bias=None):
        """x [..., in] @ wᵀ: tessera's matmul takes 2-D operands of any strides (wᵀ is a view)."""
        y = torch.ops.tessera.matmul(x.reshape(-1, x.shape[-1]), w.t()).view(*x.shape[:-1], w.shape[0])
        return y if bias is None else y + bias

    @staticmethod
    def attention(q, k, v, mask):
        """tessera's attention op where it takes q, k, v (16-bit, head_dim a power of two from 16
        to 128); else the formula with tessera's softmax."""
        hd = q.shape[-1]
        if q.dtype in (torch.float16, torch.bfloat16) and 16 <= hd <= 128 and hd & (hd - 1) == 0:
            return torch.ops.tessera.attention(q, k, v, True)
        return attention_formula(q, k, v, mask, TesseraOps.softmax)

    @staticmethod
    def bias_gelu(x, bias):
        return torch.ops.tessera.bias_gelu(x, bias)

    @staticmethod
    def dropout(x, p, seed):
        return torch.ops.tessera.dropout(x, p, seed)

    @staticmethod
    def cross_entropy(logits, target):
        return torch.ops.tessera.cross_entropy(logits, target, IGNORE_INDEX)


# ---- model

class GPT(torch.nn.Module):
    def __init__(self, cfg, ops, device):
        super().__init__()
        self.ops, self.heads, self.dropout = ops, cfg.heads, cfg.dropout
        d, v, dtype = cfg.dim, cfg.vocab, DTYPES[cfg.dtype]
        # Weights are drawn on the CPU in f32 from the seed, in a fixed order, then moved: the same
        # seed gives the same initial model on any device and for either impl.
        torch.manual_seed(cfg.seed)
        residual_std = 0.02 / math.sqrt(2 * cfg.layers)  # GPT-2: residual projections scaled down

        def param(t):
            return torch.nn.Parameter(t.to(device=device, dtype=dtype))

        def normal(*shape, std=0.02):
            return param(torch.randn(*shape) * std)

        self.tok_emb = normal(v, d)
        self.pos_emb = normal(cfg.seq, d)
        self.blocks = torch.nn.ModuleList()
        for _ in range(cfg.layers):
            b = torch.nn.Module()
            b.norm1 = param(torch.ones(d))
            b.w_qkv = normal(3 * d, d)
            b.w_out = normal(d, d, std=residual_std)
            b.norm2 = param(torch.ones(d))
            b.w_fc = normal(4 * d, d)  # bias-free: its bias is b_fc, fused into bias_gelu
            b.b_fc = param(torch.zeros(4 * d))
            b.w_proj = normal(d, 4 * d, std=residual_std)
            b.b_proj = param(torch.zeros(d))
            self.blocks.append(b)
        self.norm_f = param(torch.ones(d))
        self.lm_head = normal(v, d)
        self.register_buffer("causal", torch.ones(cfg.seq, cfg.seq, dtype=torch.bool, device=device).triu(1))

    def forward(self, tokens, targets, step):
        ops = self.ops
        bsz, t = tokens.shape
        d = self.tok_emb.shape[1]
        hd = d // self.heads
        x = F.embedding(tokens, self.tok_emb) + self.pos_emb[:t]
        for layer, b in enumerate(self.blocks):
            h = ops.rms_norm(x, b.norm1)
            q, k, v = ops.linear(h, b.w_qkv).view(bsz, t, 3, self.heads, hd).permute(2, 0, 3, 1, 4)
            att = ops.attention(q, k, v, self.causal[:t, :t])
            x = x + ops.linear(att.transpose(1, 2).reshape(bsz, t, d), b.w_out)

            h = ops.bias_gelu(ops.linear(ops.rms_norm(x, b.norm2), b.w_fc), b.b_fc)
            h = ops.linear(h, b.w_proj, b.b_proj)
            if self.dropout > 0:  # p = 0 is the identity: no op at all, as torch does
                h = ops.dropout(h, self.dropout, step * 1000 + layer)
            x = x + h
        logits = ops.linear(ops.rms_norm(x, self.norm_f), self.lm_head)
        return ops.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def make_batches(cfg, device):
    """Every step's (tokens, targets), made up front from a generator of their own (so that
    training itself has no host work to time) and identical for every impl."""
    gen = torch.Generator().manual_seed(cfg.seed + 1)
    n = cfg.seq // 2
    batches = []
    for _ in range(cfg.steps):
        a = torch.randint(1, cfg.vocab, (cfg.batch, n), generator=gen)
        s = torch.cat([a, torch.full((cfg.batch, 1), SEPARATOR), a.flip(1)], 1)  # [batch, 2n + 1]
        tokens, targets = s[:, :-1].clone(), s[:, 1:].clone()
        targets[:, :n] = IGNORE_INDEX  # count only the predictions of the reversed half
        batches.append((tokens.to(device), targets.to(device)))
    return batches


def make_optimizer(model, cfg, capturable=False):
    return torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01, capturable=capturable)


# ---- training runs

def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@dataclasses.dataclass
class Run:
    """One training run: its loss per step and its speed."""
    name: str
    losses: list
    steps_per_s: float


def train(cfg, impl, batches, device, log=True, capturable=False):
    ops = TesseraOps if impl.startswith("tessera") else TorchOps
    model = GPT(cfg, ops, device)
    opt = make_optimizer(model, cfg, capturable)
    step_loss = torch.compile(model) if impl.endswith("compile") else model
    losses = []
    timed_from = min(WARMUP_STEPS, cfg.steps - 1)
    for step, (tokens, targets) in enumerate(batches):
        if step == timed_from:
            sync(device)
            start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = step_loss(tokens, targets, step)
        loss.backward()
        opt.step()
        losses.append(loss.detach())  # read back at the end: no sync per step
        if log and cfg.log_every > 0 and (step % cfg.log_every == 0 or step == cfg.steps - 1):
            print(f"  [{impl}] step {step:5d}  loss {loss.item():.5f}", flush=True)
    sync(device)
    rate = (cfg.steps - timed_from) / (time.perf_counter() - start)
    return Run(impl, torch.stack(losses).float().cpu().tolist(), rate)


def train_cuda_graph(cfg, batches, device):
    """tessera, the whole step captured once in a CUDA graph after WARMUP_STEPS eager steps on a
    side stream (as PyTorch's whole-network capture example), then replayed with each batch copied
    into the static inputs. The warm-up steps are real training steps, so the losses line up with
    an eager run's step for step."""
    model = GPT(cfg, TesseraOps, device)
    opt = make_optimizer(model, cfg, capturable=True)
    static_tokens, static_targets = (t.clone() for t in batches[0])
    losses = []
    side = torch.cuda.Stream(device)
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(side):
        for step in range(WARMUP_STEPS):
            static_tokens.copy_(batches[step][0])
            static_targets.copy_(batches[step][1])
            opt.zero_grad(set_to_none=True)
            loss = model(static_tokens, static_targets, step)
            loss.backward()
            opt.step()
            losses.append(loss.detach().clone())
    del loss  # it holds the last warm-up's autograd graph, whose nodes belong to the side stream
    torch.cuda.current_stream(device).wait_stream(side)

    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)  # the captured backward then writes fresh gradients
    with torch.cuda.graph(graph):
        static_loss = model(static_tokens, static_targets, WARMUP_STEPS)
        static_loss.backward()
        opt.step()

    sync(device)
    start = time.perf_counter()
    for tokens, targets in batches[WARMUP_STEPS:]:
        static_tokens.copy_(tokens)
        static_targets.copy_(targets)
        graph.replay()
        losses.append(static_loss.detach().clone())
    sync(device)
    rate = (cfg.steps - WARMUP_STEPS) / (time.perf_counter() - start)
    return Run("tessera-graph", torch.stack(losses).float().cpu().tolist(), rate)


# ---- checks

failures = []


def check(ok, what):
    print(("PASS  " if ok else "FAIL  ") + what, flush=True)
    if not ok:
        failures.append(what)


def max_rel_diff(a, b):
    """max |a - b| / |b| over the steps; NaN if any step is NaN (so that the check fails)."""
    diffs = [abs(x - y) / max(abs(y), 1e-12) for x, y in zip(a, b)]
    return math.nan if any(math.isnan(d) for d in diffs) else max(diffs)


def check_curves(a, b, tol, what):
    diff = max_rel_diff(a, b)
    check(diff <= tol, f"{what}: max |loss difference| / loss over {len(a)} steps = {diff:.3e} (tol {tol:.1e})")


def check_progress(run):
    """With 20 steps or more, training must have made progress: the mean of the last 5 losses (one
    batch's loss is noisy) below 0.9 x the first."""
    if len(run.losses) < 20:
        return
    first, last = run.losses[0], sum(run.losses[-5:]) / 5
    check(last < 0.9 * first, f"{run.name}: loss {first:.4f} -> {last:.4f} (must end below 0.9 x the first)")


def write_csv(path, runs):
    with open(path, "w") as f:
        f.write("step," + ",".join(r.name for r in runs) + "\n")
        for step, row in enumerate(zip(*(r.losses for r in runs))):
            f.write(f"{step}," + ",".join(f"{x:.6f}" for x in row) + "\n")


def compile_available(device):
    return device.type == "cuda" and int(torch.__version__.split(".")[0]) >= 2 and hasattr(torch, "compile")


def bench(cfg, batches, device):
    """Trains every impl from the same seed and prints a table: steps/s, the ratio to torch's, the
    final loss and the largest relative distance of the curve to torch's. Returns the runs."""
    impls = ["tessera", "torch"]
    if compile_available(device):
        impls += ["compile", "tessera-compile"]
    else:
        print("(compile, tessera-compile skipped: torch.compile needs PyTorch 2 and CUDA here)")
    results = {}
    for impl in impls:
        try:
            results[impl] = train(cfg, impl, batches, device, log=False)
        except Exception as e:  # torch.compile of the custom ops may not work: report it, go on
            if not impl.endswith("compile"):
                raise
            results[impl] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200]
    if cfg.cuda_graph:
        results["tessera-graph"] = train_cuda_graph(cfg, batches, device)
    base = results["torch"]
    print(f"\n{'impl':<16}{'steps/s':>10}{'vs torch':>10}{'final loss':>12}{'max rel diff vs torch':>24}")
    for name, r in results.items():
        if isinstance(r, str):
            print(f"{name:<16}  failed: {r}")
        else:
            print(f"{name:<16}{r.steps_per_s:>10.2f}{r.steps_per_s / base.steps_per_s:>9.2f}x"
                  f"{r.losses[-1]:>12.4f}{max_rel_diff(r.losses, base.losses):>24.2e}")
    return [r for r in results.values() if not isinstance(r, str)]


# ---- main

def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lib", default=os.environ.get("TESSERA_TORCH_LIB"),
                   help="libtessera_torch.so (default: $TESSERA_TORCH_LIB); needed for the tessera impls")
    p.add_argument("--impl", default="tessera", choices=["tessera", "torch", "compile", "tessera-compile"])
    p.add_argument("--compare", action="store_true", help="tessera against torch, same seed")
    p.add_argument("--bench", action="store_true", help="steps/s of every impl")
    p.add_argument("--cuda-graph", action="store_true", help="tessera captured in a CUDA graph against eager")
    for name in SMALL:
        if name != "dtype":
            p.add_argument("--" + name, type=int, help=f"default {SMALL[name]} ({BENCH[name]} with --bench)")
    p.add_argument("--dtype", choices=list(DTYPES),
                   help="parameters and activations (default float32; bfloat16 with --bench)")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", choices=["cpu", "cuda"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tol", type=float, help="relative loss tolerance (default 2e-3 float32, 3e-2 bfloat16)")
    p.add_argument("--log-every", type=int, default=10, help="print the loss every N steps (0: never)")
    p.add_argument("--csv", help="write step,loss per run to this file")
    cfg = p.parse_args()
    for name, value in (BENCH if cfg.bench else SMALL).items():
        if getattr(cfg, name) is None:
            setattr(cfg, name, value)
    if cfg.tol is None:
        cfg.tol = DEFAULT_TOL[cfg.dtype]
    if (cfg.seq < 2 or cfg.seq % 2 or cfg.heads < 1 or cfg.dim % cfg.heads or cfg.vocab < 3
            or min(cfg.steps, cfg.batch, cfg.layers) < 1):
        p.error("need an even --seq >= 2, --dim a multiple of --heads, --vocab >= 3, "
                "and --steps, --batch, --layers >= 1")
    if (cfg.compare or cfg.cuda_graph) and cfg.dropout != 0:
        p.error("--compare and --cuda-graph need --dropout 0 (torch's masks differ from tessera's; "
                "a graph would replay the captured dropout seeds)")
    if cfg.cuda_graph and cfg.device != "cuda":
        p.error("--cuda-graph needs --device cuda")
    if cfg.cuda_graph and cfg.steps <= WARMUP_STEPS:
        p.error(f"--cuda-graph needs more than {WARMUP_STEPS} steps (the eager warm-up)")
    return cfg


def main():
    cfg = parse_args()
    device = torch.device(cfg.device)
    needs_lib = cfg.compare or cfg.bench or cfg.cuda_graph or cfg.impl.startswith("tessera")
    if needs_lib:
        if not cfg.lib:
            sys.exit("the tessera impls need --lib PATH/libtessera_torch.so (or $TESSERA_TORCH_LIB)")
        torch.ops.load_library(cfg.lib)
    print(f"torch {torch.__version__}, {cfg.device}, {cfg.dtype}: batch {cfg.batch}, seq {cfg.seq}, dim {cfg.dim}, "
          f"layers {cfg.layers}, heads {cfg.heads}, vocab {cfg.vocab}, {cfg.steps} steps, lr {cfg.lr}, "
          f"dropout {cfg.dropout}, seed {cfg.seed}", flush=True)
    batches = make_batches(cfg, device)

    if cfg.bench:
        runs = bench(cfg, batches, device)
    elif cfg.compare:
        runs = [train(cfg, "tessera", batches, device), train(cfg, "torch", batches, device)]
        check_curves(runs[0].losses, runs[1].losses, cfg.tol, "tessera vs torch")
        for r in runs:
            check_progress(r)
    elif cfg.cuda_graph:
        # The eager twin uses the same capturable AdamW, so that the graph is the only difference.
        runs = [train_cuda_graph(cfg, batches, device), train(cfg, "tessera", batches, device, capturable=True)]
        check_curves(runs[0].losses, runs[1].losses, cfg.tol, "tessera CUDA graph vs eager")
        check_progress(runs[0])
    else:
        if cfg.impl.endswith("compile") and not compile_available(device):
            sys.exit("--impl compile / tessera-compile need PyTorch 2 and --device cuda")
        runs = [train(cfg, cfg.impl, batches, device)]

    if not cfg.bench:  # --bench prints its table instead
        for r in runs:
            print(f"{r.name}: {r.steps_per_s:.2f} steps/s (after {min(WARMUP_STEPS, cfg.steps - 1)} warm-up steps), "
                  f"final loss {r.losses[-1]:.5f}")
    if cfg.csv:
        write_csv(cfg.csv, runs)
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
