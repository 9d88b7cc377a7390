#include "jit/interp/half.hpp"

#include <algorithm>
#include <cmath>

namespace tessera::interp {
namespace {

// Rounds x to a binary format with `exp_bits` exponent and `man_bits` stored mantissa bits
// (IEEE-style: bias 2^(exp_bits-1)-1, subnormals, inf, NaN) and returns its bit pattern.
// Works on the value rather than on bit fields of the source, so one routine serves both formats
// and both sources (f32, f64) with exactly one rounding.
std::uint16_t encode_narrow_float(double x, int exp_bits, int man_bits) {
  const std::uint16_t sign = std::signbit(x) ? std::uint16_t(1u << (exp_bits + man_bits)) : 0;
  const int bias = (1 << (exp_bits - 1)) - 1;
  const int exp_all_ones = (1 << exp_bits) - 1;
  const auto inf = std::uint16_t(sign | (exp_all_ones << man_bits));
  if (std::isnan(x)) return std::uint16_t(inf | (1u << (man_bits - 1)));  // a quiet NaN
  const double ax = std::fabs(x);
  if (std::isinf(ax)) return inf;
  if (ax == 0) return sign;

  int k = 0;
  std::frexp(ax, &k);  // ax in [2^(k-1), 2^k)
  const int min_normal_exp = 1 - bias;
  if (k - 1 > bias + 1) return inf;  // far above the largest finite value
  // The weight of one unit in the last place; below the normal range it stays at the subnormal one.
  int ulp_exp = std::max(k - 1, min_normal_exp) - man_bits;
  // Scaling by a power of two is exact; nearbyint rounds half to even in the default mode.
  auto m = static_cast<std::uint64_t>(std::nearbyint(std::ldexp(ax, -ulp_exp)));
  if (m >> (man_bits + 1)) {  // rounding carried into the next binade
    m >>= 1;
    ++ulp_exp;
  }
  if (m < (std::uint64_t{1} << man_bits)) return std::uint16_t(sign | m);  // subnormal
  const int biased = ulp_exp + man_bits + bias;
  if (biased >= exp_all_ones) return inf;
  return std::uint16_t(sign | (biased << man_bits) | (m - (std::uint64_t{1} << man_bits)));
}

}  // namespace

float f16_to_float(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t man = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (man << 13));  // inf, NaN
  if (exp == 0) {  // zero or subnormal: man * 2^-24, exact in f32
    const float v = std::ldexp(static_cast<float>(man), -24);
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (man << 13));
}

std::uint16_t f16_from_double(double x) { return encode_narrow_float(x, 5, 10); }
std::uint16_t bf16_from_double(double x) { return encode_narrow_float(x, 8, 7); }

}  // namespace tessera::interp
