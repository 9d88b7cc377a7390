// reshape, trans, join and split on the interpreter, against plain C++ references on random data.
// Kernels are built by hand: load a tile of `shape` from a row-major buffer (offsets from arange,
// expand_dims and broadcast), apply the op, store the result row-major.
#include <catch2/catch.hpp>

#include <numeric>

#include "interp_test_util.hpp"
#include "jit/ir/verifier.hpp"

using namespace tessera;
using namespace tessera::test;
using Catch::Contains;

namespace {

using Shape = std::vector<std::int64_t>;

std::int64_t numel(const Shape& s) { return std::accumulate(s.begin(), s.end(), std::int64_t{1}, std::multiplies<>()); }

// Per-dim indices of row-major index i in s, and back.
Shape unravel(std::int64_t i, const Shape& s) {
  Shape c(s.size());
  for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) c[d] = i % s[d], i /= s[d];
  return c;
}
std::int64_t ravel(const Shape& c, const Shape& s) {
  std::int64_t i = 0;
  for (std::size_t d = 0; d < s.size(); ++d) i = i * s[d] + c[d];
  return i;
}

template <class T> constexpr DType elem_dtype();
template <> constexpr DType elem_dtype<float>() { return DType::F32; }
template <> constexpr DType elem_dtype<std::int8_t>() { return DType::I8; }
template <> constexpr DType elem_dtype<std::int64_t>() { return DType::I64; }

template <class T>
std::vector<T> make_random(std::int64_t n, std::mt19937& rng) {
  std::uniform_int_distribution<int> d(-100, 100);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = static_cast<T>(d(rng));
  return v;
}

// An i32 tile of shape s holding each element's row-major index.
Value* row_major_offsets(KernelBuilder& k, const Shape& s) {
  const int r = static_cast<int>(s.size());
  Value* total = nullptr;
  std::int64_t stride = 1;
  for (int d = r - 1; d >= 0; --d) {
    Value* v = k.arange(s[d]);
    for (int e = 0; e < r; ++e) {
      if (e == d) continue;
      Shape shape = v->type.shape;
      shape.insert(shape.begin() + e, 1);
      v = k.op(OpKind::ExpandDims, {v}, v->type.with_shape(shape), {{"axis", std::int64_t{e}}});
    }
    if (v->type.shape != s) v = k.op(OpKind::Broadcast, {v}, v->type.with_shape(s));
    v = k.binary(OpKind::Mul, v, k.b.int_constant(DType::I32, stride, s));
    total = total ? k.binary(OpKind::Add, total, v) : v;
    stride *= s[d];
  }
  return total;
}

Value* load_tile(KernelBuilder& k, Value* ptr, const Shape& s) {
  if (s.empty()) return k.load(ptr);
  return k.load(k.addptr(k.splat(ptr, s), row_major_offsets(k, s)));
}
void store_tile(KernelBuilder& k, Value* ptr, Value* v) {
  const Shape& s = v->type.shape;
  if (s.empty()) return k.store(ptr, v);
  k.store(k.addptr(k.splat(ptr, s), row_major_offsets(k, s)), v);
}

// A kernel (in0 [, in1], out0 [, out1]) applying `body` to the loaded inputs; verified.
template <class Body>
std::unique_ptr<ir::Module> kernel(DType d, const std::vector<Shape>& ins, int num_out, Body body) {
  KernelBuilder k("shape_op");
  std::vector<Value*> in_ptrs, out_ptrs;
  for (std::size_t i = 0; i < ins.size(); ++i) in_ptrs.push_back(k.arg(Type::pointer(d), "in" + std::to_string(i)));
  for (int i = 0; i < num_out; ++i) out_ptrs.push_back(k.arg(Type::pointer(d), "out" + std::to_string(i)));
  std::vector<Value*> loaded;
  for (std::size_t i = 0; i < ins.size(); ++i) loaded.push_back(load_tile(k, in_ptrs[i], ins[i]));
  std::vector<Value*> results = body(k, loaded);
  for (int i = 0; i < num_out; ++i) store_tile(k, out_ptrs[i], results[i]);
  k.ret();
  ir::verify(*k.m);
  return std::move(k.m);
}

