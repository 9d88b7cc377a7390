// Counter-based random numbers as Triton's `tl.randint4x`, `tl.randint`, `tl.rand`, `tl.rand4x`,
// `tl.randn` and `tl.randn4x`, and `tl.umulhi`: for the same seed and offsets the same numbers as
// Triton (randint*, rand*: the same bits; randn*: the same formula, whose log, sqrt, sin and cos
// round as each target's math does, README "Math").
//
// The generator is Philox-4x32 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
// SC'11) with Triton's key and counter layout: counter (offset, 0, 0, 0), key (low and high 32 bits
// of the seed), 10 rounds by default. A pure function of (seed, offset), so that a forward and a
// backward pass (dropout) draw the same numbers without storing them. The functions are plain
// compositions of tile ops, traced where the user calls them (errors name the user's line).
#pragma once
#include <array>
#include <concepts>
#include <cstdint>
#include <type_traits>

#include "tessera/ops.hpp"
#include "tessera/tile.hpp"

namespace tessera {

namespace detail {

template <class T>
inline constexpr bool is_int32_or_64 =
    std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::int64_t> ||
    std::is_same_v<T, std::uint64_t>;

// The high 32 bits of the 64-bit product of two u32 tiles: both widened to i64 without sign (the
// product's bits are those of the unsigned product; i64 arithmetic wraps), shifted, truncated.
inline Tile<std::uint32_t> umulhi32(const Tile<std::uint32_t>& a, const Tile<std::uint32_t>& b, const Loc& loc) {
  auto wide = binary<std::int64_t, std::int64_t>(BinOp::Mul, a.to<std::int64_t>(loc), b.to<std::int64_t>(loc), loc);
  return binary<std::int64_t, std::int64_t>(BinOp::Shr, wide, 32, loc).to<std::uint32_t>(loc);
}

// The high 64 bits of the 128-bit unsigned product of two i64 tiles (their bits read as unsigned),
// from four 32x32-bit partial products; every shift is followed by a mask, so that the signed
// (arithmetic) shifts of i64 act as unsigned ones.
inline Tile<std::int64_t> umulhi64(const Tile<std::int64_t>& a, const Tile<std::int64_t>& b, const Loc& loc) {
  using I = std::int64_t;
  auto mul = [&](const Tile<I>& x, const Tile<I>& y) { return binary<I, I>(BinOp::Mul, x, y, loc); };
  auto add = [&](const Tile<I>& x, const Tile<I>& y) { return binary<I, I>(BinOp::Add, x, y, loc); };
  auto low = [&](const Tile<I>& x) { return binary<I, I>(BinOp::And, x, 0xffffffffLL, loc); };
  auto high = [&](const Tile<I>& x) { return low(binary<I, I>(BinOp::Shr, x, 32, loc)); };
  const Tile<I> a_lo = low(a), a_hi = high(a), b_lo = low(b), b_hi = high(b);
  const Tile<I> lo_lo = mul(a_lo, b_lo), hi_lo = mul(a_hi, b_lo), lo_hi = mul(a_lo, b_hi), hi_hi = mul(a_hi, b_hi);
  // At most (2^32-1) + (2^32-1) + (2^32-1)^2 = 2^64 - 1: no carry is lost.
  const Tile<I> cross = add(add(high(lo_lo), low(hi_lo)), lo_hi);
  return add(add(high(hi_lo), high(cross)), hi_hi);
}

// The two key words of a seed: its low and high 32 bits after widening it to 64 bits (signed seeds
// sign-extend, as Triton's seed.to(tl.uint64)).
template <class S>
std::array<Tile<std::uint32_t>, 2> philox_key(const S& seed, const Loc& loc) {
  if constexpr (std::is_integral_v<S>) {
    const auto bits = static_cast<std::uint64_t>(static_cast<std::int64_t>(seed));
    const auto wide = std::is_signed_v<S> ? bits : static_cast<std::uint64_t>(seed);
    return {full<std::uint32_t>({}, static_cast<std::uint32_t>(wide), loc),
            full<std::uint32_t>({}, static_cast<std::uint32_t>(wide >> 32), loc)};
  } else {
    const Tile<std::int64_t> wide = seed.template to<std::int64_t>(loc);
    return {wide.template to<std::uint32_t>(loc),
            binary<std::int64_t, std::int64_t>(BinOp::Shr, wide, 32, loc).template to<std::uint32_t>(loc)};
  }
}

template <class S>
inline constexpr bool is_seed = std::is_integral_v<S> && !std::is_same_v<S, bool>;
template <class T>
inline constexpr bool is_seed<Tile<T>> = std::is_integral_v<T> && !std::is_same_v<T, bool>;

}  // namespace detail

// The high half of the double-width product of two integer tiles (or a tile and a C++ integer),
// their bits read as unsigned, as Triton's tl.umulhi: 32-bit types give the high 32 bits of the
// 64-bit product, i64 the high 64 bits of the 128-bit product.
template <class X, class Y>
  requires(detail::is_tile<X> || detail::is_tile<Y>) && IntegerOperands<X, Y>
auto umulhi(const X& a, const Y& b, const Loc& loc = Loc::current()) {
  using C = detail::common_t<X, Y>;
  static_assert(detail::is_int32_or_64<C>,
                "tessera::umulhi: the operands must be 32- or 64-bit integers (int32_t, uint32_t, int64_t, uint64_t); convert "
                "narrower ones with .to<std::uint32_t>()");
  const Tile<C> ta(detail::operand_value(a, dtype_of<C>, {}, loc), loc);
  const Tile<C> tb(detail::operand_value(b, dtype_of<C>, {}, loc), loc);
  if constexpr (std::is_same_v<C, std::int64_t>) {
    return detail::umulhi64(ta, tb, loc);
  } else if constexpr (std::is_same_v<C, std::uint64_t>) {  // the same bits as i64
    return detail::umulhi64(ta.template to<std::int64_t>(loc), tb.template to<std::int64_t>(loc), loc)
        .template to<C>(loc);
  } else {
    return detail::umulhi32(ta.template to<std::uint32_t>(loc), tb.template to<std::uint32_t>(loc), loc)
        .template to<C>(loc);
  }
}

// `rounds` rounds of Philox-4x32 on counter (c0, c1, c2, c3) with the key of `seed` (a C++ integer
// or a scalar integer tile): four u32 tiles, as Triton's tl.philox with 32-bit counters.
template <class S>
std::array<Tile<std::uint32_t>, 4> philox(const S& seed, Tile<std::uint32_t> c0, Tile<std::uint32_t> c1,
                                          Tile<std::uint32_t> c2, Tile<std::uint32_t> c3, int rounds = 10,
                                          const Loc& loc = Loc::current()) {
  static_assert(detail::is_seed<S>, "tessera::philox: the seed must be a C++ integer or an integer tile (a scalar)");
  using U = std::uint32_t;
  constexpr U kRoundA = 0xD2511F53u, kRoundB = 0xCD9E8D57u, kKeyA = 0x9E3779B9u, kKeyB = 0xBB67AE85u;
  auto [k0, k1] = detail::philox_key(seed, loc);
  auto x = [&](const Tile<U>& p, const Tile<U>& q) { return detail::binary<U, U>(detail::BinOp::Xor, p, q, loc); };
  auto mul = [&](U m, const Tile<U>& p) { return detail::binary<U, U>(detail::BinOp::Mul, p, m, loc); };
  auto add = [&](const Tile<U>& p, U m) { return detail::binary<U, U>(detail::BinOp::Add, p, m, loc); };
  for (int r = 0; r < rounds; ++r) {
    const Tile<U> old0 = c0, old2 = c2;
    c0 = x(x(umulhi(old2, kRoundB, loc), c1), k0);
    c2 = x(x(umulhi(old0, kRoundA, loc), c3), k1);
    c1 = mul(kRoundB, old2);
    c3 = mul(kRoundA, old0);
    k0 = add(k0, kKeyA);
    k1 = add(k1, kKeyB);
  }
  return {c0, c1, c2, c3};
}

// Four tiles of random u32 for `offset` (an int32_t or uint32_t tile, any shape; its bits are the
// counter) and `seed`, as Triton's tl.randint4x. Offsets are 32-bit here: Triton's 64-bit variant
// (uint64 results from int64 offsets) is not provided.
template <class S, class O>
std::array<Tile<std::uint32_t>, 4> randint4x(const S& seed, const Tile<O>& offset, int rounds = 10,
                                             const Loc& loc = Loc::current()) {
  static_assert(std::is_same_v<O, std::int32_t> || std::is_same_v<O, std::uint32_t>,
                "tessera::randint4x: offsets must be an int32_t or uint32_t tile (64-bit offsets are not supported)");
  const Tile<std::uint32_t> c0 = offset.template to<std::uint32_t>(loc);
  const Tile<std::uint32_t> zero = detail::binary<std::uint32_t, std::uint32_t>(detail::BinOp::Mul, c0, 0, loc);
  return philox(seed, c0, zero, zero, zero, rounds, loc);
}

// One tile of random u32, the first of randint4x's (as Triton's tl.randint).
template <class S, class O>
Tile<std::uint32_t> randint(const S& seed, const Tile<O>& offset, int rounds = 10, const Loc& loc = Loc::current()) {
  return randint4x(seed, offset, rounds, loc)[0];
}

// A random 32-bit integer (int32_t or uint32_t bits) as an f32 in [0, 1], as Triton's
// uint_to_uniform_float: read as int32, negatives folded (-x - 1), times 4.6566127342e-10 (which
// rounds to 2^-31 in f32, so that 2^31 - 1, itself rounded up to 2^31, gives exactly 1.0 there too).
template <class T>
Tile<float> uint_to_uniform_float(const Tile<T>& x, const Loc& loc = Loc::current()) {
  static_assert(std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::uint32_t>,
                "tessera::uint_to_uniform_float: the input must be an int32_t or uint32_t tile");
  using I = std::int32_t;
  const Tile<I> s = x.template to<I>(loc);
  const Tile<bool> negative = detail::binary<bool, I>(detail::BinOp::Lt, s, 0, loc);
  const Tile<I> folded = detail::binary<I, I>(detail::BinOp::Sub, detail::binary<I, I>(detail::BinOp::Sub, 0, s, loc), 1, loc);
  const Tile<I> magnitude = where(negative, folded, s, loc);
  return detail::binary<float, float>(detail::BinOp::Mul, magnitude.template to<float>(loc), 4.6566127342e-10f, loc);
}

// Uniform f32 in [0, 1] for (seed, offset), as Triton's tl.rand; rand4x gives four independent tiles.
template <class S, class O>
Tile<float> rand(const S& seed, const Tile<O>& offset, int rounds = 10, const Loc& loc = Loc::current()) {
  return uint_to_uniform_float(randint(seed, offset, rounds, loc), loc);
}
template <class S, class O>
std::array<Tile<float>, 4> rand4x(const S& seed, const Tile<O>& offset, int rounds = 10,
                                  const Loc& loc = Loc::current()) {
  auto r = randint4x(seed, offset, rounds, loc);
  return {uint_to_uniform_float(r[0], loc), uint_to_uniform_float(r[1], loc), uint_to_uniform_float(r[2], loc),
          uint_to_uniform_float(r[3], loc)};
}

// Two standard normal tiles from two uniform ones (Box-Muller, as Triton's pair_uniform_to_normal:
// u1 clamped below at 1e-7 so that log stays finite).
inline std::array<Tile<float>, 2> pair_uniform_to_normal(const Tile<float>& u1, const Tile<float>& u2,
                                                         const Loc& loc = Loc::current()) {
  using F = float;
  const Tile<F> th = detail::binary<F, F>(detail::BinOp::Mul, u2, 6.283185307179586f, loc);
  const Tile<F> clamped = maximum(u1, 1.0e-7f, loc);
  const Tile<F> r = sqrt(detail::binary<F, F>(detail::BinOp::Mul, log(clamped, loc), -2.0f, loc), loc);
  return {detail::binary<F, F>(detail::BinOp::Mul, r, cos(th, loc), loc),
          detail::binary<F, F>(detail::BinOp::Mul, r, sin(th, loc), loc)};
}

// Standard normal f32 for (seed, offset), as Triton's tl.randn (the first of a Box-Muller pair
// from randint4x's first two words); randn4x gives four, from rand4x's pairs.
template <class S, class O>
Tile<float> randn(const S& seed, const Tile<O>& offset, int rounds = 10, const Loc& loc = Loc::current()) {
  auto r = randint4x(seed, offset, rounds, loc);
  return pair_uniform_to_normal(uint_to_uniform_float(r[0], loc), uint_to_uniform_float(r[1], loc), loc)[0];
}
template <class S, class O>
std::array<Tile<float>, 4> randn4x(const S& seed, const Tile<O>& offset, int rounds = 10,
                                   const Loc& loc = Loc::current()) {
  auto u = rand4x(seed, offset, rounds, loc);
  auto n01 = pair_uniform_to_normal(u[0], u[1], loc);
  auto n23 = pair_uniform_to_normal(u[2], u[3], loc);
  return {n01[0], n01[1], n23[0], n23[1]};
}

}  // namespace tessera
