// Tile<T>: a symbolic value of the kernel being traced — a scalar when its shape is empty, else a
// tile of elements of type T (see element.hpp). Tiles are C++ variables: each one owns a tracer
// "slot", so that the tracer sees reads of and assignments to it inside for_range/if_ bodies and
// turns reassigned outer variables into loop-carried values (dsl/src/variables.cpp explains how).
#pragma once
#include <concepts>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "tessera/detail/core.hpp"
#include "tessera/detail/operand.hpp"
#include "tessera/detail/operators.hpp"
#include "tessera/element.hpp"

namespace tessera {

// The rounding of a float downcast (Triton's fp_downcast_rounding): to nearest, ties to even (the
// default of every conversion), or toward zero.
enum class Rounding { rtne, rtz };

template <class T>
class Tile : public detail::TileOperators<T> {
  static_assert(TileElement<T>,
                "tessera::Tile<T>: T must be bool, int8_t, int16_t, int32_t, int64_t, uint8_t, uint32_t, "
                "tessera::half, tessera::bfloat16, float, double, or tessera::Pointer<one of these>");

 public:
  using element_type = T;

  // An unassigned variable; assign a tile to it before reading it.
  Tile() = default;
  // Wraps an IR value of element type T (used by the DSL's own functions).
  Tile(ir::Value* v, const Loc& loc) : slot_(detail::slot_new(v, loc)) {}

  // Copying makes a new variable with the same value; assigning records a new definition of this
  // variable. Moves do the same: a Tile's identity (its slot) never travels to another object,
  // since the tracer keys loop-carried values on it.
  Tile(const Tile& o, const Loc& loc = Loc::current()) : slot_(o.slot_ ? detail::slot_new(o.ir_value(loc), loc) : nullptr) {}
  Tile(Tile&& o) : Tile(o) {}
  Tile& operator=(const Tile& o) {
    const Loc loc = Loc::current();
    detail::slot_assign(slot_, o.ir_value(loc), loc);
    return *this;
  }
  Tile& operator=(Tile&& o) { return *this = static_cast<const Tile&>(o); }
  ~Tile() = default;

  // A tile has no C++ truth value: it is a symbolic value of the kernel being traced, known only
  // when the kernel runs. `if (tile)`, `while (tile)`, `tile ? a : b` and `static_cast<bool>(tile)`
  // pick this conversion and stop with the message below (a deleted function could not say it
  // before C++26). It is explicit, so it takes part in no implicit conversion, and a template, so
  // that the static_assert fires only where it is used.
  template <class B>
    requires std::same_as<B, bool>
  explicit operator B() const {
    static_assert(detail::always_false<B>,
                  "tessera: a tile has no C++ truth value while the kernel is traced (if (tile), while (tile), "
                  "tile ? a : b): branch on a scalar mask with ts::if_(cond, [&] { ... }), choose per element "
                  "with ts::where(mask, a, b), or decide on C++ values such as ts::meta(\"BLOCK\") with a plain "
                  "C++ if");
    return false;
  }

  // The current IR value of this variable, as seen from the region being traced.
  ir::Value* ir_value(const Loc& loc = Loc::current()) const { return detail::slot_read(slot_, loc); }
  Shape shape(const Loc& loc = Loc::current()) const { return detail::value_shape(ir_value(loc)); }
  int rank(const Loc& loc = Loc::current()) const { return static_cast<int>(shape(loc).size()); }

  // Converts the elements to U (see ops.def `cast` for the rounding rules).
  template <class U>
  Tile<U> to(const Loc& loc = Loc::current()) const {
    static_assert(Element<T> && Element<U>, "tessera: .to<U>() converts between element types, not pointers");
    return Tile<U>(detail::emit_cast(ir_value(loc), dtype_of<U>, loc), loc);
  }
  // The same with a rounding mode, for a float downcast (f64 to f32/f16/bf16, f32 to f16/bf16):
  // x.to<half>(Rounding::rtz) rounds toward zero (a value beyond the largest finite one gives
  // that one, NaN stays NaN, infinities stay). rtz on any other conversion is a ProgramError.
  template <class U>
  Tile<U> to(Rounding rounding, const Loc& loc = Loc::current()) const {
    static_assert(Element<T> && Element<U>, "tessera: .to<U>() converts between element types, not pointers");
    return Tile<U>(detail::emit_cast_rounded(ir_value(loc), dtype_of<U>, rounding == Rounding::rtz, loc), loc);
  }
  // Inserts a dimension of size 1 at `axis` (negative counts from the end, -1 appends).
  Tile expand_dims(int axis, const Loc& loc = Loc::current()) const {
    return Tile(detail::emit_expand_dims(ir_value(loc), axis, loc), loc);
  }
  Tile col(const Loc& loc = Loc::current()) const { return expand_dims(1, loc); }  // x[:, None]
  Tile row(const Loc& loc = Loc::current()) const { return expand_dims(0, loc); }  // x[None, :]
  Tile broadcast_to(const Shape& shape, const Loc& loc = Loc::current()) const {
    return Tile(detail::emit_broadcast_to(ir_value(loc), shape, loc), loc);
  }
  // The same elements in row-major order, in another shape of as many elements (powers of two).
  Tile reshape(const Shape& shape, const Loc& loc = Loc::current()) const {
    return Tile(detail::emit_reshape(ir_value(loc), shape, loc), loc);
  }

 private:
  detail::SlotPtr slot_;
};

using Int = Tile<std::int32_t>;
using Int64 = Tile<std::int64_t>;
using Float = Tile<float>;
using Double = Tile<double>;
using Half = Tile<half>;
using BFloat16 = Tile<bfloat16>;
using Mask = Tile<bool>;
template <class T>
using Ptr = Tile<Pointer<T>>;

namespace detail {

template <class X>
ir::Value* operand_value(const X& x, DType d, const Shape& shape, const Loc& loc) {
  if constexpr (is_tile<X>) return emit_cast(x.ir_value(loc), d, loc);
  else return emit_constant(d, scalar_value(x), shape, loc);
}

template <class R, class C, class X, class Y>
Tile<R> binary(BinOp op, const X& x, const Y& y, const Loc& loc) {
  constexpr DType c = dtype_of<C>;
  ir::Value *a, *b;
  if constexpr (is_tile<X>) {
    a = x.ir_value(loc);
    b = operand_value(y, c, value_shape(a), loc);
  } else {
    b = y.ir_value(loc);
    a = operand_value(x, c, value_shape(b), loc);
  }
  return Tile<R>(emit_binary(op, a, b, c, loc), loc);
}

template <class P, class X>
Tile<P> add_pointer(const Tile<P>& p, const X& offset, bool subtract, const Loc& loc) {
  ir::Value* ptr = p.ir_value(loc);
  ir::Value* off;
  if constexpr (is_tile<X>) {
    off = offset.ir_value(loc);
    if (subtract) off = emit_unary(UnOp::Neg, off, loc);
  } else {
    const auto v = static_cast<std::int64_t>(offset);
    const bool fits32 = v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max();
    off = emit_constant(fits32 ? DType::I32 : DType::I64, scalar_value(subtract ? -v : v), {}, loc);
  }
  return Tile<P>(emit_addptr(ptr, off, loc), loc);
}

}  // namespace detail
}  // namespace tessera
