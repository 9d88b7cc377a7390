// One-program kernels that apply a single op to loaded tiles, for the op-semantics tests.
#pragma once
#include <cstring>

#include "interp_test_util.hpp"

namespace tessera::test {

inline std::int64_t pow2_at_least(std::size_t n) {
  std::int64_t p = 1;
  while (p < static_cast<std::int64_t>(n)) p *= 2;
  return p;
}

// Inputs padded to a power of two (arange needs one); the padding lanes are computed and dropped.
template <class T>
std::vector<T> padded(std::vector<T> v, std::int64_t n) {
  v.resize(static_cast<std::size_t>(n), v.empty() ? T{} : v.back());
  return v;
}

// out[i] = k(a[i], b[i]) with a, b of dtype `d` and the result of dtype `rd`.
template <class R, class T>
std::vector<R> run_binary(OpKind k, DType d, std::vector<T> a, std::vector<T> b, DType rd) {
  const std::size_t count = a.size();
  const std::int64_t n = pow2_at_least(count);
  a = padded(std::move(a), n);
  b = padded(std::move(b), n);
  std::vector<R> out(static_cast<std::size_t>(n));
  KernelBuilder kb("binary");
  Value* pa = kb.arg(Type::pointer(d), "a");
  Value* pb = kb.arg(Type::pointer(d), "b");
  Value* po = kb.arg(Type::pointer(rd), "out");
  Value* av = kb.load(kb.contiguous(pa, n));
  Value* bv = kb.load(kb.contiguous(pb, n));
  kb.store(kb.contiguous(po, n), kb.op(k, {av, bv}, tile_of(rd, {n})));
  kb.ret();
  std::vector<ArgValue> args{buffer_arg(a, d), buffer_arg(b, d), buffer_arg(out, rd)};
  interp::run(*kb.m, {1, 1, 1}, args);
  out.resize(count);
  return out;
}

template <class T>
std::vector<T> run_binary(OpKind k, DType d, std::vector<T> a, std::vector<T> b) {
  return run_binary<T, T>(k, d, std::move(a), std::move(b), d);
}

// out[i] = k(a[i]) with a of dtype `d` and the result of dtype `rd` (unary ops and cast).
template <class R, class T>
std::vector<R> run_unary(OpKind k, DType d, std::vector<T> a, DType rd) {
  const std::size_t count = a.size();
  const std::int64_t n = pow2_at_least(count);
  a = padded(std::move(a), n);
  std::vector<R> out(static_cast<std::size_t>(n));
  KernelBuilder kb("unary");
  Value* pa = kb.arg(Type::pointer(d), "a");
  Value* po = kb.arg(Type::pointer(rd), "out");
  Value* av = kb.load(kb.contiguous(pa, n));
  kb.store(kb.contiguous(po, n), kb.op(k, {av}, tile_of(rd, {n})));
  kb.ret();
  std::vector<ArgValue> args{buffer_arg(a, d), buffer_arg(out, rd)};
  interp::run(*kb.m, {1, 1, 1}, args);
  out.resize(count);
  return out;
}

template <class R, class T>
std::vector<R> run_cast(DType from, std::vector<T> a, DType to) {
  return run_unary<R, T>(OpKind::Cast, from, std::move(a), to);
}

inline std::uint32_t f32_bits(float f) { return std::bit_cast<std::uint32_t>(f); }

}  // namespace tessera::test
