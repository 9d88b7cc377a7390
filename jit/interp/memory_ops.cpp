// addptr, load and store. Masked-off lanes are never read or written, as on the device.
#include <fmt/format.h>

#include <cstring>

#include "jit/interp/memory.hpp"

namespace tessera::interp {
namespace {

const std::uint8_t* mask_data(const ir::Op& op, const Tile* mask, const std::vector<std::int64_t>& shape,
                              Tile& scratch) {
  if (!mask) return nullptr;
  if (mask->dtype() != DType::I1) internal_error(op, "mask is not i1");
  return as_shape(*mask, shape, scratch, op).data<std::uint8_t>();
}

// The per-lane copy with the element size known at compile time, so memcpy becomes one move.
template <int EB>
void gather(const std::uint64_t* addr, const std::uint8_t* mask, std::byte* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i)
    if (!mask || mask[i]) std::memcpy(out + i * EB, reinterpret_cast<const void*>(addr[i]), EB);
}

template <int EB>
void scatter(const std::uint64_t* addr, const std::uint8_t* mask, const std::byte* in, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i)
    if (!mask || mask[i]) std::memcpy(reinterpret_cast<void*>(addr[i]), in + i * EB, EB);
}

void check_pointers(const ir::Op& op, const Tile& ptrs, DType elem) {
  if (ptrs.dtype() != DType::Ptr) internal_error(op, "the address operand is not a pointer");
  if (ptrs.pointee() != elem)
    internal_error(op, fmt::format("pointer to {} used for {} elements", ir::dtype_name(ptrs.pointee()),
                                   ir::dtype_name(elem)));
}

}  // namespace

Tile eval_addptr(const ir::Op& op, const Tile& ptr_in, const Tile& off_in) {
  const ir::Type& rt = op.result()->type;
  if (ptr_in.dtype() != DType::Ptr || !ir::is_int(off_in.dtype()))
    internal_error(op, "addptr needs a pointer and an integer offset");
  Tile sp, so;
  const Tile& p = as_shape(ptr_in, rt.shape, sp, op);
  const Tile& off = as_shape(off_in, rt.shape, so, op);
  Tile out(rt);
  const auto scale = static_cast<std::uint64_t>(ir::dtype_bytes(ptr_in.pointee()));
  const auto* base = p.data<std::uint64_t>();
  auto* o = out.data<std::uint64_t>();
  visit_dtype(off.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_float_storage_v<T>) {
      const T* x = off.data<T>();
      // static_cast to uint64 sign-extends signed offsets and zero-extends unsigned ones.
      for (std::int64_t i = 0; i < out.numel(); ++i) o[i] = base[i] + static_cast<std::uint64_t>(x[i]) * scale;
    }
  });
  return out;
}

Tile eval_load(const ir::Op& op, const MemoryMap& mem, const Tile& ptrs, const Tile* mask, const Tile* other) {
  return eval_load(op, mem, op.result()->type, ptrs, mask, other);
}

Tile eval_load(const ir::Op& op, const MemoryMap& mem, const ir::Type& rt, const Tile& ptrs, const Tile* mask,
               const Tile* other) {
  check_pointers(op, ptrs, rt.dtype);
  if (ptrs.numel() != rt.numel()) internal_error(op, "pointer tile and result differ in shape");
  Tile mask_scratch;
  const std::uint8_t* m = mask_data(op, mask, rt.shape, mask_scratch);
  mem.check(op, ptrs, m, ir::dtype_bytes(rt.dtype), Access::Load);

  Tile out(rt);  // zero where masked off and no `other`
  if (other) {
    if (other->dtype() != rt.dtype) internal_error(op, "`other` differs from the loaded type");
    Tile other_scratch;
    const Tile& o = as_shape(*other, rt.shape, other_scratch, op);
    std::memcpy(out.raw(), o.raw(), static_cast<std::size_t>(out.numel() * out.elem_bytes()));
  }
  const auto* addr = ptrs.data<std::uint64_t>();
  switch (out.elem_bytes()) {
    case 1: gather<1>(addr, m, out.raw(), out.numel()); break;
    case 2: gather<2>(addr, m, out.raw(), out.numel()); break;
    case 4: gather<4>(addr, m, out.raw(), out.numel()); break;
    case 8: gather<8>(addr, m, out.raw(), out.numel()); break;
    default: internal_error(op, fmt::format("elements of {} bytes", out.elem_bytes()));
  }
  if (rt.dtype == DType::I1) {  // any non-zero byte in memory is true
    auto* b = out.data<std::uint8_t>();
    for (std::int64_t i = 0; i < out.numel(); ++i) b[i] = b[i] != 0;
  }
  return out;
}

void eval_store(const ir::Op& op, const MemoryMap& mem, const Tile& ptrs, const Tile& value_in, const Tile* mask) {
  check_pointers(op, ptrs, value_in.dtype());
  Tile value_scratch, mask_scratch;
  const Tile& value = as_shape(value_in, ptrs.shape(), value_scratch, op);
  const std::uint8_t* m = mask_data(op, mask, ptrs.shape(), mask_scratch);
  mem.check(op, ptrs, m, value.elem_bytes(), Access::Store);
  const auto* addr = ptrs.data<std::uint64_t>();
  switch (value.elem_bytes()) {
    case 1: scatter<1>(addr, m, value.raw(), value.numel()); break;
    case 2: scatter<2>(addr, m, value.raw(), value.numel()); break;
    case 4: scatter<4>(addr, m, value.raw(), value.numel()); break;
    case 8: scatter<8>(addr, m, value.raw(), value.numel()); break;
    default: internal_error(op, fmt::format("elements of {} bytes", value.elem_bytes()));
  }
}

}  // namespace tessera::interp
