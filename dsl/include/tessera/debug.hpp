// Printing and checking from a kernel (Triton's tl.device_print and tl.device_assert).
#pragma once
#include <string_view>
#include <type_traits>
#include <vector>

#include "tessera/detail/core.hpp"
#include "tessera/tile.hpp"

namespace tessera {

// ts::device_print("x", x, y) prints one line per element of each tile (and one per scalar), from
// every program that reaches it, in the text Triton 3.6's GPU prints (each index padded to
// ceil(log10(dim)) digits, "idx ()" for a scalar):
//   pid (0, 0, 0) idx ( 3) x: 1.500000
//   pid (0, 0, 0) idx ( 3) x: (operand 1) 7
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
    detail::emit_print(prefix, {values.ir_value(loc)...}, /*hex=*/false, loc);
  }
};
template <class... Values>
device_print(std::string_view, const Values&...) -> device_print<Values...>;

// ts::device_print_hex("bits", x) is device_print with Triton's hex=True: each value's bits in
// hex, as many digits as its width has (0x%08x for 32 bits, 0x%04x for 16, 0x%016llx for 64).
// A float prints its bits (Triton passes the float to %x, which prints 0x00000000).
template <class... Values>
struct device_print_hex {
  static_assert((detail::is_tile<Values> && ...),
                "tessera::device_print_hex prints tiles, scalars and pointers of the kernel (Tile<T>, Ptr<T>, Int, ...); "
                "a C++ value is known at trace time: print it from C++");
  explicit device_print_hex(std::string_view prefix, const Values&... values, const Loc& loc = Loc::current()) {
    detail::emit_print(prefix, {values.ir_value(loc)...}, /*hex=*/true, loc);
  }
};
template <class... Values>
device_print_hex(std::string_view, const Values&...) -> device_print_hex<Values...>;

// ts::device_assert(offs < n, "offset past the end") checks every element of a boolean tile (or a
// scalar) in every program that reaches it; a false one stops the launch with an error naming the
// C++ file and line, the program id, the element's index and the message (Triton's
// tl.device_assert). The interpreter always checks. Compiled code checks only in debug mode, as
// Triton's debug=True: CompileOptions::debug or TESSERA_DEBUG=1, which also checks signed integer
// + - * for overflow; otherwise the assert costs nothing. On the GPU, a failed check prints
//   pid (2, 0, 0) idx (5) device_assert at kernel.cpp:12 failed: offset past the end
// and the CUDA runtime's "Assertion ... failed" line, and traps: as after any device assert, the
// CUDA context is then unusable (the launch's error is CUDA_ERROR_ASSERT) and the process must
// restart. The host targets throw a ProgramError once the launch ends; AMD targets refuse it.
template <class Cond>
void device_assert(const Cond& cond, std::string_view message = "", const Loc& loc = Loc::current()) {
  static_assert(detail::is_tile<Cond>,
                "tessera::device_assert checks a condition of the kernel (a Mask such as `offs < n`); a C++ bool is "
                "known at trace time: check it with static_assert or assert in C++");
  if constexpr (detail::is_tile<Cond>) {
    static_assert(std::is_same_v<detail::elem_t<Cond>, bool>,
                  "tessera::device_assert needs a boolean condition (a Mask): compare the value, e.g. `x != 0`");
    detail::emit_assert(cond.ir_value(loc), message, loc);
  }
}

}  // namespace tessera
