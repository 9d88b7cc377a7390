#pragma once
#include "jit/ir/ir.hpp"

namespace tessera::transforms {

// Rewrites every op that computes on fp8 (f8e4m3, f8e5m2) to compute in f32, as ops.def defines
// it: its fp8 operands are cast to f32 first and an fp8 result is cast back (one rounding). A
// dot's fp8 operands are cast to f16 (exact: every fp8 value is an f16) for the tensor cores, and
// a print's to f32 (or, printed in hex, bitcast to u8, so that the code is what is printed). Moves
// (loads, stores, selects, shape ops, casts, bitcasts, control flow) keep fp8: the lowering holds
// an fp8 value as its i8 code and converts it only in casts (lower_fp8.cpp). Run before the
// lowering, on every target; an fp8 div is marked to round correctly (div.rn), so that the GPU's
// approximate f32 division cannot move a quotient across an fp8 rounding boundary.
void legalize_fp8(ir::Module& m);

}  // namespace tessera::transforms
