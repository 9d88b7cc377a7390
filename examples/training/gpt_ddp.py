"""Data-parallel training on tessera's PyTorch ops, two GPUs (or more), one process each:

    torchrun --nproc_per_node=2 examples/training/gpt_ddp.py --lib PATH/libtessera_torch.so
    python3 examples/training/gpt_ddp.py --spawn 2 --lib ...   (starts the ranks itself)

Every rank trains gpt.py's model with tessera's ops (TesseraOps) on its own GPU, wrapped in
DistributedDataParallel (NCCL), on its equal share of each global batch; then rank 0 trains the
same model (same seed) on one GPU with the whole global batch and checks that the two loss curves
agree. They should, up to rounding: DDP averages the ranks' gradients, and every sequence of the
reversal task counts the same number of positions, so the mean of the ranks' losses is the loss of
the global batch. Exits 1 on a mismatch (or if training makes no progress).

On CPU tensors (--device cpu: gloo instead of NCCL, tessera's ops on its interpreter) the same
check runs anywhere, tiny: CTest runs it with two processes. On GPUs it has not been run yet: the
two-GPU machine was not lent in session 11 (notes/training.md).
"""
import argparse
import os
import subprocess
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt  # noqa: E402  (the model, data and checks of the single-process runs)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lib", default=os.environ.get("TESSERA_TORCH_LIB"), required=not os.environ.get("TESSERA_TORCH_LIB"))
    for name, value in gpt.SMALL.items():
        p.add_argument("--" + name, type=type(value), default=300 if name == "steps" else value)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tol", type=float, help="relative loss tolerance (default 2e-3 float32, 3e-2 bfloat16)")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda", help="cpu: gloo and the interpreter")
    p.add_argument("--spawn", type=int, help="start this many ranks as child processes (instead of torchrun)")
    cfg = p.parse_args()
    cfg.dropout, cfg.log_every = 0.0, 0  # the masks would differ between one and several processes
    if cfg.tol is None:
        cfg.tol = gpt.DEFAULT_TOL[cfg.dtype]
    return cfg


def spawn(n):
    """Runs this script as ranks 0..n-1 (what torchrun sets up, without it: Debian's torch 1.13
    torchrun fails under Python 3.11) and returns 0 if every rank did."""
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=os.environ.get("MASTER_PORT", "29517"),
               WORLD_SIZE=str(n))
    argv = [a for i, a in enumerate(sys.argv) if a != "--spawn" and (i == 0 or sys.argv[i - 1] != "--spawn")]
    argv = [a for a in argv if not a.startswith("--spawn=")]
    procs = [subprocess.Popen([sys.executable] + argv, env=dict(env, RANK=str(r), LOCAL_RANK=str(r))) for r in range(n)]
    return max(p.wait() for p in procs)


def main():
    cfg = parse_args()
    if cfg.spawn:
        sys.exit(spawn(cfg.spawn))
    cuda = cfg.device == "cuda"
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    local = int(os.environ.get("LOCAL_RANK", rank))
    if cuda:
        torch.cuda.set_device(local)
    device = torch.device("cuda", local) if cuda else torch.device("cpu")
    torch.ops.load_library(cfg.lib)
    if cfg.batch % world:
        sys.exit(f"--batch {cfg.batch} must be a multiple of the {world} ranks")
    per_rank = cfg.batch // world

    batches = gpt.make_batches(cfg, device)  # the same global batches on every rank (one seed)
    model = gpt.GPT(cfg, gpt.TesseraOps, device)
    # The one buffer, the causal mask, is a constant built alike on every rank: nothing to broadcast
    # (and gloo cannot broadcast a bool tensor).
    DistributedDataParallel._set_params_and_buffers_to_ignore_for_model(model, ["causal"])
    ddp = DistributedDataParallel(model, device_ids=[local] if cuda else None)
    opt = gpt.make_optimizer(model, cfg)
    shard = slice(rank * per_rank, (rank + 1) * per_rank)
    losses = []
    start = time.perf_counter()
    for step, (tokens, targets) in enumerate(batches):
        opt.zero_grad(set_to_none=True)
        loss = ddp(tokens[shard], targets[shard], step)
        loss.backward()
        opt.step()
        mean = loss.detach().clone()
        dist.all_reduce(mean)  # the global batch's loss: the mean of the ranks' equal shares
        losses.append(mean / world)
    gpt.sync(device)
    rate = cfg.steps / (time.perf_counter() - start)
    losses = torch.stack(losses).float().cpu().tolist()
    where = torch.cuda.get_device_name(device) if cuda else "cpu"
    print(f"rank {rank} on {where}: {rate:.1f} steps/s, final loss {losses[-1]:.5f}", flush=True)

    failed = False
    if rank == 0:
        single = gpt.train(cfg, "tessera", batches, device, log=False)
        gpt.check_curves(losses, single.losses, cfg.tol, f"{world}-rank DDP vs one process, global batch {cfg.batch}")
        gpt.check_progress(gpt.Run(f"{world}-rank DDP", losses, rate))
        failed = bool(gpt.failures)
    flag = torch.tensor([int(failed)], device=device)
    dist.all_reduce(flag)
    dist.destroy_process_group()
    sys.exit(1 if flag.item() else 0)


if __name__ == "__main__":
    main()
