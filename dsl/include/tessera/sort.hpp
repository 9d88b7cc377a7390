// Sorting within a tile and histograms, as Triton's tl.sort, tl.topk and tl.histogram, built from
// shape ops, compares and selects (traced where the user calls them; errors name the user's line).
//
// sort is a bitonic network along one dim of n = 2^k elements: k(k+1)/2 compare-and-exchange steps,
// each pairing element i with i ^ stride through a [blocks, 2, stride] view of the tile. A pair is
// swapped when `lo > hi` (or `lo < hi` where the network sorts the block downward), so the result is
// always a permutation of the input; NaNs compare false, so with a NaN in a line the order of that
// line is unspecified (as with Triton's sort). On the GPU every step moves the tile through shared memory (permute,
// split, join): sort costs about k² round trips.
#pragma once
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "tessera/ops.hpp"
#include "tessera/reduce.hpp"
#include "tessera/shape_ops.hpp"

namespace tessera {

namespace detail {

inline std::int64_t numel_of(const Shape& s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

// x's dim `dim` moved last (and the permutation that moves it back), for ops along the last dim.
inline std::pair<std::vector<int>, std::vector<int>> last_dim_order(int rank, int dim) {
  std::vector<int> to_last, back(static_cast<std::size_t>(rank));
  for (int d = 0; d < rank; ++d)
    if (d != dim) to_last.push_back(d);
  to_last.push_back(dim);
  for (int i = 0; i < rank; ++i) back[static_cast<std::size_t>(to_last[static_cast<std::size_t>(i)])] = i;
  return {to_last, back};
}

// One compare-and-exchange step of the network on rows of n elements ([rows, n] view): pairs
// (i, i ^ stride), ordered upward where bit `block` of i is clear (downward where it is set; for
// the last merge, block == n, every pair goes upward), all flipped when `descending`.
template <class T>
Tile<T> bitonic_step(const Tile<T>& x, std::int64_t rows, std::int64_t n, std::int64_t block, std::int64_t stride,
                     bool descending, const Loc& loc) {
  const std::int64_t pairs = rows * n / (2 * stride);  // [pairs, 2, stride]: pair p's two elements
  Tile<T> lo, hi;
  if (stride == 1) {
    std::tie(lo, hi) = split(x.reshape({pairs, 2}, loc), loc);
  } else {
    std::tie(lo, hi) = split(permute(x.reshape({pairs, 2, stride}, loc), {0, 2, 1}, loc), loc);
  }
  // Pair p starts at element (p * 2 * stride) mod n of its row; bit `block` of that is the bit of i.
  const Tile<std::int32_t> p = arange(0, pairs, loc);
  const Tile<std::int32_t> start = detail::binary<std::int32_t, std::int32_t>(BinOp::Mul, p, 2 * stride, loc);
  const Tile<bool> down_block = detail::binary<bool, std::int32_t>(
      BinOp::Ne, detail::binary<std::int32_t, std::int32_t>(BinOp::And, start, block == n ? 0 : block, loc), 0, loc);
  Tile<bool> down = descending ? detail::binary<bool, bool>(BinOp::Xor, down_block, true, loc) : down_block;
  if (stride > 1) down = down.expand_dims(1, loc);  // [pairs, 1] against [pairs, stride]
  // swap where the pair is out of order for its direction: lo > hi upward, lo < hi downward.
  const Tile<bool> lt = detail::binary<bool, T>(BinOp::Lt, lo, hi, loc), gt = detail::binary<bool, T>(BinOp::Gt, lo, hi, loc);
  const Tile<bool> swap = detail::binary<bool, bool>(
      BinOp::Or, detail::binary<bool, bool>(BinOp::And, down, lt, loc),
      detail::binary<bool, bool>(BinOp::And, detail::binary<bool, bool>(BinOp::Xor, down, true, loc), gt, loc), loc);
  const Tile<T> first = where(swap, hi, lo, loc), second = where(swap, lo, hi, loc);
  if (stride == 1) return join(first, second, loc).reshape({rows, n}, loc);
  return permute(join(first, second, loc), {0, 2, 1}, loc).reshape({rows, n}, loc);
}

}  // namespace detail

// x sorted along `dim` (negative counts from the end; the last by default), ascending unless
// `descending`, as Triton's tl.sort. Every dim of a tile is a power of two, as the network needs.
template <class T>
Tile<T> sort(const Tile<T>& x, int dim = -1, bool descending = false, const Loc& loc = Loc::current()) {
  static_assert(Element<T>, "tessera::sort: needs a tile of numbers");
  const Shape shape = x.shape(loc);
  const int rank = static_cast<int>(shape.size());
  const int d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= rank)
    detail::user_error(loc, "sort of a " + std::to_string(rank) + "-D tile: dim " + std::to_string(dim) + " is out of range");
  auto [to_last, back] = detail::last_dim_order(rank, d);
  const bool moved = d != rank - 1;
  const Tile<T> last = moved ? permute(x, to_last, loc) : x;
  const Shape last_shape = last.shape(loc);
  const std::int64_t n = last_shape.back(), rows = detail::numel_of(last_shape) / n;
  Tile<T> v = last.reshape({rows, n}, loc);
  for (std::int64_t block = 2; block <= n; block *= 2)
    for (std::int64_t stride = block / 2; stride >= 1; stride /= 2)
      v = detail::bitonic_step(v, rows, n, block, stride, descending, loc);
  const Tile<T> sorted = v.reshape(last_shape, loc);
  return moved ? permute(sorted, back, loc) : sorted;
}

// The k largest elements along the last dim, largest first (Triton's tl.topk): a tile whose last
// dim is k (a power of two, at most the dim's size).
template <class T>
Tile<T> topk(const Tile<T>& x, std::int64_t k, const Loc& loc = Loc::current()) {
  Tile<T> v = sort(x, -1, true, loc);
  Shape shape = v.shape(loc);
  const std::int64_t n = shape.back();
  if (k < 1 || k > n || (k & (k - 1)) != 0)
    detail::user_error(loc, "topk: k = " + std::to_string(k) + " must be a power of two between 1 and the last dim's " +
                                std::to_string(n));
  const std::int64_t rows = detail::numel_of(shape) / n;
  // Keep the first half of each row until k remain: [rows, 2, half] -> [rows, half, 2] -> split.
  for (std::int64_t m = n; m > k; m /= 2)
    v = split(permute(v.reshape({rows, 2, m / 2}, loc), {0, 2, 1}, loc), loc).first;
  shape.back() = k;
  return v.reshape(shape, loc);
}

// How many elements of x (an integer tile of any shape) equal each of 0 .. num_bins - 1, as
// Triton's tl.histogram: an int32 tile of num_bins (a power of two); other values are not
// counted, nor, given `mask` (x's shape), the elements where it is false. Every element is
// compared with every bin and the matches summed, so x's size times num_bins must fit one tile.
template <class T>
Tile<std::int32_t> histogram(const Tile<T>& x, std::int64_t num_bins, const Loc& loc = Loc::current()) {
  static_assert(IntegerElement<T>, "tessera::histogram needs an integer tile (the bins are 0, 1, ...)");
  const Tile<T> bins = arange(0, num_bins, loc).template to<T>(loc);
  const Tile<bool> hit = detail::binary<bool, T>(detail::BinOp::Eq, ravel(x, loc).expand_dims(1, loc), bins.expand_dims(0, loc), loc);
  return sum(hit.template to<std::int32_t>(loc), 0, loc);
}
template <class T>
Tile<std::int32_t> histogram(const Tile<T>& x, std::int64_t num_bins, const Tile<bool>& mask,
                             const Loc& loc = Loc::current()) {
  static_assert(IntegerElement<T>, "tessera::histogram needs an integer tile (the bins are 0, 1, ...)");
  const Tile<T> bins = arange(0, num_bins, loc).template to<T>(loc);
  const Tile<bool> hit = detail::binary<bool, bool>(
      detail::BinOp::And,
      detail::binary<bool, T>(detail::BinOp::Eq, ravel(x, loc).expand_dims(1, loc), bins.expand_dims(0, loc), loc),
      ravel(mask, loc).expand_dims(1, loc), loc);
  return sum(hit.template to<std::int32_t>(loc), 0, loc);
}

}  // namespace tessera
