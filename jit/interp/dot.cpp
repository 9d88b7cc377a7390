// dot(a, b, acc) on the interpreter: acc + a·b with every product and sum in the accumulator's
// type, k ascending (ops.def). Floats: one fma per step, so f16/bf16 products (exact in f32) are
// rounded once per step, as a tensor core's f32 accumulation is at best. i8: wrapping i32 sums.
#include <cmath>

#include "jit/interp/ops.hpp"

namespace tessera::interp {
namespace {

template <class In>
void dot_f32(const Tile& a, const Tile& b, Tile& out, std::int64_t m, std::int64_t n, std::int64_t k) {
  const In* x = a.data<In>();
  const In* y = b.data<In>();
  float* o = out.data<float>();
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      float s = o[i * n + j];
      for (std::int64_t p = 0; p < k; ++p) s = std::fma(to_compute(x[i * k + p]), to_compute(y[p * n + j]), s);
      o[i * n + j] = s;
    }
}

void dot_i8(const Tile& a, const Tile& b, Tile& out, std::int64_t m, std::int64_t n, std::int64_t k) {
  const std::int8_t* x = a.data<std::int8_t>();
  const std::int8_t* y = b.data<std::int8_t>();
  std::int32_t* o = out.data<std::int32_t>();
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      std::uint32_t s = static_cast<std::uint32_t>(o[i * n + j]);  // unsigned: wraps without UB
      for (std::int64_t p = 0; p < k; ++p)
        s += static_cast<std::uint32_t>(std::int32_t{x[i * k + p]} * std::int32_t{y[p * n + j]});
      o[i * n + j] = static_cast<std::int32_t>(s);
    }
}

}  // namespace

Tile eval_dot(const ir::Op& op, const Tile& a, const Tile& b, const Tile& acc) {
  const std::int64_t m = a.shape().at(0), k = a.shape().at(1), n = b.shape().at(1);
  Tile out = acc;
  switch (a.dtype()) {
    case DType::F16: dot_f32<F16>(a, b, out, m, n, k); break;
    case DType::BF16: dot_f32<BF16>(a, b, out, m, n, k); break;
    case DType::F32: dot_f32<float>(a, b, out, m, n, k); break;
    case DType::I8: dot_i8(a, b, out, m, n, k); break;
    default: throw InternalError("interpreter: dot of " + std::string(ir::dtype_name(a.dtype())) + " operands at " + op.loc.str());
  }
  return out;
}

}  // namespace tessera::interp
