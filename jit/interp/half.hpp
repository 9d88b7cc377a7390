// f16 and bf16 as the interpreter stores them: raw 16-bit patterns, converted to and from wider
// floats with IEEE round-to-nearest-even (the rounding every GPU applies after each f16/bf16 op).
#pragma once
#include <bit>
#include <cstdint>

namespace tessera::interp {

// Distinct storage types, so that templates over the element type tell f16 from bf16 from i16.
struct F16 { std::uint16_t bits; };
struct BF16 { std::uint16_t bits; };

float f16_to_float(std::uint16_t h);
inline float bf16_to_float(std::uint16_t h) { return std::bit_cast<float>(std::uint32_t{h} << 16); }

// From a double, rounded once (so f64 -> f16 never double-rounds through f32).
std::uint16_t f16_from_double(double x);
std::uint16_t bf16_from_double(double x);
// A float widens to double exactly, so this is the same single rounding.
inline std::uint16_t f16_from_float(float x) { return f16_from_double(x); }
inline std::uint16_t bf16_from_float(float x) { return bf16_from_double(x); }

}  // namespace tessera::interp
