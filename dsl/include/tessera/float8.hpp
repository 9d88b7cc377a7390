// 1-byte floats (the OCP formats of NVIDIA's and PyTorch's fp8): float8_e4m3 (Triton's fp8e4nv,
// PyTorch's float8_e4m3fn: 4 exponent bits, bias 7, 3 mantissa bits, no infinities, NaN 0x7f/0xff,
// largest 448) and float8_e5m2 (Triton's fp8e5: IEEE-like, bias 15, 2 mantissa bits, infinities,
// largest finite 57344).
//
// The one host-side codec of tessera (the DSL's host types, the interpreter, constant lowering):
// decoding is exact for all 256 codes; encoding rounds once from a double, to nearest even (or
// toward zero), and saturates: anything beyond the largest finite value, infinities included,
// gives that value with its sign (PTX's cvt .satfinite; ops.def's cast rule). NaN stays NaN
// (0x7f with the sign).
#pragma once
#include <bit>
#include <cstdint>

namespace tessera {

namespace detail {

struct Float8Format {
  int mantissa_bits;     // 3 or 2
  int bias;              // 7 or 15
  std::uint8_t max_code; // largest finite magnitude's code: 0x7e (448) or 0x7b (57344)
  bool has_inf;          // e5m2: exponent all ones is inf (mantissa 0) or NaN
};
inline constexpr Float8Format kE4M3{3, 7, 0x7e, false};
inline constexpr Float8Format kE5M2{2, 15, 0x7b, true};

constexpr std::uint8_t float8_from_double(double x, const Float8Format& f, bool toward_zero = false) {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  const auto sign = static_cast<std::uint8_t>((bits >> 56) & 0x80u);
  const std::uint64_t mag = bits & 0x7fffffffffffffffull;
  if (mag > 0x7ff0000000000000ull) return static_cast<std::uint8_t>(sign | 0x7fu);  // NaN
  if (mag >= 0x7ff0000000000000ull) return static_cast<std::uint8_t>(sign | f.max_code);  // inf saturates
  const int biased = static_cast<int>(mag >> 52);
  if (biased == 0) return sign;  // zero, or a double subnormal: far below every fp8 subnormal
  const int e = biased - 1023;  // |x| in [2^e, 2^(e+1))
  const int min_normal_exp = 1 - f.bias;
  // Significant bits kept: 1 + mantissa for a normal fp8, fewer below the normal range.
  const int keep = f.mantissa_bits + 1 - (e < min_normal_exp ? min_normal_exp - e : 0);
  if (keep < 0) return sign;  // below half the smallest subnormal
  const std::uint64_t significand = (mag & 0xfffffffffffffull) | (1ull << 52);
  const int drop = 53 - keep;  // 50..53
  std::uint64_t r = significand >> drop;
  const std::uint64_t rest = significand & ((1ull << drop) - 1), half = 1ull << (drop - 1);
  if (!toward_zero && (rest > half || (rest == half && (r & 1u)))) ++r;
  // r counts units of the result's last place. Normal: the code is (exponent field, mantissa)
  // read as one number, so a carry out of the mantissa steps the exponent, as it should.
  // Subnormal: r itself, where r == 2^m is the smallest normal's code.
  const std::int64_t code = e < min_normal_exp
                                ? static_cast<std::int64_t>(r)
                                : (static_cast<std::int64_t>(e + f.bias) << f.mantissa_bits) +
                                      static_cast<std::int64_t>(r) - (std::int64_t{1} << f.mantissa_bits);
  return static_cast<std::uint8_t>(sign | (code > f.max_code ? f.max_code : code));
}

constexpr float float8_to_float(std::uint8_t code, const Float8Format& f) {
  const std::uint32_t sign = static_cast<std::uint32_t>(code & 0x80u) << 24;
  const int m = f.mantissa_bits;
  const std::uint32_t exponent = (code & 0x7fu) >> m, mantissa = code & ((1u << m) - 1);
  const std::uint32_t all_ones = (1u << (7 - m)) - 1;
  if (exponent == all_ones && (f.has_inf || mantissa == (1u << m) - 1)) {
    if (f.has_inf && mantissa == 0) return std::bit_cast<float>(sign | 0x7f800000u);
    return std::bit_cast<float>(sign | 0x7fc00000u);
  }
  if (exponent == 0) {  // mantissa * 2^(1 - bias - m), exact
    float v = static_cast<float>(mantissa);
    for (int i = 0; i < f.bias - 1 + m; ++i) v *= 0.5f;
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exponent + 127u - static_cast<std::uint32_t>(f.bias)) << 23) |
                              (mantissa << (23 - m)));
}

}  // namespace detail

// Converting from float is explicit (it rounds and saturates); reading as float is implicit and exact.
struct float8_e4m3 {
  std::uint8_t bits = 0;
  float8_e4m3() = default;
  constexpr explicit float8_e4m3(float f) : bits(detail::float8_from_double(f, detail::kE4M3)) {}
  constexpr operator float() const { return detail::float8_to_float(bits, detail::kE4M3); }
  static constexpr float8_e4m3 from_bits(std::uint8_t b) { float8_e4m3 h; h.bits = b; return h; }
};

struct float8_e5m2 {
  std::uint8_t bits = 0;
  float8_e5m2() = default;
  constexpr explicit float8_e5m2(float f) : bits(detail::float8_from_double(f, detail::kE5M2)) {}
  constexpr operator float() const { return detail::float8_to_float(bits, detail::kE5M2); }
  static constexpr float8_e5m2 from_bits(std::uint8_t b) { float8_e5m2 h; h.bits = b; return h; }
};

static_assert(sizeof(float8_e4m3) == 1 && sizeof(float8_e5m2) == 1, "fp8 host types must be 1 byte");
static_assert(float8_e4m3(448.0f).bits == 0x7e && float8_e4m3(1e9f).bits == 0x7e && float(float8_e4m3::from_bits(0x01)) == 0x1p-9f);
static_assert(float8_e5m2(57344.0f).bits == 0x7b && float(float8_e5m2::from_bits(0x7c)) > 3e38f);

}  // namespace tessera
