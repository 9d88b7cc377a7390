#include "jit/ir/print_format.hpp"

#include <fmt/format.h>

namespace tessera::ir {

PrintArg print_arg(DType d) {
  if (d == DType::Ptr) return PrintArg::Address;
  if (is_float(d)) return PrintArg::Double;
  if (dtype_bits(d) == 64) return PrintArg::Int64;
  return is_unsigned(d) && d != DType::I1 ? PrintArg::Unsigned : PrintArg::Int;
}

namespace {

const char* value_conversion(PrintArg a) {
  switch (a) {
    case PrintArg::Int: return "%d";
    case PrintArg::Unsigned: return "%u";
    case PrintArg::Int64: return "%lld";
    case PrintArg::Double: return "%f";
    case PrintArg::Address: return "0x%llx";
  }
  return "%d";
}

// The program ids, then the prefix with every '%' doubled (it is text, not a conversion).
std::string head(std::string_view prefix, const Type& t) {
  std::string f = "pid (%d, %d, %d)";
  if (t.is_tile()) {
    f += " idx (";
    for (std::size_t d = 0; d < t.shape.size(); ++d) f += d ? ", %d" : "%d";
    f += ")";
  }
  for (char c : prefix) f += c == '%' ? std::string("%%") : std::string(1, c);
  return f;
}

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

std::string print_line_format(std::string_view prefix, const Type& t, int operand, int operands) {
  std::string f = head(prefix, t);
  if (operands > 1) f += fmt::format("(operand {}) ", operand);
  return f + value_conversion(print_arg(t.dtype)) + "\n";
}

std::string print_bare_format(std::string_view prefix) { return head(prefix, Type::scalar(DType::I32)) + "\n"; }

std::string print_operand_problem(const Type& t) {
  if (t.shape.size() <= static_cast<std::size_t>(kMaxPrintRank)) return "";
  return fmt::format("device_print of {}: tiles of more than {} dims cannot be printed; reshape it first", to_string(t),
                     kMaxPrintRank);
}

std::string print_prefix_problem(std::string_view prefix) {
  for (char c : prefix)
    if (c < 0x20 || c > 0x7e)
      return fmt::format("a device_print prefix must be printable ASCII (no newline or control character); byte 0x{:02x} "
                         "is not",
                         static_cast<unsigned char>(c));
  return "";
}

}  // namespace tessera::ir
