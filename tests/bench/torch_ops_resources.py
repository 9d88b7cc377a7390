"""Registers, spills and shared memory of every kernel behind the tessera::* PyTorch ops at the
benchmark's shapes (f16, 32768 x 4096; cross-entropy 8192 x 32768): runs each op forward and
backward once with TESSERA_DUMP=resources, which prints one line per compiled kernel.

    python3 tests/bench/torch_ops_resources.py --lib PATH/libtessera_torch.so
"""
import argparse
import os

os.environ["TESSERA_DUMP"] = "resources"
os.environ.setdefault("TESSERA_CACHE", "0")  # compile here, so that the dump is printed

import torch  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lib", required=True)
    args = p.parse_args()
    torch.ops.load_library(args.lib)
    t = torch.ops.tessera
    f16 = dict(device="cuda", dtype=torch.float16)
    x = torch.randn(32768, 4096, **f16, requires_grad=True)
    w = torch.randn(4096, **f16, requires_grad=True)
    b = torch.randn(4096, **f16, requires_grad=True)
    logits = torch.randn(8192, 32768, **f16, requires_grad=True)
    target = torch.randint(0, 32768, (8192,), device="cuda")
    for name, fn in [("layer_norm", lambda: t.layer_norm(x, w, b, 1e-5)), ("rms_norm", lambda: t.rms_norm(x, w, 1e-6)),
                     ("softmax", lambda: t.softmax(x, -1)), ("cross_entropy", lambda: t.cross_entropy(logits, target)),
                     ("bias_gelu", lambda: t.bias_gelu(x, b)), ("dropout", lambda: t.dropout(x, 0.1, 1))]:
        print(f"== {name}", flush=True)
        out = fn()
        out.backward(torch.ones_like(out))
        torch.cuda.synchronize()


if __name__ == "__main__":
    main()