Value* trans_op(KernelBuilder& k, Value* x, const Shape& order) {
  Shape shape;
  for (auto d : order) shape.push_back(x->type.shape[d]);
  return k.op(OpKind::Trans, {x}, x->type.with_shape(shape), {{"order", order}});
}
Value* join_op(KernelBuilder& k, Value* a, Value* b) {
  Shape shape = a->type.shape;
  shape.push_back(2);
  return k.op(OpKind::Join, {a, b}, a->type.with_shape(shape));
}
std::vector<Value*> split_op(KernelBuilder& k, Value* x) {
  Shape shape = x->type.shape;
  shape.pop_back();
  ir::Op* op = k.b.create(OpKind::Split, {x}, {x->type.with_shape(shape), x->type.with_shape(shape)});
  return {op->result(0), op->result(1)};
}

template <class T>
void run(const ir::Module& m, std::vector<std::vector<T>*> buffers) {
  std::vector<ArgValue> args;
  for (auto* b : buffers) args.push_back(buffer_arg(*b, elem_dtype<T>()));
  interp::run(m, {1, 1, 1}, args);
}

}  // namespace

TEMPLATE_TEST_CASE("reshape keeps the row-major order", "[interp][shape]", float, std::int8_t, std::int64_t) {
  using T = TestType;
  std::mt19937 rng(kSeed);
  INFO("seed " << kSeed);
  for (auto [from, to] : {std::pair<Shape, Shape>{{4, 8}, {32}}, {{32}, {4, 8}}, {{1, 16}, {16, 1}}, {{16, 1}, {2, 8}},
                          {{8, 4}, {2, 4, 4}}, {{2, 2, 8}, {8, 4}}, {{1, 1}, {1}}, {{64, 2}, {2, 64}}}) {
    INFO(ir::to_string(Type::scalar(DType::I32).with_shape(from)) << " to " << ir::to_string(Type::scalar(DType::I32).with_shape(to)));
    auto m = kernel(elem_dtype<T>(), {from}, 1, [&](KernelBuilder& k, std::vector<Value*> in) {
      return std::vector<Value*>{k.op(OpKind::Reshape, {in[0]}, in[0]->type.with_shape(to))};
    });
    auto x = make_random<T>(numel(from), rng);
    std::vector<T> out(x.size(), T(-7));
    run<T>(*m, {&x, &out});
    CHECK(out == x);
  }
}

TEMPLATE_TEST_CASE("trans and permute move dim order[i] to dim i", "[interp][shape]", float, std::int8_t, std::int64_t) {
  using T = TestType;
  std::mt19937 rng(kSeed + 1);
  INFO("seed " << kSeed + 1);
  for (auto [shape, order] : {std::pair<Shape, Shape>{{4, 8}, {1, 0}}, {{8, 8}, {1, 0}}, {{1, 16}, {1, 0}}, {{16, 1}, {1, 0}},
                              {{64, 2}, {1, 0}}, {{4, 8}, {0, 1}}, {{2, 4, 8}, {2, 0, 1}}, {{2, 4, 8}, {1, 2, 0}},
                              {{2, 4, 8}, {0, 2, 1}}, {{1, 4, 2}, {2, 1, 0}}}) {
    INFO("shape " << shape.size() << "-D, first dim " << shape[0] << ", order[0] " << order[0]);
    auto m = kernel(elem_dtype<T>(), {shape}, 1, [&](KernelBuilder& k, std::vector<Value*> in) {
      return std::vector<Value*>{trans_op(k, in[0], order)};
    });
    auto x = make_random<T>(numel(shape), rng);
    std::vector<T> out(x.size(), T(-7)), expect(x.size());
    Shape res_shape;
    for (auto d : order) res_shape.push_back(shape[d]);
    for (std::int64_t i = 0; i < numel(res_shape); ++i) {
      Shape c = unravel(i, res_shape), src(shape.size());
      for (std::size_t d = 0; d < order.size(); ++d) src[order[d]] = c[d];
      expect[i] = x[ravel(src, shape)];
    }
    run<T>(*m, {&x, &out});
    CHECK(out == expect);
  }
}

