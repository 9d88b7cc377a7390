// Atomic read-modify-write on pointers and pointer tiles, in Triton's vocabulary:
//   old = ts::atomic_add(ptr, val [, mask] [, sem [, scope]]);   // also _max _min _and _or _xchg
//   old = ts::atomic_cas(ptr, cmp, val [, sem [, scope]]);
// Each returns the values memory held before (a tile, or a scalar for a scalar pointer); masked-off
// lanes touch nothing and return 0. `val`, `cmp` and the mask broadcast to the pointer's shape.
// Defaults as in Triton: Sem::AcqRel and Scope::Gpu. Every element of a tile is updated exactly
// once per program, however the tile is spread over threads.
//
// Element types (anything else is a compile-time error):
//   add            int32_t uint32_t int64_t uint64_t float double half bfloat16 (half/bfloat16: native on
//                  sm_90, a compare-and-swap loop on older GPUs)
//   max min xchg   int32_t uint32_t int64_t uint64_t float double (floats: like fmax/fmin)
//   and or         int32_t uint32_t int64_t uint64_t
//   cas            int32_t uint32_t int64_t uint64_t float double (floats compare bit patterns)
#pragma once
#include <cstdint>
#include <type_traits>

#include "tessera/element.hpp"
#include "tessera/tile.hpp"

namespace tessera {

// Memory ordering of an atomic (LLVM: monotonic, acquire, release, acq_rel).
enum class Sem : std::uint8_t { Relaxed, Acquire, Release, AcqRel };
// Which threads the ordering is with: the program (CTA), the whole GPU, or the system (host too).
enum class Scope : std::uint8_t { Cta, Gpu, Sys };

namespace detail {

enum class AtomicOp : std::uint8_t { Add, Max, Min, And, Or, Xchg, Cas };

// tessera::Scope spelled out: the tracer has a detail::Scope of its own (dsl/src/trace_state.hpp).
TESSERA_API ir::Value* emit_atomic_rmw(AtomicOp op, ir::Value* ptr, ir::Value* val, ir::Value* mask, Sem sem,
                                       tessera::Scope scope, const Loc& loc);
TESSERA_API ir::Value* emit_atomic_cas(ir::Value* ptr, ir::Value* cmp, ir::Value* val, Sem sem,
                                       tessera::Scope scope, const Loc& loc);

template <class T>
inline constexpr bool atomic_int = std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::uint32_t> ||
                                   std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint64_t>;
template <class T>
inline constexpr bool atomic_float = std::is_same_v<T, float> || std::is_same_v<T, double>;

// The table above; verifier_atomics.cpp holds the same one for IR that does not come from here.
template <AtomicOp Op, class T>
inline constexpr bool atomic_supported =
    Op == AtomicOp::And || Op == AtomicOp::Or ? atomic_int<T>
    : Op == AtomicOp::Add ? atomic_int<T> || atomic_float<T> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16>
                          : atomic_int<T> || atomic_float<T>;

template <class T, class V>
inline constexpr bool atomic_value = CppScalar<V> || std::is_same_v<V, Tile<T>>;

template <AtomicOp Op, class T, class V>
Tile<T> atomic_rmw(const Tile<Pointer<T>>& ptr, const V& val, const Tile<bool>* mask, Sem sem,
                   tessera::Scope scope, const Loc& loc) {
  ir::Value* m = mask ? mask->ir_value(loc) : nullptr;
  return Tile<T>(emit_atomic_rmw(Op, ptr.ir_value(loc), operand_value(val, dtype_of<T>, {}, loc), m, sem, scope, loc),
                 loc);
}

}  // namespace detail

#define TESSERA_ATOMIC_RMW(name, OP, types)                                                                   \
  template <class T, class V>                                                                              \
  Tile<T> name(const Ptr<T>& ptr, const V& val, Sem sem = Sem::AcqRel, Scope scope = Scope::Gpu,           \
               const Loc& loc = Loc::current()) {                                                          \
    static_assert(detail::atomic_supported<detail::AtomicOp::OP, T>, "tessera::" #name " supports " types); \
    static_assert(detail::atomic_value<T, V>,                                                              \
                  "tessera::" #name ": the value must be a C++ number or a tile of the pointee type; "     \
                  "convert it with .to<T>()");                                                             \
    return detail::atomic_rmw<detail::AtomicOp::OP, T>(ptr, val, nullptr, sem, scope, loc);                \
  }                                                                                                        \
  template <class T, class V, class M>                                                                     \
  Tile<T> name(const Ptr<T>& ptr, const V& val, const Tile<M>& mask, Sem sem = Sem::AcqRel,                \
               Scope scope = Scope::Gpu, const Loc& loc = Loc::current()) {                                \
    static_assert(detail::atomic_supported<detail::AtomicOp::OP, T>, "tessera::" #name " supports " types); \
    static_assert(detail::atomic_value<T, V>,                                                              \
                  "tessera::" #name ": the value must be a C++ number or a tile of the pointee type; "     \
                  "convert it with .to<T>()");                                                             \
    static_assert(std::is_same_v<M, bool>,                                                                 \
                  "tessera::" #name ": the mask must be a Tile<bool>; compare to make one, e.g. offs < n"); \
    if constexpr (std::is_same_v<M, bool>)                                                                 \
      return detail::atomic_rmw<detail::AtomicOp::OP, T>(ptr, val, &mask, sem, scope, loc);                \
    else                                                                                                   \
      return {};                                                                                           \
  }
TESSERA_ATOMIC_RMW(atomic_add, Add, "int32_t, uint32_t, int64_t, uint64_t, float, double, half and bfloat16 elements")
TESSERA_ATOMIC_RMW(atomic_max, Max, "int32_t, uint32_t, int64_t, uint64_t, float and double elements")
TESSERA_ATOMIC_RMW(atomic_min, Min, "int32_t, uint32_t, int64_t, uint64_t, float and double elements")
TESSERA_ATOMIC_RMW(atomic_and, And, "int32_t, uint32_t, int64_t and uint64_t elements")
TESSERA_ATOMIC_RMW(atomic_or, Or, "int32_t, uint32_t, int64_t and uint64_t elements")
TESSERA_ATOMIC_RMW(atomic_xchg, Xchg, "int32_t, uint32_t, int64_t, uint64_t, float and double elements")
#undef TESSERA_ATOMIC_RMW

// Where *ptr == cmp, stores val; returns the old values either way (compare them with cmp to
// learn which lanes succeeded).
template <class T, class C, class V>
Tile<T> atomic_cas(const Ptr<T>& ptr, const C& cmp, const V& val, Sem sem = Sem::AcqRel, Scope scope = Scope::Gpu,
                   const Loc& loc = Loc::current()) {
  static_assert(detail::atomic_supported<detail::AtomicOp::Cas, T>,
                "tessera::atomic_cas supports int32_t, uint32_t, int64_t, uint64_t, float and double elements");
  static_assert(detail::atomic_value<T, C> && detail::atomic_value<T, V>,
                "tessera::atomic_cas: cmp and val must be C++ numbers or tiles of the pointee type");
  ir::Value* c = detail::operand_value(cmp, dtype_of<T>, {}, loc);
  ir::Value* v = detail::operand_value(val, dtype_of<T>, {}, loc);
  return Tile<T>(detail::emit_atomic_cas(ptr.ir_value(loc), c, v, sem, scope, loc), loc);
}

}  // namespace tessera
