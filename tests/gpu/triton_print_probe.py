"""Triton 3.6's device_print text on the GPU, which tessera's printer follows (issue 11): the lines
of language_reference.hpp's make_printer written in Triton (an int32 4x8 tile, f32 and bool
operands of 16 elements, a scalar, a bare prefix), and a pointer, int8/uint32/int64/fp16 values,
a 128-element index and hex=True. Writes the lines, sorted, to stdout
(`python3 tests/gpu/triton_print_probe.py > triton_print.txt` on the GPU machine).

What it printed on the H200 (session 18), and what tessera took from it (print_format.cpp):
  pid (0, 0, 0) idx (0, 0) x: -100          4x8: indices padded to ceil(log10(dim)) = 1 digit
  pid (0, 0, 0) idx ( 3) ...                a dim of 16: 2 digits; 128: 3 ("idx (  0) i8: -64")
  pid (1, 0, 0) idx () scalar: 13           a scalar: "idx ()"
  pid (0, 0, 0) hello                       no operand: no idx
  pid (0, 0, 0) idx () ptr: 0x7f5397e00000  pointers as 0x...; u32 2147483648; i64 -3000000000
  pid (0, 0, 0) idx (  1) hex: 0x82000000   hex=True: 0x%08x for 32 bits
Not taken (tessera's differ on purpose): every thread holding a replicated element prints it
(x's 32 elements came out 4 times each); the prefix "y=%d " is pasted into the format, so %d
takes the next argument and every later value on the line shifts (y's lines print 0.000000);
hex of a float prints 0x00000000 (the float reaches %x as a double)."""
import os
import subprocess
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def printer(x, y):
    p = tl.program_id(0)
    r = tl.arange(0, 4)
    c = tl.arange(0, 8)
    tl.device_print("x", tl.load(x + p * 32 + r[:, None] * 8 + c[None, :]))
    f = tl.load(y + p * 16 + tl.arange(0, 16))
    tl.device_print("y=%d ", f, f > 0.0)
    tl.device_print("scalar", p * 10 + 3)
    tl.device_print("hello")


@triton.jit
def kinds(x, i8, u32, i64, h):
    o = tl.arange(0, 128)
    tl.device_print("ptr", x)
    tl.device_print("i8", tl.load(i8 + o))
    tl.device_print("u32", tl.load(u32 + o))
    tl.device_print("i64", tl.load(i64 + o))
    tl.device_print("f16", tl.load(h + o))
    tl.device_print("hex", tl.load(u32 + o), hex=True)
    tl.device_print("hexf", tl.load(h + o).to(tl.float32), hex=True)


def main():
    if len(sys.argv) > 1:  # the child: print, synchronize, exit (the printf buffer goes to stdout)
        dev = "cuda"
        x = torch.arange(64, dtype=torch.int32, device=dev) * 7 - 100
        y = (torch.arange(32, device=dev, dtype=torch.float32) % 23 - 11) * 0.375
        printer[(2,)](x, y)
        o = torch.arange(128, device=dev)
        words = (o.to(torch.int64) * 33554432 - 2147483648).to(torch.int32).view(torch.uint32)  # 0x80000000 + ...
        kinds[(1,)](x, (o - 64).to(torch.int8), words, o.to(torch.int64) * -3000000000,
                    (o.to(torch.float32) * 0.25 - 3).to(torch.float16))
        torch.cuda.synchronize()
        return
    r = subprocess.run([sys.executable, __file__, "child"], capture_output=True, text=True,
                       env={**os.environ, "CUDA_CACHE_DISABLE": "1"})
    sys.stderr.write(r.stderr[-3000:])
    print("\n".join(sorted(r.stdout.splitlines())))
    sys.exit(r.returncode)


main()
