// The text device_print writes (ops.def `print`): one line per element of each operand, formatted
// by one printf format that the interpreter (snprintf) and every lowering (vprintf on NVIDIA, a
// host hook on the host targets) share, so that every executor prints the same text.
#pragma once
#include <string>
#include <string_view>

#include "jit/ir/types.hpp"

namespace tessera::ir {

// How a printed value reaches the format, as the C type its conversion reads: bools and ints of
// up to 32 bits as int (%d) or unsigned (%u), i64 as long long (%lld), floats as double (%f, as
// Triton prints them), pointers as their address (0x%llx).
enum class PrintArg { Int, Unsigned, Int64, Double, Address };
PrintArg print_arg(DType d);

// The prefix as Triton 3.6 normalizes it when there are values to print: it ends in ": " and a
// prefix longer than two characters starts with a space ("x" -> " x: ").
std::string normalized_print_prefix(std::string_view prefix, bool has_values);

// The format of the line for one element of operand `operand` (of `operands`) of type `t`, the
// prefix already normalized: "pid (%d, %d, %d)", then " idx (%d, %d)" for a tile (one per dim),
// the prefix with '%' escaped, "(operand i) " when there are several operands, the value, "\n".
// The arguments: the three program ids, the element's index per dim (ints), then the value.
std::string print_line_format(std::string_view prefix, const Type& t, int operand, int operands);
// The line of a print without operands: "pid (%d, %d, %d)" and the prefix.
std::string print_bare_format(std::string_view prefix);

// Why `prefix` cannot be a device_print prefix ("" when it can): printable ASCII only.
std::string print_prefix_problem(std::string_view prefix);

// The most dims of a printed tile (the interpreter passes the index through a fixed argument list).
inline constexpr int kMaxPrintRank = 4;
// Why a value of type `t` cannot be printed ("" when it can): more than kMaxPrintRank dims.
std::string print_operand_problem(const Type& t);

}  // namespace tessera::ir
