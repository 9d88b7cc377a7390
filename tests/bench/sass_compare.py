"""tessera's and Triton 3.6's matmul SASS side by side, without a GPU: the K loop's instructions
by opcode (or the whole kernel's with --all), registers, and totals.

Needs Triton's wheel only (it bundles ptxas and nvdisasm; no torch, no GPU):
    python3 -m venv /tmp/sass && /tmp/sass/bin/pip install triton==3.6.0
    /tmp/sass/bin/python tests/bench/sass_compare.py build/tests/bench/tessera_bench_matmul \\
        bf16 4096 4096 4096 128 256 64 8 4 [--all]
DTYPE bf16 or fp16 times matmul_ref.py's matmul_kernel; bias_gelu its matmul_bias_gelu_kernel
against tessera's fused kernel. Both are compiled for sm_90a as a launch on 16-byte aligned
row-major operands specializes them (sizes and leading strides divisible by 16, unit strides).
A SASS count is not a speed: the device's benchmark decides (notes/tensor-cores.md).
"""
import collections
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import types

sys.modules.setdefault("torch", types.ModuleType("torch"))  # matmul_ref.py imports it; compiling needs none
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402

TOOLS = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
INT_ARGS = ["M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn"]
UNIT_STRIDES = ["stride_ak", "stride_bn", "stride_cn"]
DIVISIBLE = ["M", "N", "K", "stride_am", "stride_bk", "stride_cm"]


def triton_cubin(dtype, cfg):
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)  # matmul_ref.py imports triton_configs beside it
    spec = importlib.util.spec_from_file_location("matmul_ref", os.path.join(here, "matmul_ref.py"))
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    bm, bn, bk, warps, stages = cfg
    elem = "bf16" if dtype == "bias_gelu" else dtype
    ptrs = {"a_ptr": f"*{elem}", "b_ptr": f"*{elem}"}
    if dtype == "bias_gelu":
        fn, ptrs["bias_ptr"], ptrs["c_ptr"] = ref.matmul_bias_gelu_kernel, "*fp32", "*bf16"
        consts = {}
    else:
        fn, ptrs["c_ptr"] = ref.matmul_kernel, f"*{elem}"
        consts = {"ACC_INT": False}
    consts.update({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8})
    sig = {**ptrs, **{n: "i32" for n in INT_ARGS}, **{n: "constexpr" for n in consts}}
    for n in UNIT_STRIDES:
        sig[n], consts[n] = "constexpr", 1
    names = list(sig)
    attrs = {(names.index(n),): [["tt.divisibility", 16]] for n in names if n in ptrs or n in DIVISIBLE}
    src = triton.compiler.ASTSource(fn=fn, signature=sig, constexprs=consts, attrs=attrs)
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps, "num_stages": stages})
    return k.asm["cubin"]


def tessera_ptxas():
    """The ptxas tessera's runtime would pick (backends/cuda/ptxas.hpp): $TESSERA_PTXAS, CUDA's,
    else Triton's own (which Triton uses for its side)."""
    for path in (os.environ.get("TESSERA_PTXAS", ""), "/usr/local/cuda/bin/ptxas"):
        if path and os.access(path, os.X_OK):
            return path
    return os.path.join(TOOLS, "ptxas")


def tessera_cubin(bench, dtype, shape, cfg, tmp):
    ptx = subprocess.run([bench, "ptx", dtype, *map(str, shape), *map(str, cfg), "sm_90a"], check=True,
                         capture_output=True, text=True).stdout
    src, out = os.path.join(tmp, "t.ptx"), os.path.join(tmp, "t.cubin")
    with open(src, "w") as f:
        f.write(ptx)
    subprocess.run([tessera_ptxas(), "-arch=sm_90a", src, "-o", out], check=True)
    with open(out, "rb") as f:
        return f.read()


def sass(cubin, tmp):
    path = os.path.join(tmp, "k.cubin")
    with open(path, "wb") as f:
        f.write(cubin)
    text = subprocess.run([os.path.join(TOOLS, "nvdisasm"), "-c", path], check=True, capture_output=True, text=True).stdout
    regs = subprocess.run([os.path.join(TOOLS, "cuobjdump"), "-res-usage", path], capture_output=True, text=True).stdout
    m = re.search(r"REG:(\d+)", regs)
    return text.splitlines(), int(m.group(1)) if m else -1


INSTR = re.compile(r"/\*[0-9a-f]+\*/\s+(@!?U?P[T0-9]\s+)?([A-Z0-9_]+)")


def k_loop(lines):
    """The lines of the innermost loop holding the MMAs: from a label to the branch back to it."""
    labels = {m.group(1): i for i, ln in enumerate(lines) if (m := re.match(r"^(\.L_x_\d+):", ln))}
    for i, ln in enumerate(lines):
        m = re.search(r"BRA.*`\((\.L_x_\d+)\)", ln)
        if m and m.group(1) in labels and labels[m.group(1)] < i:
            body = lines[labels[m.group(1)]:i + 1]
            if any("GMMA" in b or "HMMA" in b for b in body):
                return body
    return []


def histogram(lines):
    return collections.Counter(m.group(2) for ln in lines if (m := INSTR.search(ln)))


def main():
    args = [a for a in sys.argv[1:] if a != "--all"]
    if len(args) != 10:
        sys.exit(__doc__)
    bench, dtype = args[0], args[1]
    shape, cfg = tuple(map(int, args[2:5])), tuple(map(int, args[5:10]))
    with tempfile.TemporaryDirectory() as tmp:
        ours, our_regs = sass(tessera_cubin(bench, dtype, shape, cfg, tmp), tmp)
        theirs, their_regs = sass(triton_cubin(dtype, cfg), tmp)
    part = (lambda x: x) if "--all" in sys.argv else k_loop
    h_ours, h_theirs = histogram(part(ours)), histogram(part(theirs))
    print(f"{dtype} {'x'.join(map(str, shape))} config {cfg}, sm_90a: {'whole kernel' if part is not k_loop else 'K loop'}; "
          f"tessera's ptxas {tessera_ptxas()}")
    print(f"{'opcode':12s} {'tessera':>8s} {'triton':>8s}")
    for op in sorted(set(h_ours) | set(h_theirs), key=lambda o: -(h_ours[o] + h_theirs[o])):
        print(f"{op:12s} {h_ours[op]:8d} {h_theirs[op]:8d}")
    print(f"{'total':12s} {sum(h_ours.values()):8d} {sum(h_theirs.values()):8d}")
    print(f"{'kernel':12s} {sum(histogram(ours).values()):8d} {sum(histogram(theirs).values()):8d}")
    print(f"{'registers':12s} {our_regs:8d} {their_regs:8d}")


if __name__ == "__main__":
    main()
