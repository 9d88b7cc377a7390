// The textual form of the tile IR: an MLIR-like generic syntax, one op per line.
//
//   kernel @add(%x: ptr<f32> {divisibility = 16}, %n: i32) num_warps = 4 {
//     %0 = program_id {axis = 0} : i32
//     %1, %2 = for %lb, %ub, %st, %a, %b : f32, f32 {
//     ^bb(%3: i32, %4: f32, %5: f32):
//       yield %4, %5
//     }  loc("add.cpp":7:3)
//     return
//   }
//
// Values are numbered %0, %1, ... in definition order (an op's results before its regions' block
// arguments); kernel arguments print as %name when their name hint is a unique identifier, else
// %argN. parse_module (parser.hpp) is the exact inverse.
#pragma once
#include <string>

#include "jit/ir/ir.hpp"

namespace tessera::ir {

struct PrintOptions {
  bool locations = true;  // false: omit loc(...) (golden tests compare text without them)
};

std::string print(const Module& m, const PrintOptions& options = {});

// One op on one line for error messages, with the same value names as print(Module) would use
// (regions are elided as {...}, the location is left out: messages name it separately).
std::string print_op(const Op& op);

// The pieces, shared with the parser's tests and with passes that key ops by their attributes.
std::string print_attr(const Attr& a);
std::string format_double(double d);      // round-trips to identical bits; always has '.' or 'e'
std::string quote_string(std::string_view s);
bool is_identifier(std::string_view s);   // [A-Za-z_][A-Za-z0-9_]*

}  // namespace tessera::ir
