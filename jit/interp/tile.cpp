#include "jit/interp/tile.hpp"

#include <fmt/format.h>

#include <cstring>

#include "jit/interp/convert.hpp"

namespace tessera::interp {

Tile::Tile(DType dtype, DType pointee, std::vector<std::int64_t> shape)
    : dtype_(dtype), pointee_(pointee), shape_(std::move(shape)) {
  numel_ = 1;
  for (auto d : shape_) numel_ *= d;
  elem_bytes_ = ir::dtype_bytes(dtype_);
  bytes_.resize(static_cast<std::size_t>(numel_) * static_cast<std::size_t>(elem_bytes_));
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

}  // namespace tessera::interp
