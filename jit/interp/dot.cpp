// dot(a, b, acc) on the interpreter: acc + a·b with every product and sum in the accumulator's
// type, k ascending (ops.def). Floats: one fma per step, so f16/bf16 products (exact in f32) are
// rounded once per step, as a tensor core's f32 accumulation is at best; f32 with input_precision
// tf32 truncates the operands to tf32 first, as the tensor cores read them. i8: wrapping i32 sums.
#include <cmath>
#include <cstring>

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

// An f32 as the tensor cores read a tf32 operand (lower::truncate_to_tf32): the 13 low mantissa
// bits dropped, infinities and NaNs unchanged.
float truncate_to_tf32(float x) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &x, 4);
  if ((bits & 0x7f800000u) != 0x7f800000u) bits &= 0xffffe000u;
  std::memcpy(&x, &bits, 4);
  return x;
}

Tile truncated_to_tf32(const Tile& t) {
  Tile r = t;
  float* p = r.data<float>();
  for (std::int64_t i = 0; i < r.numel(); ++i) p[i] = truncate_to_tf32(p[i]);
  return r;
}

}  // namespace

Tile eval_dot(const ir::Op& op, const Tile& a, const Tile& b, const Tile& acc) {
  const std::int64_t m = a.shape().at(0), k = a.shape().at(1), n = b.shape().at(1);
  Tile out = acc;
  switch (a.dtype()) {
    case DType::F16: dot_f32<F16>(a, b, out, m, n, k); break;
    case DType::BF16: dot_f32<BF16>(a, b, out, m, n, k); break;
    case DType::F8E4M3: dot_f32<F8E4M3>(a, b, out, m, n, k); break;
    case DType::F8E5M2: dot_f32<F8E5M2>(a, b, out, m, n, k); break;
    case DType::F32:
      if (op.string_attr("input_precision") == "tf32") dot_f32<float>(truncated_to_tf32(a), truncated_to_tf32(b), out, m, n, k);
      else dot_f32<float>(a, b, out, m, n, k);  // ieee, and tf32x3 as its best approximation (ops.def)
      break;
    case DType::I8: dot_i8(a, b, out, m, n, k); break;
    default: throw InternalError("interpreter: dot of " + std::string(ir::dtype_name(a.dtype())) + " operands at " + op.loc.str());
  }
  return out;
}

}  // namespace tessera::interp
