#include "jit/interp/tile.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>

#include "jit/interp/convert.hpp"

namespace tessera::interp {

Tile::Tile(DType dtype, DType pointee, std::vector<std::int64_t> shape)
    : dtype_(dtype), pointee_(pointee), shape_(std::move(shape)) {
  // Shapes come from verified IR (at most ir::kMaxTileElements elements), but a tile is also made
  // from unverified input in tests and tools: a size that overflows is refused, not wrapped.
  numel_ = 1;
  for (auto d : shape_)
    if (d < 0 || __builtin_mul_overflow(numel_, d, &numel_))
      throw InternalError(fmt::format("interpreter: a tile of shape [{}] has no valid element count",
                                      fmt::join(shape_, "x")));
  elem_bytes_ = ir::dtype_bytes(dtype_);
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<std::size_t>(numel_), static_cast<std::size_t>(elem_bytes_), &bytes))
    throw InternalError(fmt::format("interpreter: a tile of {} elements does not fit in memory", numel_));
  bytes_.resize(bytes);
}

void Tile::reshape(std::vector<std::int64_t> shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  if (n != numel_)
    throw InternalError(fmt::format("interpreter: reshaping a tile of {} elements to {}", numel_, n));
  shape_ = std::move(shape);
}

void set_from_int(Tile& t, std::int64_t i, std::int64_t v) {
  if (t.dtype() == DType::I1) {
    t.data<std::uint8_t>()[i] = v != 0;
    return;
  }
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    t.data<T>()[i] = cast_elem<T>(v);
  });
}

void set_from_double(Tile& t, std::int64_t i, double v) {
  if (t.dtype() == DType::I1) {
    t.data<std::uint8_t>()[i] = v != 0;
    return;
  }
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    t.data<T>()[i] = cast_elem<T>(v);
  });
}

const Tile& as_shape(const Tile& t, const std::vector<std::int64_t>& shape, Tile& scratch, const ir::Op& op) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  if (t.numel() == n) return t;
  if (t.numel() != 1)
    internal_error(op, fmt::format("an operand has {} elements where {} are expected", t.numel(), n));
  scratch = Tile(t.dtype(), t.pointee(), shape);
  const int eb = t.elem_bytes();
  for (std::int64_t i = 0; i < n; ++i) std::memcpy(scratch.raw() + i * eb, t.raw(), eb);
  return scratch;
}

void internal_error(const ir::Op& op, const std::string& what) {
  throw InternalError(fmt::format("interpreter: {} (op '{}' at {})", what, op.name(), op.loc.str()));
}

std::int64_t int_element(const Tile& t, std::int64_t i) {
  std::int64_t v = 0;
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_float_storage_v<T>) v = static_cast<std::int64_t>(t.data<T>()[i]);
  });
  return v;
}

std::vector<std::int64_t> row_major_strides(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * shape[d + 1];
  return s;
}

}  // namespace tessera::interp
