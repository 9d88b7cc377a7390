// A 2-D kernel over a 2-D grid: out[i, j] = x[i] * y[j], built with expand_dims and broadcast.
#include <catch2/catch.hpp>

#include <random>

#include "interp_test_util.hpp"

using namespace tessera;
using namespace tessera::test;

namespace {

constexpr std::int64_t kBm = 16, kBn = 32;

// outer(x, y, out, M, N) over grid (cdiv(M, BM), cdiv(N, BN)).
std::unique_ptr<ir::Module> outer_product() {
  KernelBuilder k("outer");
  Value* x = k.arg(Type::pointer(DType::F32), "x");
  Value* y = k.arg(Type::pointer(DType::F32), "y");
  Value* out = k.arg(Type::pointer(DType::F32), "out");
  Value* m = k.arg(Type::scalar(DType::I32), "M");
  Value* n = k.arg(Type::scalar(DType::I32), "N");
  Value* rows = k.binary(OpKind::Add, k.splat(k.binary(OpKind::Mul, k.program_id(0), k.i32(kBm)), {kBm}), k.arange(kBm));
  Value* cols = k.binary(OpKind::Add, k.splat(k.binary(OpKind::Mul, k.program_id(1), k.i32(kBn)), {kBn}), k.arange(kBn));
  Value* row_mask = k.compare(OpKind::CmpLt, rows, k.splat(m, {kBm}));
  Value* col_mask = k.compare(OpKind::CmpLt, cols, k.splat(n, {kBn}));
  Value* xv = k.load(k.addptr(k.splat(x, {kBm}), rows), row_mask);
  Value* yv = k.load(k.addptr(k.splat(y, {kBn}), cols), col_mask);

  auto expand = [&](Value* v, int axis) {
    std::vector<std::int64_t> shape = v->type.shape;
    shape.insert(shape.begin() + axis, 1);
    return k.op(OpKind::ExpandDims, {v}, v->type.with_shape(shape), {{"axis", std::int64_t{axis}}});
  };
  auto bcast = [&](Value* v) { return k.op(OpKind::Broadcast, {v}, v->type.with_shape({kBm, kBn})); };
  Value* prod = k.binary(OpKind::Mul, bcast(expand(xv, 1)), bcast(expand(yv, 0)));
  Value* rows2 = bcast(expand(rows, 1));
  Value* cols2 = bcast(expand(cols, 0));
  Value* mask = k.binary(OpKind::And, bcast(expand(row_mask, 1)), bcast(expand(col_mask, 0)));
  Value* offs = k.binary(OpKind::Add, k.binary(OpKind::Mul, rows2, k.splat(n, {kBm, kBn})), cols2);
  k.store(k.addptr(k.splat(out, {kBm, kBn}), offs), prod, mask);
  k.ret();
  return std::move(k.m);
}

}  // namespace

TEST_CASE("2-D outer product with expand_dims, broadcast and 2-D masks", "[interp][2d]") {
  const auto mod = outer_product();
  for (auto [m, n] : {std::pair{37, 70}, std::pair{16, 32}, std::pair{1, 1}}) {
    INFO("M = " << m << ", N = " << n << ", seed " << kSeed);
    std::mt19937 rng(kSeed);
    std::uniform_real_distribution<float> dist(-10.f, 10.f);
    std::vector<float> x(m), y(n), out(static_cast<std::size_t>(m) * n, -1.f);
    for (auto& v : x) v = dist(rng);
    for (auto& v : y) v = dist(rng);
    std::vector<ArgValue> args{buffer_arg(x, DType::F32), buffer_arg(y, DType::F32), buffer_arg(out, DType::F32),
                               ArgValue::integer(m, DType::I32), ArgValue::integer(n, DType::I32)};
    const Dim3 grid{static_cast<std::uint32_t>((m + kBm - 1) / kBm), static_cast<std::uint32_t>((n + kBn - 1) / kBn), 1};
    interp::run(*mod, grid, args);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        INFO("i = " << i << ", j = " << j);
        REQUIRE(out[static_cast<std::size_t>(i) * n + j] == x[i] * y[j]);
      }
  }
}
