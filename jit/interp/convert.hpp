// Element conversions with the cast rules of ops.def: int->int sign- or zero-extends per source
// and wraps when narrowing; float->int truncates toward zero, saturates, NaN -> 0; int->float and
// float->float round once to nearest even. (->i1 is x != 0 and is handled by the caller, since
// i1 shares its storage type with u8.)
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "jit/interp/tile.hpp"

namespace tessera::interp {

// An integer as a double whose single rounding to any format of at most 51 mantissa bits equals
// the direct rounding of the integer: bits below the 53 kept ones are folded into a sticky bit
// ("round to odd"), which avoids the double rounding an int64 -> f64 -> bf16 path would do.
template <class I>
double int_to_double_sticky(I v) {
  const bool neg = std::is_signed_v<I> && v < 0;
  std::uint64_t mag = neg ? std::uint64_t(0) - std::uint64_t(v) : std::uint64_t(v);
  const int width = static_cast<int>(std::bit_width(mag));
  if (width > 53) {
    const int drop = width - 53;
    const bool sticky = (mag & ((std::uint64_t{1} << drop) - 1)) != 0;
    mag = (mag >> drop) | (sticky ? 1u : 0u);
    return (neg ? -1.0 : 1.0) * std::ldexp(static_cast<double>(mag), drop);
  }
  return neg ? -static_cast<double>(mag) : static_cast<double>(mag);
}

// float -> int: truncate toward zero, clamp to To's range, NaN -> 0.
template <class To>
To saturate_to_int(double c) {
  if (std::isnan(c)) return To(0);
  const double t = std::trunc(c);
  // Bounds as exact powers of two: max() itself is not representable for 64-bit types.
  constexpr int bits = std::numeric_limits<To>::digits;  // 31 for int32, 32 for uint32
  const double upper = std::ldexp(1.0, bits);             // first value above max()
  if (t >= upper) return std::numeric_limits<To>::max();
  if (t <= static_cast<double>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
  return static_cast<To>(t);
}

template <class To, class From>
To cast_elem(From v) {
  if constexpr (!is_float_storage_v<From>) {
    if constexpr (!is_float_storage_v<To>) {
      return static_cast<To>(v);  // modular since C++20; widening extends per From's signedness
    } else if constexpr (std::is_same_v<To, F16>) {
      return F16{f16_from_double(int_to_double_sticky(v))};
    } else if constexpr (std::is_same_v<To, BF16>) {
      return BF16{bf16_from_double(int_to_double_sticky(v))};
    } else if constexpr (is_fp8_storage_v<To>) {
      return f8_from_double<To>(int_to_double_sticky(v));
    } else {
      return static_cast<To>(v);  // the hardware conversion rounds once, to nearest even
    }
  } else {
    const double c = static_cast<double>(to_compute(v));  // exact for every float storage
    if constexpr (!is_float_storage_v<To>) {
      return saturate_to_int<To>(c);
    } else if constexpr (std::is_same_v<To, F16>) {
      return F16{f16_from_double(c)};
    } else if constexpr (std::is_same_v<To, BF16>) {
      return BF16{bf16_from_double(c)};
    } else if constexpr (is_fp8_storage_v<To>) {
      return f8_from_double<To>(c);
    } else {
      return static_cast<To>(c);
    }
  }
}

}  // namespace tessera::interp
