// Printing from a kernel (Triton's tl.device_print).
#pragma once
#include <string_view>
#include <vector>

#include "tessera/detail/core.hpp"
#include "tessera/tile.hpp"

namespace tessera {

// ts::device_print("x", x, y) prints one line per element of each tile (and one per scalar), from
// every program that reaches it, as Triton 3.6 does (its text but for index padding and a scalar's
// "idx ()", notes/language.md):
//   pid (0, 0, 0) idx (3) x: 1.500000
//   pid (0, 0, 0) idx (3) x: (operand 1) 7
// The prefix is normalized as Triton's ("x" becomes " x: "); with several values each line names
// its operand. Floats print as %f (in double), ints in decimal, bools as 0/1, pointers as 0x...
// An element that several threads hold prints once. Lines from different programs (and, on a
// GPU, from different threads) come in any order; each line is whole. On NVIDIA the lines go
// through the driver's printf buffer (1 MB by default, cuCtxSetLimit's CU_LIMIT_PRINTF_FIFO_SIZE:
// a fuller buffer drops lines) and reach stdout when the host synchronizes; the interpreter and
// the host targets print at once. AMD targets refuse it (a tessera::Error naming the line).
//
// A function object rather than a function, so that the caller's source line can follow the
// variadic values: `ts::device_print("x", x);` reads as a call.
template <class... Values>
struct device_print {
  static_assert((detail::is_tile<Values> && ...),
                "tessera::device_print prints tiles, scalars and pointers of the kernel (Tile<T>, Ptr<T>, Int, ...); "
                "a C++ value is known at trace time: print it from C++");
  explicit device_print(std::string_view prefix, const Values&... values, const Loc& loc = Loc::current()) {
    detail::emit_print(prefix, {values.ir_value(loc)...}, loc);
  }
};
template <class... Values>
device_print(std::string_view, const Values&...) -> device_print<Values...>;

}  // namespace tessera
