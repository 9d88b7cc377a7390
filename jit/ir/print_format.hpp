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
// Triton prints them), pointers as their address (0x%llx). In hex (device_print_hex) a number's
// bits: up to 32 of them zero-extended to unsigned (0x%08x for 32, 0x%04x for 16, ...), 64 as
// unsigned long long (0x%016llx); floats too (Triton passes their value to %x, which prints junk).
enum class PrintArg { Int, Unsigned, Int64, Unsigned64, Double, Address, Bits32, Bits64 };
PrintArg print_arg(DType d, bool hex = false);

// The prefix as Triton 3.6 normalizes it when there are values to print: it ends in ": " and a
// prefix longer than two characters starts with a space ("x" -> " x: ").
std::string normalized_print_prefix(std::string_view prefix, bool has_values);

// The format of the line for one element of operand `operand` (of `operands`) of type `t`, the
// prefix already normalized: "pid (%d, %d, %d)", then " idx (%2d, %d)" (one per dim, padded to
// ceil(log10(dim)) digits as Triton 3.6 pads them; " idx ()" for a scalar), the prefix with '%'
// escaped, "(operand i) " when there are several operands, the value (in hex when `hex`), "\n".
// The arguments: the three program ids, the element's index per dim (ints), then the value.
std::string print_line_format(std::string_view prefix, const Type& t, int operand, int operands, bool hex);
// The line of a print without operands: "pid (%d, %d, %d)" and the prefix.
std::string print_bare_format(std::string_view prefix);

// Why `prefix` cannot be a device_print prefix ("" when it can): printable ASCII only.
std::string print_prefix_problem(std::string_view prefix);

// The line a failed check writes before it stops the launch (device_assert, and the overflow checks
// of debug mode): "pid (%d, %d, %d)", " idx (%d, ...)" for a tile (unpadded), then `text` ('%'
// escaped).
// The arguments: the three program ids and the failing element's index per dim.
std::string failure_line_format(std::string_view text, const Type& t);
// The line of a failed bounds check of debug mode: "pid (%d, %d, %d)", " idx (%d, ...)" for a tile,
// then " ACCESS out of bounds of ARGUMENT (byte offset %lld, extent %llu) at WHERE". The arguments:
// the three program ids, the element's index per dim, the offset (i64) and the extent (i64).
std::string bounds_failure_format(const Type& t, std::string_view access, std::string_view argument,
                                  std::string_view where);
// What a failed device_assert says after the index: " device_assert at FILE:LINE failed: MESSAGE".
std::string assert_failure_text(std::string_view where, std::string_view message);
// Why `message` cannot be a device_assert message ("" when it can): printable ASCII only.
std::string assert_message_problem(std::string_view message);
// Why a condition of type `t` cannot be checked ("" when it can): more than kMaxPrintRank dims
// (the failure line names the element's index through the same fixed argument list as print).
std::string assert_condition_problem(const Type& t);

// The most dims of a printed tile (the interpreter passes the index through a fixed argument list).
inline constexpr int kMaxPrintRank = 4;
// Why a value of type `t` cannot be printed ("" when it can): more than kMaxPrintRank dims.
std::string print_operand_problem(const Type& t);

}  // namespace tessera::ir
