// assert (ops.def): device_assert on the interpreter, which checks in every mode. The first false
// element, in row-major order, is a ProgramError with the line compiled code prints
// (print_format.hpp): "pid (x, y, z) idx (i, j) device_assert at FILE:LINE failed: MESSAGE".
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "jit/interp/ops.hpp"
#include "jit/ir/print_format.hpp"
#include "tessera/error.hpp"

namespace tessera::interp {

void exec_assert(const ir::Op& op, const ProgramPoint& p, const Tile& cond) {
  for (std::int64_t i = 0; i < cond.numel(); ++i) {
    if (int_element(cond, i) != 0) continue;
    std::vector<std::int64_t> index;
    const std::vector<std::int64_t> strides = row_major_strides(cond.shape());
    for (std::size_t d = 0; d < strides.size(); ++d) index.push_back(i / strides[d] % cond.shape()[d]);
    const std::string element = cond.shape().empty() ? "" : fmt::format(" idx ({})", fmt::join(index, ", "));
    throw ProgramError(fmt::format("pid ({}, {}, {}){}{}", p.id[0], p.id[1], p.id[2], element,
                                   ir::assert_failure_text(op.loc.str(), op.string_attr("message"))));
  }
}

}  // namespace tessera::interp
