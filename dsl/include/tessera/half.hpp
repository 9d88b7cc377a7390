// 2-byte host floating-point types, so that users can fill and read f16/bf16 buffers on the host.
// Conversions from float round to nearest even, as the device does; conversions to float are exact.
#pragma once
#include <bit>
#include <cstdint>

namespace tessera {

namespace detail {

constexpr std::uint16_t float_to_half_bits(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return static_cast<std::uint16_t>(sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u));
  // 65520 (halfway between 65504, the largest half, and 65536) and above round to infinity.
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (abs < 0x38800000u) {  // below 2^-14: a subnormal half (or zero); units of 2^-24
    if (abs <= 0x33000000u) return static_cast<std::uint16_t>(sign);  // <= 2^-25 ties to even zero
    const std::uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const int shift = 126 - static_cast<int>(abs >> 23);
    std::uint32_t r = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1u), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (r & 1u))) ++r;
    return static_cast<std::uint16_t>(sign | r);
  }
  const std::uint32_t rebased = abs - (112u << 23);  // exponent bias 127 -> 15
  std::uint32_t h = rebased >> 13;
  const std::uint32_t rem = rebased & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

constexpr float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) {
    const float v = static_cast<float>(mant) * 5.9604644775390625e-8f;  // mant * 2^-24, exact
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

constexpr std::uint16_t float_to_bfloat16_bits(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

constexpr float bfloat16_bits_to_float(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

}  // namespace detail

// IEEE binary16. Converting from float is explicit (it rounds); reading as float is implicit.
struct half {
  std::uint16_t bits = 0;
  half() = default;
  constexpr explicit half(float f) : bits(detail::float_to_half_bits(f)) {}
  constexpr operator float() const { return detail::half_bits_to_float(bits); }
  static constexpr half from_bits(std::uint16_t b) { half h; h.bits = b; return h; }
};

// bfloat16: the upper half of a float.
struct bfloat16 {
  std::uint16_t bits = 0;
  bfloat16() = default;
  constexpr explicit bfloat16(float f) : bits(detail::float_to_bfloat16_bits(f)) {}
  constexpr operator float() const { return detail::bfloat16_bits_to_float(bits); }
  static constexpr bfloat16 from_bits(std::uint16_t b) { bfloat16 h; h.bits = b; return h; }
};

static_assert(sizeof(half) == 2 && sizeof(bfloat16) == 2, "host half types must be 2 bytes");

}  // namespace tessera
