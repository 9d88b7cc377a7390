// print (ops.def): device_print on the interpreter. One line per element of each operand, in
// row-major order, through the printf format every lowering uses (print_format.hpp), so that the
// interpreter prints what the GPU prints.
#include <bit>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "jit/interp/ops.hpp"
#include "jit/ir/print_format.hpp"

namespace tessera::interp {
namespace {

// snprintf of `format` with the ints `head` (the program ids, then the element's index) and then
// `value`: the argument list is fixed at C++ compile time, so each head length has its own call.
template <class V>
std::string format_line(const std::string& format, const std::vector<int>& head, V value) {
  auto print = [&](auto... ints) {
    const int n = std::snprintf(nullptr, 0, format.c_str(), ints..., value);
    if (n < 0) return std::string("<device_print: unprintable line>\n");
    std::string s(static_cast<std::size_t>(n) + 1, '\0');
    std::snprintf(s.data(), s.size(), format.c_str(), ints..., value);
    s.pop_back();
    return s;
  };
  static_assert(ir::kMaxPrintRank == 4, "one case per head length below");
  switch (head.size()) {
    case 3: return print(head[0], head[1], head[2]);
    case 4: return print(head[0], head[1], head[2], head[3]);
    case 5: return print(head[0], head[1], head[2], head[3], head[4]);
    case 6: return print(head[0], head[1], head[2], head[3], head[4], head[5]);
    case 7: return print(head[0], head[1], head[2], head[3], head[4], head[5], head[6]);
  }
  throw InternalError("interpreter: device_print of a tile of more than 4 dims");
}

// The bits of element i of `t`, zero-extended.
std::uint64_t element_bits(const Tile& t, std::int64_t i) {
  return visit_dtype(t.dtype(), [&](auto tag) -> std::uint64_t {
    using T = typename decltype(tag)::type;
    const T v = t.data<T>()[i];
    if constexpr (sizeof(T) == 8) return std::bit_cast<std::uint64_t>(v);
    else if constexpr (sizeof(T) == 4) return std::bit_cast<std::uint32_t>(v);
    else if constexpr (sizeof(T) == 2) return std::bit_cast<std::uint16_t>(v);
    else return std::bit_cast<std::uint8_t>(v);
  });
}

// Element i of `t` as the C type its conversion reads (print_format.hpp's PrintArg).
std::string element_line(const std::string& format, const std::vector<int>& head, const Tile& t, std::int64_t i,
                         bool hex) {
  switch (ir::print_arg(t.dtype(), hex)) {
    case ir::PrintArg::Bits32: return format_line(format, head, static_cast<unsigned>(element_bits(t, i)));
    case ir::PrintArg::Bits64: return format_line(format, head, static_cast<unsigned long long>(element_bits(t, i)));
    case ir::PrintArg::Int: return format_line(format, head, static_cast<int>(int_element(t, i)));
    case ir::PrintArg::Unsigned: return format_line(format, head, static_cast<unsigned>(int_element(t, i)));
    case ir::PrintArg::Int64: return format_line(format, head, static_cast<long long>(int_element(t, i)));
    case ir::PrintArg::Unsigned64:
      return format_line(format, head, static_cast<unsigned long long>(int_element(t, i)));
    case ir::PrintArg::Address:
      return format_line(format, head, static_cast<unsigned long long>(int_element(t, i)));
    case ir::PrintArg::Double:
      return visit_dtype(t.dtype(), [&](auto tag) -> std::string {
        using T = typename decltype(tag)::type;
        if constexpr (is_float_storage_v<T>)
          return format_line(format, head, static_cast<double>(to_compute(t.data<T>()[i])));
        else
          throw InternalError("interpreter: device_print of a float that is not stored as one");
      });
  }
  throw InternalError("interpreter: device_print of an unknown kind of value");
}

}  // namespace

void exec_print(const ir::Op& op, const ProgramPoint& p, const std::vector<const Tile*>& operands) {
  const std::string prefix = op.string_attr("prefix");
  const bool hex = op.has_attr("hex") && op.int_attr("hex") != 0;
  const std::vector<int> pid = {static_cast<int>(p.id[0]), static_cast<int>(p.id[1]), static_cast<int>(p.id[2])};
  std::string out;
  if (operands.empty()) out = format_line(ir::print_bare_format(prefix), pid, 0);
  for (std::size_t o = 0; o < operands.size(); ++o) {
    const Tile& t = *operands[o];
    const std::string format =
        ir::print_line_format(prefix, op.operands[o]->type, static_cast<int>(o), static_cast<int>(operands.size()), hex);
    const std::vector<std::int64_t> strides = row_major_strides(t.shape());
    for (std::int64_t i = 0; i < t.numel(); ++i) {
      std::vector<int> head = pid;
      for (std::size_t d = 0; d < strides.size(); ++d) head.push_back(static_cast<int>(i / strides[d] % t.shape()[d]));
      out += element_line(format, head, t, i, hex);
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

}  // namespace tessera::interp
