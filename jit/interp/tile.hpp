// A value of the tile IR while interpreting: a dense row-major array of elements of one dtype.
// Scalars are tiles of shape {} with one element. Layouts do not change values, so they are not kept.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "jit/interp/half.hpp"
#include "jit/ir/ir.hpp"
#include "tessera/error.hpp"

namespace tessera::interp {

using ir::DType;

// Storage per dtype: i1 and u8 as uint8 (i1 holds 0 or 1), f16/bf16/fp8 as bit patterns, ptr as address.
class Tile {
 public:
  Tile() = default;
  // A zero-filled tile of the given IR type.
  explicit Tile(const ir::Type& t) : Tile(t.dtype, t.pointee, t.shape) {}
  Tile(DType dtype, DType pointee, std::vector<std::int64_t> shape);

  DType dtype() const { return dtype_; }
  DType pointee() const { return pointee_; }
  const std::vector<std::int64_t>& shape() const { return shape_; }
  std::int64_t numel() const { return numel_; }
  int elem_bytes() const { return elem_bytes_; }

  template <class T> T* data() { return reinterpret_cast<T*>(bytes_.data()); }
  template <class T> const T* data() const { return reinterpret_cast<const T*>(bytes_.data()); }
  std::byte* raw() { return bytes_.data(); }
  const std::byte* raw() const { return bytes_.data(); }

  // Same elements, another shape of the same element count (expand_dims, convert_layout).
  void reshape(std::vector<std::int64_t> shape);

  // For a pointer tile: the kernel argument every lane's address derives from (through addptr,
  // broadcasts, shape ops, selects between pointers of that argument), or -1 when unknown or mixed.
  // The memory checks bound an access by that argument's buffer and name it when it is overrun.
  int provenance() const { return provenance_; }
  void set_provenance(int arg) { provenance_ = arg; }

 private:
  DType dtype_ = DType::I32;
  DType pointee_ = DType::I32;
  std::vector<std::int64_t> shape_;
  std::int64_t numel_ = 0;
  int elem_bytes_ = 4;
  int provenance_ = -1;
  std::vector<std::byte> bytes_;  // operator new aligns to 16, enough for every element type
};

template <class T> struct TypeTag { using type = T; };

// Calls f(TypeTag<Storage>{}) with the storage type of dtype d.
template <class F>
decltype(auto) visit_dtype(DType d, F&& f) {
  switch (d) {
    case DType::I1:
    case DType::U8: return f(TypeTag<std::uint8_t>{});
    case DType::I8: return f(TypeTag<std::int8_t>{});
    case DType::I16: return f(TypeTag<std::int16_t>{});
    case DType::I32: return f(TypeTag<std::int32_t>{});
    case DType::I64: return f(TypeTag<std::int64_t>{});
    case DType::U16: return f(TypeTag<std::uint16_t>{});
    case DType::U32: return f(TypeTag<std::uint32_t>{});
    case DType::U64: return f(TypeTag<std::uint64_t>{});
    case DType::F8E4M3: return f(TypeTag<F8E4M3>{});
    case DType::F8E5M2: return f(TypeTag<F8E5M2>{});
    case DType::F16: return f(TypeTag<F16>{});
    case DType::BF16: return f(TypeTag<BF16>{});
    case DType::F32: return f(TypeTag<float>{});
    case DType::F64: return f(TypeTag<double>{});
    case DType::Ptr: return f(TypeTag<std::uint64_t>{});
  }
  throw InternalError("interpreter: unknown dtype " + std::to_string(static_cast<int>(d)));
}

template <class T>
inline constexpr bool is_float_storage_v =
    std::is_floating_point_v<T> || std::is_same_v<T, F16> || std::is_same_v<T, BF16> || is_fp8_storage_v<T>;

// The type arithmetic is done in: f16/bf16/fp8 compute in float and round back after every op.
template <class T> struct ComputeOf { using type = T; };
template <> struct ComputeOf<F16> { using type = float; };
template <> struct ComputeOf<BF16> { using type = float; };
template <> struct ComputeOf<F8E4M3> { using type = float; };
template <> struct ComputeOf<F8E5M2> { using type = float; };
template <class T> using compute_t = typename ComputeOf<T>::type;

template <class T> inline compute_t<T> to_compute(T v) { return v; }
inline float to_compute(F16 v) { return f16_to_float(v.bits); }
inline float to_compute(BF16 v) { return bf16_to_float(v.bits); }
inline float to_compute(F8E4M3 v) { return f8_to_float(v); }
inline float to_compute(F8E5M2 v) { return f8_to_float(v); }

template <class T> inline T from_compute(compute_t<T> v) { return v; }
template <> inline F16 from_compute<F16>(float v) { return F16{f16_from_float(v)}; }
template <> inline BF16 from_compute<BF16>(float v) { return BF16{bf16_from_float(v)}; }
template <> inline F8E4M3 from_compute<F8E4M3>(float v) { return f8_from_double<F8E4M3>(v); }
template <> inline F8E5M2 from_compute<F8E5M2>(float v) { return f8_from_double<F8E5M2>(v); }

// Element i set from an i64 / f64 value with the cast rules of ops.def (constants and scalar
// kernel arguments go through these).
void set_from_int(Tile& t, std::int64_t i, std::int64_t v);
void set_from_double(Tile& t, std::int64_t i, double v);

// Element i of an integer or pointer tile as int64 (sign- or zero-extended per its storage; a
// pointer's address).
std::int64_t int_element(const Tile& t, std::int64_t i);
// Row-major strides of a shape, in elements.
std::vector<std::int64_t> row_major_strides(const std::vector<std::int64_t>& shape);

// An operand with the given shape: a scalar (one element) is repeated; anything else must already
// have that many elements. Returns `t` itself or `scratch` filled with the copies.
const Tile& as_shape(const Tile& t, const std::vector<std::int64_t>& shape, Tile& scratch, const ir::Op& op);

// "interpreter: <what> (op 'x' at file:line:col)" as an InternalError: the IR broke a rule the
// verifier should have caught, or names something the interpreter does not know.
[[noreturn]] void internal_error(const ir::Op& op, const std::string& what);

}  // namespace tessera::interp
