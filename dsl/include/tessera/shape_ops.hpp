// The DSL's shape ops, in Triton's vocabulary: reshape, permute, trans, join, split (one IR op
// each), and cat, interleave, ravel, flip, broadcast_to built from them (dsl/src/shape_ops.cpp).
// They move elements between threads through shared memory on the GPU, so they cost a round trip
// there (flip one per bit of the flipped dim).
#pragma once
#include <utility>
#include <vector>

#include "tessera/tile.hpp"

namespace tessera {

// x's elements in row-major order, in `shape` (as many elements; every dim a power of two).
template <class T>
Tile<T> reshape(const Tile<T>& x, const Shape& shape, const Loc& loc = Loc::current()) {
  return x.reshape(shape, loc);
}
// Result dim i is x's dim order[i]; order is a permutation of 0 .. rank-1.
template <class T>
Tile<T> permute(const Tile<T>& x, const std::vector<int>& order, const Loc& loc = Loc::current()) {
  return Tile<T>(detail::emit_permute(x.ir_value(loc), order, "permute", loc), loc);
}
// The transpose of a 2-D tile.
template <class T>
Tile<T> trans(const Tile<T>& x, const Loc& loc = Loc::current()) {
  return Tile<T>(detail::emit_permute(x.ir_value(loc), {1, 0}, "trans", loc), loc);
}
// a and b (one shape) stacked along a new last dim of 2: result[..., 0] = a, result[..., 1] = b.
template <class T>
Tile<T> join(const Tile<T>& a, const Tile<T>& b, const Loc& loc = Loc::current()) {
  return Tile<T>(detail::emit_join(a.ir_value(loc), b.ir_value(loc), loc), loc);
}
// The inverse of join: x's last dim must be 2; returns (x[..., 0], x[..., 1]).
template <class T>
std::pair<Tile<T>, Tile<T>> split(const Tile<T>& x, const Loc& loc = Loc::current()) {
  auto [a, b] = detail::emit_split(x.ir_value(loc), loc);
  return {Tile<T>(a, loc), Tile<T>(b, loc)};
}

// a then b along dim 0, in order (Triton's cat with can_reorder=False, which Triton itself refuses):
// both tiles of one shape, the result's dim 0 twice theirs.
template <class T>
Tile<T> cat(const Tile<T>& a, const Tile<T>& b, const Loc& loc = Loc::current()) {
  return Tile<T>(detail::emit_cat(a.ir_value(loc), b.ir_value(loc), loc), loc);
}
// a and b interleaved along their last dim: a[..., 0], b[..., 0], a[..., 1], ... (Triton's interleave).
template <class T>
Tile<T> interleave(const Tile<T>& a, const Tile<T>& b, const Loc& loc = Loc::current()) {
  return Tile<T>(detail::emit_interleave(a.ir_value(loc), b.ir_value(loc), loc), loc);
}
// x's elements as a 1-D tile, in row-major order (Triton's ravel).
template <class T>
Tile<T> ravel(const Tile<T>& x, const Loc& loc = Loc::current()) {
  return Tile<T>(detail::emit_ravel(x.ir_value(loc), loc), loc);
}
// x reversed along `dim` (negative counts from the end; Triton's default is the last dim).
template <class T>
Tile<T> flip(const Tile<T>& x, int dim = -1, const Loc& loc = Loc::current()) {
  return Tile<T>(detail::emit_flip(x.ir_value(loc), dim, loc), loc);
}
// src's elements picked along `axis` by an integer tile (Triton's tl.gather): the result has
// index's shape and result[.., i, ..] = src[.., index[.., i, ..], ..]. index has src's rank and
// its dims other than `axis` equal src's. An index outside [0, src.shape[axis]) is an error on
// the interpreter; compiled code reads it modulo that length.
template <class T, class J>
Tile<T> gather(const Tile<T>& src, const Tile<J>& index, int axis, const Loc& loc = Loc::current()) {
  static_assert(IntegerElement<J>, "tessera::gather: the index must be a tile of integers");
  return Tile<T>(detail::emit_gather(src.ir_value(loc), index.ir_value(loc), axis, loc), loc);
}
// x broadcast to `shape` (dims of 1 stretched), as Triton's broadcast_to.
template <class T>
Tile<T> broadcast_to(const Tile<T>& x, const Shape& shape, const Loc& loc = Loc::current()) {
  return x.broadcast_to(shape, loc);
}

}  // namespace tessera
