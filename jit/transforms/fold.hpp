// Constant arithmetic with the exact semantics of ops.def, for canonicalize's constant folding.
//
// A constant of an integer type is an int64 held normalized: signed types sign-extended from their
// width, unsigned ones (u8, u32, i1) zero-extended, so i1 is 0 or 1. A float constant is a double
// that denotes its value rounded to the element type (a `0.1 : f32` constant is 0.1f): operands
// are rounded so first, and every fold returns a value exact in its type, or
// nullopt when folding would not match the device bit for bit (exp/log/sqrt, whose device results
// are not correctly rounded; min/max of +0 and -0; int64 to float beyond 2^53; float to i1).
#pragma once
#include <cstdint>
#include <optional>

#include "jit/ir/ir.hpp"

namespace tessera::transforms {

std::int64_t normalize_int(ir::DType d, std::int64_t v);
double round_to_dtype(ir::DType d, double v);  // round to nearest even, overflow to inf

std::optional<ir::Attr> fold_unary(ir::OpKind k, ir::DType d, const ir::Attr& a);
std::optional<ir::Attr> fold_binary(ir::OpKind k, ir::DType d, const ir::Attr& a, const ir::Attr& b);
// The i1 result (0 or 1) of comparing a and b of element type d.
std::optional<ir::Attr> fold_compare(ir::OpKind k, ir::DType d, const ir::Attr& a, const ir::Attr& b);
std::optional<ir::Attr> fold_cast(ir::DType from, ir::DType to, const ir::Attr& a);

}  // namespace tessera::transforms
