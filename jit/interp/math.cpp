// The math ops (ops.def: exp2 log2 rsqrt sin cos tanh sigmoid erf floor ceil, pow, fma) on the
// host's libm. Each is computed in the element's compute type (f32 libm for f32, f16 and bf16,
// rounded back once; f64 libm for f64), which is what the GPU tests compare the device against.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>

#include "jit/interp/ops.hpp"

namespace tessera::interp {
namespace {
using ir::OpKind;

// One function per op, instantiated for float and double: the std:: overloads pick f32 or f64 libm.
template <class C>
C unary_fn(OpKind k, C x) {
  switch (k) {
    case OpKind::Exp2: return std::exp2(x);
    case OpKind::Log2: return std::log2(x);
    case OpKind::Rsqrt: return C(1) / std::sqrt(x);
    case OpKind::Sin: return std::sin(x);
    case OpKind::Cos: return std::cos(x);
    case OpKind::Tanh: return std::tanh(x);
    case OpKind::Sigmoid: return C(1) / (C(1) + std::exp(-x));
    case OpKind::Erf: return std::erf(x);
    case OpKind::Floor: return std::floor(x);
    case OpKind::Ceil: return std::ceil(x);
    default: return x;  // not reached: eval_math checks the kind first
  }
}

template <class T>
void unary_loop(OpKind k, const Tile& a, Tile& out) {
  using C = compute_t<T>;
  const T* x = a.data<T>();
  T* o = out.data<T>();
  for (std::int64_t i = 0; i < out.numel(); ++i) o[i] = from_compute<T>(unary_fn<C>(k, to_compute(x[i])));
}

template <class T>
void pow_loop(const Tile& a, const Tile& b, Tile& out) {
  const T *x = a.data<T>(), *y = b.data<T>();
  T* o = out.data<T>();
  for (std::int64_t i = 0; i < out.numel(); ++i) o[i] = from_compute<T>(std::pow(to_compute(x[i]), to_compute(y[i])));
}

// fma rounds once in the compute type; for f16/bf16 the f32 result rounds again, as the device does
// (it computes these in f32 too).
template <class T>
void fma_loop(const Tile& a, const Tile& b, const Tile& c, Tile& out) {
  const T *x = a.data<T>(), *y = b.data<T>(), *z = c.data<T>();
  T* o = out.data<T>();
  for (std::int64_t i = 0; i < out.numel(); ++i)
    o[i] = from_compute<T>(std::fma(to_compute(x[i]), to_compute(y[i]), to_compute(z[i])));
}

}  // namespace

bool is_math_op(OpKind k) {
  switch (k) {
    case OpKind::Exp2: case OpKind::Log2: case OpKind::Rsqrt: case OpKind::Sin: case OpKind::Cos:
    case OpKind::Tanh: case OpKind::Sigmoid: case OpKind::Erf: case OpKind::Floor: case OpKind::Ceil:
    case OpKind::Pow: case OpKind::Fma:
      return true;
    default:
      return false;
  }
}

Tile eval_math(const ir::Op& op, const std::vector<const Tile*>& operands) {
  const ir::Type& rt = op.result()->type;
  if (!ir::is_float(rt.dtype)) internal_error(op, fmt::format("'{}' is defined on floats only, not on {}", op.name(), ir::dtype_name(rt.dtype)));
  std::vector<Tile> scratch(operands.size());
  std::vector<const Tile*> in;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    if (operands[i]->dtype() != rt.dtype) internal_error(op, "operand types differ from the result's");
    in.push_back(&as_shape(*operands[i], rt.shape, scratch[i], op));
  }
  Tile out(rt);
  visit_dtype(rt.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_storage_v<T>) {
      if (op.kind == OpKind::Pow) return pow_loop<T>(*in[0], *in[1], out);
      if (op.kind == OpKind::Fma) return fma_loop<T>(*in[0], *in[1], *in[2], out);
      unary_loop<T>(op.kind, *in[0], out);
    }
  });
  return out;
}

}  // namespace tessera::interp
