// assume (ts::max_contiguous / ts::multiple_of): the value passes through unchanged, and the
// promise the compiled code relies on is checked on this program's values (ops.def `assume`).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "jit/interp/ops.hpp"

namespace tessera::interp {
namespace {
using I = std::int64_t;

// "[i, j]": element `flat`'s coordinates, for messages.
std::string coords(I flat, const std::vector<I>& shape, const std::vector<I>& strides) {
  std::vector<I> c;
  for (std::size_t d = 0; d < shape.size(); ++d) c.push_back(flat / strides[d] % shape[d]);
  return fmt::format("[{}]", fmt::join(c, ", "));
}

}  // namespace

void check_assume(const ir::Op& op, const Tile& x, const std::vector<I>& divisibility_groups) {
  const std::vector<I>& shape = x.shape();
  const std::vector<I> strides = row_major_strides(shape);
  // A pointer counts in pointees and divides in bytes; a scalar has one "dim" of one element.
  const I step = x.dtype() == ir::DType::Ptr ? ir::dtype_bytes(x.pointee()) : 1;
  const std::size_t dims = std::max<std::size_t>(1, shape.size());
  auto pos = [&](I flat, std::size_t d) { return shape.empty() ? I{0} : flat / strides[d] % shape[d]; };
  const auto* contiguity = op.int_list_attr("contiguity");
  const auto* divisibility = op.int_list_attr("divisibility");
  for (I i = 0; i < x.numel(); ++i)
    for (std::size_t d = 0; d < dims; ++d) {
      const I at = pos(i, d), v = int_element(x, i);
      if (contiguity && at % (*contiguity)[d] != 0) {
        // Unsigned difference: addresses and u32 values compare without overflow.
        const I before = int_element(x, i - strides[d]);
        if (static_cast<std::uint64_t>(v) - static_cast<std::uint64_t>(before) != static_cast<std::uint64_t>(step))
          throw ProgramError(fmt::format(
              "max_contiguous at {}: the promise that runs of {} along dim {} count up by one is broken: element {} "
              "is {} after {}",
              op.loc.str(), (*contiguity)[d], d, coords(i, shape, strides), v, before));
      }
      if (divisibility && at % divisibility_groups[d] == 0 && v % (*divisibility)[d] != 0)
        throw ProgramError(fmt::format(
            "multiple_of at {}: the promise that {} is a multiple of {} is broken: element {} (the first of a run "
            "of {} along dim {}) is {}",
            op.loc.str(), x.dtype() == ir::DType::Ptr ? "each run's address" : "each run's first value",
            (*divisibility)[d], shape.empty() ? "[]" : coords(i, shape, strides), divisibility_groups[d], d, v));
    }
}

}  // namespace tessera::interp
