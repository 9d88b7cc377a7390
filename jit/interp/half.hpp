// f16, bf16 and fp8 as the interpreter stores them: raw 16- and 8-bit patterns, converted to and from wider
// floats with IEEE round-to-nearest-even (the rounding every GPU applies after each f16/bf16 op).
#pragma once
#include <bit>
#include <cstdint>
#include <type_traits>

#include "tessera/float8.hpp"

namespace tessera::interp {

// Distinct storage types, so that templates over the element type tell f16 from bf16 from i16.
struct F16 { std::uint16_t bits; };
struct BF16 { std::uint16_t bits; };
struct F8E4M3 { std::uint8_t bits; };
struct F8E5M2 { std::uint8_t bits; };

template <class T>
inline constexpr bool is_fp8_storage_v = std::is_same_v<T, F8E4M3> || std::is_same_v<T, F8E5M2>;

// fp8 through the one codec (tessera/float8.hpp): exact upcasts, saturating single roundings.
inline float f8_to_float(F8E4M3 v) { return detail::float8_to_float(v.bits, detail::kE4M3); }
inline float f8_to_float(F8E5M2 v) { return detail::float8_to_float(v.bits, detail::kE5M2); }
template <class F8>
F8 f8_from_double(double x, bool toward_zero = false) {
  return F8{detail::float8_from_double(x, std::is_same_v<F8, F8E4M3> ? detail::kE4M3 : detail::kE5M2, toward_zero)};
}

float f16_to_float(std::uint16_t h);
inline float bf16_to_float(std::uint16_t h) { return std::bit_cast<float>(std::uint32_t{h} << 16); }

// From a double, rounded once (so f64 -> f16 never double-rounds through f32).
std::uint16_t f16_from_double(double x);
std::uint16_t bf16_from_double(double x);
// A float widens to double exactly, so this is the same single rounding.
inline std::uint16_t f16_from_float(float x) { return f16_from_double(x); }
inline std::uint16_t bf16_from_float(float x) { return bf16_from_double(x); }

}  // namespace tessera::interp
