// atomic_rmw and atomic_cas on the interpreter. Programs run one after another and lanes in
// order, so each lane's read-modify-write sees every earlier one: a sequentially consistent
// execution, which every memory semantics and scope of ops.def allows. Masked-off lanes are not
// touched and return 0; active lanes get the memory checks of loads and stores.
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "jit/interp/memory.hpp"

namespace tessera::interp {
namespace {

void check_operand(const ir::Op& op, const Tile& ptrs, const Tile& value) {
  if (ptrs.dtype() != DType::Ptr) internal_error(op, "the address operand is not a pointer");
  if (ptrs.pointee() != value.dtype())
    internal_error(op, fmt::format("pointer to {} used for {} elements", ir::dtype_name(ptrs.pointee()),
                                   ir::dtype_name(value.dtype())));
}

// The element at an address, through memcpy: host buffers need not be aligned for T's object.
template <class T>
T read(std::uint64_t addr) {
  T v;
  std::memcpy(&v, reinterpret_cast<const void*>(addr), sizeof(T));
  return v;
}
template <class T>
void write(std::uint64_t addr, T v) {
  std::memcpy(reinterpret_cast<void*>(addr), &v, sizeof(T));
}

// max/min of floats as fmax/fmin (a NaN operand yields the other), ints signed or unsigned per T.
template <class T>
T combine(const std::string& kind, const ir::Op& op, T old, T val) {
  if constexpr (is_float_storage_v<T>) {
    const auto a = to_compute(old), b = to_compute(val);
    if (kind == "add") return from_compute<T>(a + b);  // f16/bf16: add in f32, round once
    if (kind == "max") return from_compute<T>(std::fmax(a, b));
    if (kind == "min") return from_compute<T>(std::fmin(a, b));
    if (kind == "xchg") return val;
  } else {
    using U = std::make_unsigned_t<T>;  // wrapping add without signed overflow
    if (kind == "add") return static_cast<T>(static_cast<U>(old) + static_cast<U>(val));
    if (kind == "max") return old < val ? val : old;
    if (kind == "min") return val < old ? val : old;
    if (kind == "and") return static_cast<T>(old & val);
    if (kind == "or") return static_cast<T>(old | val);
    if (kind == "xchg") return val;
  }
  internal_error(op, fmt::format("atomic '{}' on {}", kind, ir::dtype_name(op.result()->type.dtype)));
}

const std::string& string_attr(const ir::Op& op, const char* name) {
  auto it = op.attrs.find(name);
  const auto* s = it == op.attrs.end() ? nullptr : std::get_if<std::string>(&it->second);
  if (!s) internal_error(op, fmt::format("missing string attribute '{}'", name));
  return *s;
}

// The supported element types (verifier_atomics.cpp); anything else is an InternalError.
template <class F>
void visit_atomic_dtype(const ir::Op& op, DType d, F&& f) {
  switch (d) {
    case DType::I32: return f(TypeTag<std::int32_t>{});
    case DType::U32: return f(TypeTag<std::uint32_t>{});
    case DType::I64: return f(TypeTag<std::int64_t>{});
    case DType::U64: return f(TypeTag<std::uint64_t>{});
    case DType::F16: return f(TypeTag<F16>{});
    case DType::BF16: return f(TypeTag<BF16>{});
    case DType::F32: return f(TypeTag<float>{});
    case DType::F64: return f(TypeTag<double>{});
    default: internal_error(op, fmt::format("atomics on {} elements", ir::dtype_name(d)));
  }
}

}  // namespace

Tile eval_atomic_rmw(const ir::Op& op, const MemoryMap& mem, const Tile& ptrs, const Tile& value_in,
                     const Tile* mask_in) {
  check_operand(op, ptrs, value_in);
  Tile value_scratch, mask_scratch;
  const Tile& value = as_shape(value_in, ptrs.shape(), value_scratch, op);
  const std::uint8_t* m = mask_in ? as_shape(*mask_in, ptrs.shape(), mask_scratch, op).data<std::uint8_t>() : nullptr;
  mem.check(op, ptrs, m, value.elem_bytes(), Access::Atomic);
  const std::string& kind = string_attr(op, "op");
  Tile out(op.result()->type);  // zero where masked off
  const auto* addr = ptrs.data<std::uint64_t>();
  visit_atomic_dtype(op, value.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* v = value.data<T>();
    T* o = out.data<T>();
    for (std::int64_t i = 0; i < ptrs.numel(); ++i) {
      if (m && !m[i]) continue;
      const T old = read<T>(addr[i]);
      write<T>(addr[i], combine<T>(kind, op, old, v[i]));
      o[i] = old;
    }
  });
  return out;
}

Tile eval_atomic_cas(const ir::Op& op, const MemoryMap& mem, const Tile& ptrs, const Tile& cmp_in,
                     const Tile& value_in) {
  check_operand(op, ptrs, value_in);
  check_operand(op, ptrs, cmp_in);
  Tile value_scratch, cmp_scratch;
  const Tile& value = as_shape(value_in, ptrs.shape(), value_scratch, op);
  const Tile& cmp = as_shape(cmp_in, ptrs.shape(), cmp_scratch, op);
  mem.check(op, ptrs, nullptr, value.elem_bytes(), Access::Atomic);
  Tile out(op.result()->type);
  const auto* addr = ptrs.data<std::uint64_t>();
  const auto eb = static_cast<std::size_t>(value.elem_bytes());
  for (std::int64_t i = 0; i < ptrs.numel(); ++i) {
    // Bit patterns compare, as the hardware's compare-and-swap does (floats too: -0.0 != 0.0).
    std::byte* old = out.raw() + i * eb;
    std::memcpy(old, reinterpret_cast<const void*>(addr[i]), eb);
    if (std::memcmp(old, cmp.raw() + i * eb, eb) == 0)
      std::memcpy(reinterpret_cast<void*>(addr[i]), value.raw() + i * eb, eb);
  }
  return out;
}

}  // namespace tessera::interp
