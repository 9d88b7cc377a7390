// The f16 / bf16 conversion routines LLVM's X86 backend calls where the CPU has no instruction for
// them (every bf16 rounding; f16 without F16C; f64 -> f16 always): compiler-rt's names, defined for
// the JIT here rather than taken from the process's libgcc, which lacks the bf16 ones before GCC 13.
// IEEE round to nearest even, with one rounding from f64 (never through f32), as the interpreter
// (jit/interp/half.cpp) and the GPUs convert.
//
// The calling convention: LLVM passes and returns half and bfloat in the low 16 bits of an XMM
// register. These functions take and return a float whose bit pattern carries those 16 bits, which
// is the same register; the other bits are ignored on the way in and zero on the way out.
#include <bit>
#include <cmath>
#include <cstdint>

#include "backends/host/host_runtime.hpp"

namespace tessera::host {
namespace {

// x rounded to a binary format of `exp_bits` exponent and `man_bits` stored mantissa bits (IEEE:
// subnormals, inf, a quiet NaN), as its bit pattern.
std::uint16_t narrow(double x, int exp_bits, int man_bits) {
  const std::uint16_t sign = std::signbit(x) ? std::uint16_t(1u << (exp_bits + man_bits)) : 0;
  const int bias = (1 << (exp_bits - 1)) - 1;
  const int exp_all_ones = (1 << exp_bits) - 1;
  const auto inf = std::uint16_t(sign | (exp_all_ones << man_bits));
  if (std::isnan(x)) return std::uint16_t(inf | (1u << (man_bits - 1)));
  const double ax = std::fabs(x);
  if (std::isinf(ax)) return inf;
  if (ax == 0) return sign;
  int k = 0;
  std::frexp(ax, &k);  // ax in [2^(k-1), 2^k)
  if (k - 1 > bias + 1) return inf;
  int ulp_exp = std::max(k - 1, 1 - bias) - man_bits;  // below the normal range: the subnormal ulp
  auto m = static_cast<std::uint64_t>(std::nearbyint(std::ldexp(ax, -ulp_exp)));  // ties to even
  if (m >> (man_bits + 1)) {  // rounded up into the next binade
    m >>= 1;
    ++ulp_exp;
  }
  if (m < (std::uint64_t{1} << man_bits)) return std::uint16_t(sign | m);  // subnormal
  const int biased = ulp_exp + man_bits + bias;
  if (biased >= exp_all_ones) return inf;
  return std::uint16_t(sign | (biased << man_bits) | (m - (std::uint64_t{1} << man_bits)));
}

float carrier(std::uint16_t bits) { return std::bit_cast<float>(std::uint32_t{bits}); }
std::uint16_t carried(float c) { return static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(c)); }

float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {
    const float v = std::ldexp(static_cast<float>(man), -24);  // exact
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (man << 13));
}

// f32 -> f16 by integer arithmetic (F. Giesen's float_to_half_fast3_rtne): the conversions run once
// per f16 operation, and narrow()'s frexp/ldexp would dominate a kernel's time.
std::uint16_t f32_to_f16(float value) {
  std::uint32_t u = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = u & 0x80000000u;
  u ^= sign;
  std::uint32_t h = 0;
  if (u >= (127u + 16) << 23) {  // at least 2^16: inf (or NaN, made quiet)
    h = u > 0x7f800000u ? 0x7e00u : 0x7c00u;
  } else if (u < 113u << 23) {  // below 2^-14: subnormal or zero; the FPU's addition rounds to even
    const float denorm_magic = std::bit_cast<float>(126u << 23);
    h = std::bit_cast<std::uint32_t>(std::bit_cast<float>(u) + denorm_magic) - (126u << 23);
  } else {
    const std::uint32_t odd = (u >> 13) & 1u;
    u += (static_cast<std::uint32_t>(15 - 127) << 23) + 0xfffu + odd;  // rebias, round half to even
    h = u >> 13;
  }
  return static_cast<std::uint16_t>(h | (sign >> 16));
}

// f32 -> bf16: drop the low half, rounding half to even; a NaN stays a quiet NaN.
std::uint16_t f32_to_bf16(float value) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(value);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>(((u >> 16) & 0x8000u) | 0x7fc0u);
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

float extend_hf_sf(float h) { return f16_to_f32(carried(h)); }
float trunc_sf_hf(float x) { return carrier(f32_to_f16(x)); }
float trunc_df_hf(double x) { return carrier(narrow(x, 5, 10)); }
float trunc_sf_bf(float x) { return carrier(f32_to_bf16(x)); }
float trunc_df_bf(double x) { return carrier(narrow(x, 8, 7)); }
double extend_hf_df(float h) { return f16_to_f32(carried(h)); }
float extend_bf_sf(float b) { return std::bit_cast<float>(std::uint32_t{carried(b)} << 16); }

}  // namespace

std::vector<RuntimeSymbol> half_conversion_symbols() {
  return {
      {"__extendhfsf2", reinterpret_cast<void*>(&extend_hf_sf)}, {"__truncsfhf2", reinterpret_cast<void*>(&trunc_sf_hf)},
      {"__truncdfhf2", reinterpret_cast<void*>(&trunc_df_hf)},   {"__truncsfbf2", reinterpret_cast<void*>(&trunc_sf_bf)},
      {"__truncdfbf2", reinterpret_cast<void*>(&trunc_df_bf)},   {"__extendhfdf2", reinterpret_cast<void*>(&extend_hf_df)},
      {"__extendbfsf2", reinterpret_cast<void*>(&extend_bf_sf)},
  };
}

}  // namespace tessera::host
