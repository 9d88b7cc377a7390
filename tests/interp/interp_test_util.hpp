// Helpers for the interpreter tests: building small kernels by hand with ir::Builder, and
// reference conversions written independently of the interpreter's.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "jit/interp/interpreter.hpp"
#include "jit/ir/ir.hpp"
#include "tessera/error.hpp"

namespace tessera::test {

using ir::DType;
using ir::OpKind;
using ir::Type;
using ir::Value;

constexpr std::uint32_t kSeed = 20261129;  // fixed; tests print it with INFO

inline Type tile_of(DType d, std::vector<std::int64_t> shape) { return Type::scalar(d).with_shape(std::move(shape)); }
inline Type ptr_tile(DType pointee, std::vector<std::int64_t> shape) {
  return Type::pointer(pointee).with_shape(std::move(shape));
}

// A kernel under construction; every op gets the location set with at(), "test.cpp:1:1" by default.
struct KernelBuilder {
  std::unique_ptr<ir::Module> m = std::make_unique<ir::Module>();
  ir::Builder b{&m->entry()};

  explicit KernelBuilder(std::string name) {
    m->name = std::move(name);
    at("test.cpp", 1);
  }
  void at(std::string file, int line, int column = 1) { b.set_loc({std::move(file), line, column}); }

  Value* arg(Type t, std::string name) {
    m->arg_facts.push_back({});
    return m->entry().add_arg(std::move(t), std::move(name));
  }
  Value* op(OpKind k, std::vector<Value*> operands, Type t, std::map<std::string, ir::Attr> attrs = {}) {
    return b.create1(k, std::move(operands), std::move(t), std::move(attrs));
  }
  Value* i32(std::int64_t v) { return b.int_constant(DType::I32, v); }
  Value* program_id(int axis) { return op(OpKind::ProgramId, {}, Type::scalar(DType::I32), {{"axis", std::int64_t{axis}}}); }
  Value* arange(std::int64_t n) {
    return op(OpKind::Arange, {}, tile_of(DType::I32, {n}), {{"start", std::int64_t{0}}, {"end", n}});
  }
  Value* splat(Value* v, std::vector<std::int64_t> shape) { return op(OpKind::Splat, {v}, v->type.with_shape(std::move(shape))); }
  Value* binary(OpKind k, Value* a, Value* c) { return op(k, {a, c}, a->type); }
  Value* compare(OpKind k, Value* a, Value* c) { return op(k, {a, c}, a->type.with_dtype(DType::I1)); }
  Value* addptr(Value* p, Value* off) { return op(OpKind::AddPtr, {p, off}, p->type.with_shape(off->type.shape)); }
  Value* load(Value* ptrs, Value* mask = nullptr, Value* other = nullptr) {
    std::vector<Value*> ops{ptrs};
    if (mask) ops.push_back(mask);
    if (other) ops.push_back(other);
    return op(OpKind::Load, ops, Type::scalar(ptrs->type.pointee).with_shape(ptrs->type.shape));
  }
  void store(Value* ptrs, Value* v, Value* mask = nullptr) {
    std::vector<Value*> ops{ptrs, v};
    if (mask) ops.push_back(mask);
    b.create(OpKind::Store, ops, {});
  }
  // ptr + arange(n): the addresses of n contiguous elements.
  Value* contiguous(Value* ptr, std::int64_t n) { return addptr(splat(ptr, {n}), arange(n)); }
  void ret() { b.create(OpKind::Return, {}, {}); }
};

inline ArgValue buffer_arg(void* p, DType pointee, std::size_t bytes) { return ArgValue::pointer(p, pointee, bytes); }
template <class T>
ArgValue buffer_arg(std::vector<T>& v, DType pointee) { return ArgValue::pointer(v.data(), pointee, v.size() * sizeof(T)); }

// ---- Reference f16/bf16 rounding: nearest representable value by search over all bit patterns
// (independent of the interpreter's arithmetic encoder), ties to the even pattern.
inline double ref_decode(std::uint16_t bits, int exp_bits, int man_bits) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const int e = (bits >> man_bits) & ((1 << exp_bits) - 1);
  const int m = bits & ((1 << man_bits) - 1);
  const double s = (bits >> (exp_bits + man_bits)) ? -1.0 : 1.0;
  if (e == (1 << exp_bits) - 1) return m ? NAN : s * INFINITY;
  if (e == 0) return s * std::ldexp(m, 1 - bias - man_bits);
  return s * std::ldexp((1 << man_bits) + m, e - bias - man_bits);
}

inline std::uint16_t ref_round(double x, int exp_bits, int man_bits) {
  const std::uint16_t sign = std::signbit(x) ? std::uint16_t(1u << (exp_bits + man_bits)) : 0;
  const std::uint16_t inf = std::uint16_t(((1u << exp_bits) - 1) << man_bits);
  if (std::isnan(x)) return std::uint16_t(sign | inf | (1u << (man_bits - 1)));
  const double ax = std::fabs(x);
  // Positive finite patterns are ordered like their values: binary search the last one <= ax.
  std::uint32_t lo = 0, hi = inf - 1;  // hi: the largest finite
  if (ax >= ref_decode(std::uint16_t(hi), exp_bits, man_bits)) {
    const double max = ref_decode(std::uint16_t(hi), exp_bits, man_bits);
    const double half_ulp = (max - ref_decode(std::uint16_t(hi - 1), exp_bits, man_bits)) / 2;
    return std::uint16_t(sign | (ax >= max + half_ulp ? inf : hi));  // IEEE overflow threshold
  }
  while (lo + 1 < hi) {
    const std::uint32_t mid = (lo + hi) / 2;
    (ref_decode(std::uint16_t(mid), exp_bits, man_bits) <= ax ? lo : hi) = mid;
  }
  const double dl = ax - ref_decode(std::uint16_t(lo), exp_bits, man_bits);
  const double dh = ref_decode(std::uint16_t(hi), exp_bits, man_bits) - ax;
  const std::uint32_t pick = dl < dh ? lo : dh < dl ? hi : ((lo & 1) ? hi : lo);
  return std::uint16_t(sign | pick);
}
inline std::uint16_t ref_f16(double x) { return ref_round(x, 5, 10); }
inline std::uint16_t ref_bf16(double x) { return ref_round(x, 8, 7); }
inline double ref_f16_value(std::uint16_t b) { return ref_decode(b, 5, 10); }
inline double ref_bf16_value(std::uint16_t b) { return ref_decode(b, 8, 7); }

}  // namespace tessera::test
