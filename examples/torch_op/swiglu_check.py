"""Loads the user-written op library (libswiglu_op.so, from swiglu_op.cpp) and checks
torch.ops.myops.swiglu against PyTorch's silu(a) * b, values and gradients, on CPU tensors and,
where there is a GPU, CUDA tensors; under torch.compile too where PyTorch has it (>= 2).

    python3 examples/torch_op/swiglu_check.py PATH/libswiglu_op.so
"""
import sys

import torch
import torch.nn.functional as F


def check(device, compiled=False):
    torch.manual_seed(0)
    a = torch.randn(3, 1000, device=device, requires_grad=True)
    b = torch.randn(3, 1000, device=device, requires_grad=True)
    op = torch.ops.myops.swiglu
    if compiled:
        op = torch.compile(op, fullgraph=True)
    y = op(a, b)
    ref = F.silu(a) * b
    dy = torch.randn_like(y)
    g = torch.autograd.grad(y, (a, b), dy)
    rg = torch.autograd.grad(ref, (a, b), dy)
    err = max((y - ref).abs().max().item(), *((x - r).abs().max().item() for x, r in zip(g, rg)))
    print(f"myops.swiglu on {device}{' under torch.compile' if compiled else ''}: max |error| {err:.3g}")
    return err < 1e-5


def main():
    torch.ops.load_library(sys.argv[1])
    ok = check("cpu")
    if torch.cuda.is_available():
        ok = check("cuda") and ok
        if int(torch.__version__.split(".")[0]) >= 2:
            ok = check("cuda", compiled=True) and ok
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
