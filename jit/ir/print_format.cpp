#include "jit/ir/print_format.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace tessera::ir {

PrintArg print_arg(DType d, bool hex) {
  if (d == DType::Ptr) return PrintArg::Address;
  if (hex) return dtype_bits(d) == 64 ? PrintArg::Bits64 : PrintArg::Bits32;
  if (is_float(d)) return PrintArg::Double;
  if (dtype_bits(d) == 64) return is_unsigned(d) ? PrintArg::Unsigned64 : PrintArg::Int64;
  return is_unsigned(d) && d != DType::I1 ? PrintArg::Unsigned : PrintArg::Int;
}

namespace {

// The conversion of a value of type `d`; hex: Triton's "0x%0Nx", N hex digits of the type's width.
std::string value_conversion(DType d, bool hex) {
  const PrintArg a = print_arg(d, hex);
  switch (a) {
    case PrintArg::Int: return "%d";
    case PrintArg::Unsigned: return "%u";
    case PrintArg::Int64: return "%lld";
    case PrintArg::Unsigned64: return "%llu";
    case PrintArg::Double: return "%f";
    case PrintArg::Address: return "0x%llx";
    case PrintArg::Bits32: return fmt::format("0x%0{}x", std::max(1, dtype_bits(d) / 4));
    case PrintArg::Bits64: return "0x%016llx";
  }
  return "%d";
}

// Text, with every '%' doubled (it is not a conversion).
std::string escaped(std::string_view text) {
  std::string f;
  for (char c : text) f += c == '%' ? std::string("%%") : std::string(1, c);
  return f;
}

// " idx (%d, %d)" for a value of type t: one conversion per dim, padded as Triton pads it (to
// ceil(log10(dim)) digits, so that a dim of 16 prints " 3") when `padded`; " idx ()" for a scalar.
std::string index_format(const Type& t, bool padded) {
  std::string f = " idx (";
  for (std::size_t d = 0; d < t.shape.size(); ++d) {
    int width = 0;
    for (std::int64_t reach = 1; reach < t.shape[d]; reach *= 10) ++width;  // ceil(log10(dim))
    f += d ? ", " : "";
    f += padded && width > 1 ? fmt::format("%{}d", width) : std::string("%d");
  }
  return f + ")";
}

const char* kPidFormat = "pid (%d, %d, %d)";

}  // namespace

std::string normalized_print_prefix(std::string_view prefix, bool has_values) {
  std::string p(prefix);
  if (has_values) {
    if (p.empty() || p.back() != ' ') p += ' ';
    if (p.size() < 2 || p.compare(p.size() - 2, 2, ": ") != 0) p = p.substr(0, p.size() - 1) + ": ";
  }
  if (p.size() > 2 && p.front() != ' ') p = " " + p;
  return p;
}

std::string print_line_format(std::string_view prefix, const Type& t, int operand, int operands, bool hex) {
  std::string f = kPidFormat + index_format(t, /*padded=*/true) + escaped(prefix);
  if (operands > 1) f += fmt::format("(operand {}) ", operand);
  return f + value_conversion(t.dtype, hex) + "\n";
}

std::string print_bare_format(std::string_view prefix) { return kPidFormat + escaped(prefix) + "\n"; }

namespace {
// A failed check's line up to its text: the program, and the element's index for a tile (unpadded).
std::string failure_prefix(const Type& t) {
  return kPidFormat + (t.is_tile() ? index_format(t, /*padded=*/false) : std::string());
}
}  // namespace

std::string failure_line_format(std::string_view text, const Type& t) {
  return failure_prefix(t) + escaped(text) + "\n";
}

std::string bounds_failure_format(const Type& t, std::string_view access, std::string_view argument,
                                  std::string_view where) {
  return failure_prefix(t) + " " + escaped(access) + " out of bounds of " + escaped(argument) +
         " (byte offset %lld, extent %llu) at " + escaped(where) + "\n";
}

std::string assert_failure_text(std::string_view where, std::string_view message) {
  return fmt::format(" device_assert at {} failed: {}", where, message);
}

namespace {
// Printable ASCII: the text goes into a printf format and, on NVIDIA, __assertfail's message.
std::string printable_problem(std::string_view what, std::string_view text) {
  for (char c : text)
    if (c < 0x20 || c > 0x7e)
      return fmt::format("{} must be printable ASCII (no newline or control character); byte 0x{:02x} is not", what,
                         static_cast<unsigned char>(c));
  return "";
}
}  // namespace

std::string assert_message_problem(std::string_view message) {
  return printable_problem("a device_assert message", message);
}

std::string assert_condition_problem(const Type& t) {
  if (t.shape.size() <= static_cast<std::size_t>(kMaxPrintRank)) return "";
  return fmt::format("device_assert of {}: conditions of more than {} dims cannot be checked; reshape it first",
                     to_string(t), kMaxPrintRank);
}

std::string print_operand_problem(const Type& t) {
  if (t.shape.size() <= static_cast<std::size_t>(kMaxPrintRank)) return "";
  return fmt::format("device_print of {}: tiles of more than {} dims cannot be printed; reshape it first", to_string(t),
                     kMaxPrintRank);
}

std::string print_prefix_problem(std::string_view prefix) { return printable_problem("a device_print prefix", prefix); }

}  // namespace tessera::ir