TEMPLATE_TEST_CASE("join stacks two tiles along a new last dim, split takes it apart", "[interp][shape]", float,
                   std::int8_t, std::int64_t) {
  using T = TestType;
  std::mt19937 rng(kSeed + 2);
  INFO("seed " << kSeed + 2);
  for (Shape s : {Shape{}, Shape{8}, Shape{4, 8}, Shape{1, 16}, Shape{16, 1}, Shape{2, 2, 4}}) {
    INFO("operand rank " << s.size() << ", numel " << numel(s));
    const std::int64_t n = numel(s);
    auto a = make_random<T>(n, rng), b = make_random<T>(n, rng);
    std::vector<T> joined(2 * n, T(-7)), expect(2 * n);
    for (std::int64_t i = 0; i < n; ++i) expect[2 * i] = a[i], expect[2 * i + 1] = b[i];
    auto mj = kernel(elem_dtype<T>(), {s, s}, 1, [&](KernelBuilder& k, std::vector<Value*> in) {
      return std::vector<Value*>{join_op(k, in[0], in[1])};
    });
    run<T>(*mj, {&a, &b, &joined});
    CHECK(joined == expect);

    Shape s2 = s;
    s2.push_back(2);
    std::vector<T> lo(n, T(-7)), hi(n, T(-7));
    auto ms = kernel(elem_dtype<T>(), {s2}, 2, [&](KernelBuilder& k, std::vector<Value*> in) { return split_op(k, in[0]); });
    run<T>(*ms, {&expect, &lo, &hi});
    CHECK(lo == a);
    CHECK(hi == b);
  }
}

TEST_CASE("shape ops compose: split(trans(reshape(join(a, b))))", "[interp][shape]") {
  // join <8x4> -> <8x4x2>, reshape <8x8>, trans <8x8>, reshape <32x2>, split -> two <32>.
  std::mt19937 rng(kSeed + 3);
  auto m = kernel(DType::F32, {{8, 4}, {8, 4}}, 2, [&](KernelBuilder& k, std::vector<Value*> in) {
    Value* j = join_op(k, in[0], in[1]);
    Value* r = k.op(OpKind::Reshape, {j}, j->type.with_shape({8, 8}));
    Value* t = trans_op(k, r, {1, 0});
    return split_op(k, k.op(OpKind::Reshape, {t}, t->type.with_shape({32, 2})));
  });
  auto a = make_random<float>(32, rng), b = make_random<float>(32, rng);
  std::vector<float> lo(32), hi(32);
  run<float>(*m, {&a, &b, &lo, &hi});
  // j[r][c][k] (r < 8, c < 4) is element r*8 + c*2 + k of the 8x8 tile; its transpose t[p][q] = j8[q][p].
  for (int i = 0; i < 32; ++i)
    for (int k = 0; k < 2; ++k) {
      const int p = (2 * i + k) / 8, q = (2 * i + k) % 8;   // t's index
      const int flat = q * 8 + p;                             // the joined tile's row-major index
      const float want = (flat % 2 ? b : a)[flat / 2];
      CHECK((k ? hi : lo)[i] == want);
    }
}

TEST_CASE("the verifier checks the shape ops' types", "[interp][shape][verifier]") {
  auto problem = [](auto build) {
    KernelBuilder k("bad");
    Value* p = k.arg(Type::pointer(DType::F32), "p");
    Value* x = k.load(k.addptr(k.splat(p, {16}), k.arange(16)));
    build(k, k.op(OpKind::Reshape, {x}, x->type.with_shape({4, 4})));
    k.ret();
    try {
      ir::verify(*k.m);
    } catch (const ProgramError& e) {
      return std::string(e.what());
    }
    return std::string("(verified)");
  };
  CHECK_THAT(problem([](KernelBuilder& k, Value* x) { k.op(OpKind::Reshape, {x}, x->type.with_shape({8})); }),
             Contains("reshape must keep the number of elements"));
  CHECK_THAT(problem([](KernelBuilder& k, Value* x) {
               k.op(OpKind::Trans, {x}, x->type, {{"order", Shape{0, 0}}});
             }), Contains("not a permutation"));
  CHECK_THAT(problem([](KernelBuilder& k, Value* x) { k.op(OpKind::Trans, {x}, x->type); }), Contains("'order'"));
  CHECK_THAT(problem([](KernelBuilder& k, Value* x) {
               k.op(OpKind::Join, {x, k.op(OpKind::Reshape, {x}, x->type.with_shape({16}))}, x->type.with_shape({4, 4, 2}));
             }), Contains("join operands differ"));
  CHECK_THAT(problem([](KernelBuilder& k, Value* x) { k.op(OpKind::Join, {x, x}, x->type.with_shape({4, 8})); }),
             Contains("join result shape must be [4x4x2]"));
  CHECK_THAT(problem([](KernelBuilder& k, Value* x) { split_op(k, x); }), Contains("split needs a last dim of 2"));
  CHECK(problem([](KernelBuilder& k, Value* x) { split_op(k, k.op(OpKind::Reshape, {x}, x->type.with_shape({8, 2}))); }) ==
        "(verified)");
}
