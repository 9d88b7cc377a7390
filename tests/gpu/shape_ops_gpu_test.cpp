// GPU tests of reshape, trans, permute, join and split: the same kernels on the GPU and on the
// interpreter, random inputs, poisoned outputs; the ops only move data, so results must be equal
// bit for bit (compare.hpp, compare_bits: the first differing elements are listed). Layouts that
// replicate elements (tiles smaller than the CTA tile) are included.
#include <catch2/catch.hpp>
#include <tessera/tessera.hpp>

#include <array>
#include <bit>
#include <cstring>
#include <random>
#include <vector>

#include "compare.hpp"
#include "tests/common/capture_output.hpp"
#include "tests/common/language_reference.hpp"

namespace ts = tessera;

namespace {

constexpr std::uint32_t kSeed = 20261205;
constexpr ts::Executor kExecs[2] = {ts::Executor::Cuda, ts::Executor::Interpreter};

template <class T>
std::vector<T> random_vector(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-100.f, 100.f);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(d(rng));
  return v;
}

template <class T>
std::vector<T> poison(std::size_t n) {
  std::vector<T> v(n);
  std::memset(static_cast<void*>(v.data()), 0x7f, n * sizeof(T));  // bytes: also for half
  return v;
}

template <class T>
ts::Buffer<T> upload(const std::vector<T>& v, ts::Executor ex) {
  return ts::Buffer<T>::from_host(std::span<const T>(v), ex);
}

template <class T>
auto make_transpose() {
  return ts::kernel("transpose", [](ts::Ptr<T> x, ts::Ptr<T> out, ts::Int R, ts::Int C) {
    const int BR = ts::meta("BR"), BC = ts::meta("BC");
    auto rows = ts::program_id(0) * BR + ts::arange(0, BR);
    auto cols = ts::program_id(1) * BC + ts::arange(0, BC);
    auto mask = (rows.col() < R) && (cols.row() < C);
    auto tile = ts::load(x + rows.col() * C + cols.row(), mask);
    ts::store(out + cols.col() * R + rows.row(), ts::trans(tile), ts::trans(mask));
  });
}

auto make_permute3() {
  return ts::kernel("permute3", [](ts::Ptr<float> x, ts::Ptr<float> out, ts::Int n) {
    const int A = ts::meta("A"), B = ts::meta("B"), C = ts::meta("C");
    auto offs = ts::program_id(0) * (A * B * C) + ts::arange(0, A * B * C);
    auto mask = offs < n;
    auto v = ts::load(x + offs, mask, 0.0f).reshape({A, B, C});
    ts::store(out + offs, ts::permute(v, {2, 0, 1}).reshape({A * B * C}), mask);
  });
}

auto make_join_split() {
  return ts::kernel("join_split", [](ts::Ptr<float> a, ts::Ptr<float> b, ts::Ptr<float> p, ts::Ptr<float> ab,
                                     ts::Ptr<float> lo, ts::Ptr<float> hi, ts::Int n) {
    const int BLOCK = ts::meta("BLOCK");
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    auto pair_offs = offs.col() * 2 + ts::arange(0, 2).row();
    auto pair_mask = pair_offs < n * 2;
    ts::store(ab + pair_offs, ts::join(ts::load(a + offs, mask), ts::load(b + offs, mask)), pair_mask);
    auto [l, h] = ts::split(ts::load(p + pair_offs, pair_mask));
    ts::store(lo + offs, l, mask);
    ts::store(hi + offs, h, mask);
  });
}

}  // namespace

TEMPLATE_TEST_CASE("GPU transpose matches the interpreter", "[gpu][shape]", float, ts::half, std::int8_t, double) {
  using T = TestType;
  auto k = make_transpose<T>();
  std::mt19937 rng(kSeed);
  for (auto [r, c, br, bc, warps] : {std::array{37, 70, 16, 32, 4}, std::array{1, 50, 1, 64, 2}, std::array{50, 1, 64, 1, 2},
                                     std::array{1000, 333, 64, 64, 8}, std::array{8, 8, 8, 8, 4}, std::array{5, 3, 2, 2, 1}}) {
    INFO(r << "x" << c << " by " << br << "x" << bc << ", " << warps << " warps, seed " << kSeed);
    const auto x = random_vector<T>(static_cast<std::size_t>(r) * c, rng);
    std::vector<T> out[2];
    for (int e = 0; e < 2; ++e) {
      auto dx = upload(x, kExecs[e]);
      auto dout = upload(poison<T>(x.size()), kExecs[e]);
      k[{.grid = {ts::cdiv(r, br), ts::cdiv(c, bc)}, .meta = {{"BR", br}, {"BC", bc}}, .num_warps = warps,
         .executor = kExecs[e]}](dx, dout, r, c);
      ts::synchronize(kExecs[e]);
      out[e] = dout.to_host();
    }
    gpu_test::check_bits("transpose, GPU vs interpreter", out[0], out[1]);
  }
}

TEST_CASE("GPU reshape + permute matches the interpreter", "[gpu][shape]") {
  auto k = make_permute3();
  std::mt19937 rng(kSeed + 1);
  for (auto [a, b, c, n, warps] : {std::array{2, 4, 8, 100000, 4}, std::array{1, 16, 2, 64, 1}, std::array{8, 1, 4, 33, 2},
                                   std::array{16, 16, 4, 5000, 8}}) {
    INFO(a << "x" << b << "x" << c << ", n = " << n << ", seed " << kSeed + 1);
    const auto x = random_vector<float>(n, rng);
    std::vector<float> out[2];
    for (int e = 0; e < 2; ++e) {
      auto dx = upload(x, kExecs[e]);
      auto dout = upload(poison<float>(n), kExecs[e]);
      k[{.grid = {ts::cdiv(n, a * b * c)}, .meta = {{"A", a}, {"B", b}, {"C", c}}, .num_warps = warps,
         .executor = kExecs[e]}](dx, dout, n);
      ts::synchronize(kExecs[e]);
      out[e] = dout.to_host();
    }
    gpu_test::check_bits("reshape + permute, GPU vs interpreter", out[0], out[1]);
  }
}

TEST_CASE("GPU join and split match the interpreter", "[gpu][shape]") {
  auto k = make_join_split();
  std::mt19937 rng(kSeed + 2);
  for (auto [n, block, warps] : {std::array{77, 32, 4}, std::array{1, 16, 1}, std::array{100000, 256, 8},
                                 std::array{4097, 1024, 4}, std::array{10, 2, 1}}) {
    INFO("n = " << n << ", block = " << block << ", warps = " << warps << ", seed " << kSeed + 2);
    const auto a = random_vector<float>(n, rng), b = random_vector<float>(n, rng), p = random_vector<float>(2 * n, rng);
    std::vector<float> ab[2], lo[2], hi[2];
    for (int e = 0; e < 2; ++e) {
      auto da = upload(a, kExecs[e]), db = upload(b, kExecs[e]), dp = upload(p, kExecs[e]);
      auto dab = upload(poison<float>(2 * n), kExecs[e]);
      auto dlo = upload(poison<float>(n), kExecs[e]), dhi = upload(poison<float>(n), kExecs[e]);
      k[{.grid = {ts::cdiv(n, block)}, .meta = {{"BLOCK", block}}, .num_warps = warps, .executor = kExecs[e]}](
          da, db, dp, dab, dlo, dhi, n);
      ts::synchronize(kExecs[e]);
      ab[e] = dab.to_host();
      lo[e] = dlo.to_host();
      hi[e] = dhi.to_host();
    }
    gpu_test::check_bits("join, GPU vs interpreter", ab[0], ab[1]);
    gpu_test::check_bits("split (low), GPU vs interpreter", lo[0], lo[1]);
    gpu_test::check_bits("split (high), GPU vs interpreter", hi[0], hi[1]);
  }
}

TEST_CASE("GPU cat, interleave, ravel, flip and broadcast_to move elements as Triton defines them", "[gpu][shape]") {
  auto k = language_reference::make_shape_ops();
  for (auto [R, C] : language_reference::kShapes)
    for (std::int64_t op = 0; op < language_reference::kShapeOps; ++op) {
      const std::vector<std::int32_t> in = language_reference::shape_input(R, C);
      const auto want = language_reference::shape_reference(op, in, R, C);
      auto d_in = ts::Buffer<std::int32_t>::from_host(in, ts::Executor::Cuda);
      auto d_out = ts::Buffer<std::int32_t>::from_host(std::vector<std::int32_t>(want.size(), -1), ts::Executor::Cuda);
      k[{.grid = {1}, .meta = {{"R", R}, {"C", C}, {"OP", op}}, .num_warps = 4, .executor = ts::Executor::Cuda}](d_in, d_out);
      ts::synchronize(ts::Executor::Cuda);
      gpu_test::check_equal("op " + std::to_string(op) + ", " + std::to_string(R) + "x" + std::to_string(C), d_out.to_host(), want);
    }
}

TEST_CASE("GPU where on pointer tiles picks each element's pointer as Triton's", "[gpu][shape]") {
  auto k = language_reference::make_where_pointers();
  const language_reference::WherePointersCase c;
  const auto want = c.expected();
  auto x = ts::Buffer<std::int32_t>::from_host(c.x, ts::Executor::Cuda), y = ts::Buffer<std::int32_t>::from_host(c.y, ts::Executor::Cuda);
  auto z = ts::Buffer<std::int32_t>::from_host(c.z, ts::Executor::Cuda);
  auto out = ts::Buffer<std::int32_t>::from_host(std::vector<std::int32_t>(want.size(), -1), ts::Executor::Cuda);
  k[{.grid = {ts::cdiv(static_cast<std::int64_t>(c.n), 256)}, .num_warps = 4, .executor = ts::Executor::Cuda}](x, y, z, out, c.split, c.n);
  ts::synchronize(ts::Executor::Cuda);
  gpu_test::check_equal("where on pointers", out.to_host(), want);
}

TEST_CASE("GPU bitcast reinterprets numbers and pointers bit for bit", "[gpu][shape]") {
  auto k = language_reference::make_bitcasts();
  const language_reference::BitcastCase c;
  const auto want = c.expected();
  const ts::Executor gpu = ts::Executor::Cuda;
  auto f = ts::Buffer<float>::from_host(c.f, gpu);
  auto h = ts::Buffer<ts::half>::from_host(c.h, gpu);
  auto d = ts::Buffer<double>::from_host(c.d, gpu);
  auto out32 = ts::Buffer<std::uint32_t>::from_host(std::vector<std::uint32_t>(want.out32.size(), 0xdeadbeefu), gpu);
  auto out16 = ts::Buffer<std::int16_t>::from_host(std::vector<std::int16_t>(want.out16.size(), -1), gpu);
  auto out64 = ts::Buffer<std::int64_t>::from_host(std::vector<std::int64_t>(want.out64.size(), -1), gpu);
  auto outf = ts::Buffer<float>::from_host(std::vector<float>(want.outf_bits.size(), -1.0f), gpu);
  k[{.grid = {ts::cdiv(static_cast<std::int64_t>(c.n), 256)}, .num_warps = 4, .executor = gpu}](f, h, d, out32, out16, out64, outf, c.n);
  ts::synchronize(gpu);
  gpu_test::check_equal("bitcast to u32", out32.to_host(), want.out32);
  gpu_test::check_equal("bitcast to i16", out16.to_host(), want.out16);
  gpu_test::check_equal("bitcast to i64", out64.to_host(), want.out64);
  std::vector<std::uint32_t> outf_bits;
  for (float x : outf.to_host()) outf_bits.push_back(std::bit_cast<std::uint32_t>(x));
  gpu_test::check_equal("sign flipped through the bits", outf_bits, want.outf_bits);
}

TEST_CASE("GPU while_ loops run while their condition holds, and not at all when it never does", "[gpu][shape]") {
  auto k = language_reference::make_while_loops();
  const language_reference::WhileLoopsCase c;
  const auto want = c.expected();
  const ts::Executor gpu = ts::Executor::Cuda;
  auto keys = ts::Buffer<std::int32_t>::from_host(c.keys, gpu), q = ts::Buffer<std::int32_t>::from_host(c.q, gpu);
  auto x = ts::Buffer<std::int32_t>::from_host(c.x, gpu);
  auto fresh = [&](std::size_t n) { return ts::Buffer<std::int32_t>::from_host(std::vector<std::int32_t>(n, -1), gpu); };
  auto pos = fresh(want.pos.size()), halved = fresh(want.halved.size()), rounds = fresh(want.rounds.size());
  auto flag = fresh(want.flag.size());
  k[{.grid = {c.programs}, .num_warps = 4, .executor = gpu}](keys, q, x, pos, halved, rounds, flag, c.n);
  ts::synchronize(gpu);
  gpu_test::check_equal("binary search", pos.to_host(), want.pos);
  gpu_test::check_equal("halved tile", halved.to_host(), want.halved);
  gpu_test::check_equal("halving rounds", rounds.to_host(), want.rounds);
  gpu_test::check_equal("a loop that never runs", flag.to_host(), want.flag);
}

TEST_CASE("GPU debug_barrier makes one thread's stores visible to the program's other threads", "[gpu][shape]") {
  auto k = language_reference::make_debug_barrier();
  std::vector<std::int32_t> x(64 * 256);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::int32_t>(i * 7919 % 2001) - 1000;
  const auto want = language_reference::debug_barrier_reference(x);
  const ts::Executor gpu = ts::Executor::Cuda;
  auto xb = ts::Buffer<std::int32_t>::from_host(x, gpu);
  for (int warps : {1, 4, 8}) {
    auto scratch = ts::Buffer<std::int32_t>::from_host(std::vector<std::int32_t>(x.size(), -1), gpu);
    auto out = ts::Buffer<std::int32_t>::from_host(std::vector<std::int32_t>(x.size(), -1), gpu);
    k[{.grid = {64}, .num_warps = warps, .executor = gpu}](xb, scratch, out);
    ts::synchronize(gpu);
    gpu_test::check_equal("reversed through scratch, num_warps " + std::to_string(warps), out.to_host(), want);
  }
}

TEST_CASE("GPU gather picks elements along either axis as Triton's", "[gpu][shape]") {
  auto k = language_reference::make_gathers();
  const ts::Executor gpu = ts::Executor::Cuda;
  for (const auto& [R, C, K] : language_reference::kGatherShapes) {
    const language_reference::GatherCase c(R, C, K);
    const auto want1 = c.expected1(), want0 = c.expected0();
    auto src = ts::Buffer<float>::from_host(c.src, gpu);
    auto idx1 = ts::Buffer<std::int32_t>::from_host(c.idx1, gpu);
    auto idx0 = ts::Buffer<std::int64_t>::from_host(c.idx0, gpu);
    auto out1 = ts::Buffer<float>::from_host(std::vector<float>(want1.size(), -1.f), gpu);
    auto out0 = ts::Buffer<float>::from_host(std::vector<float>(want0.size(), -1.f), gpu);
    k[{.grid = {1}, .meta = {{"R", R}, {"C", C}, {"K", K}}, .num_warps = 4, .executor = gpu}](src, idx1, idx0, out1, out0);
    ts::synchronize(gpu);
    const std::string what = std::to_string(R) + "x" + std::to_string(C) + ", K " + std::to_string(K);
    gpu_test::check_equal("gather along axis 1, " + what, out1.to_host(), want1);
    gpu_test::check_equal("gather along axis 0, " + what, out0.to_host(), want0);
  }
}

TEST_CASE("GPU reduce and associative_scan over tuples run the user's combine as Triton's", "[gpu][shape]") {
  auto k = language_reference::make_tuple_reductions();
  for (auto [R, C] : language_reference::kTupleShapes) {
    const language_reference::TupleReductionsCase c(R, C);
    const auto want = c.expected();
    const ts::Executor gpu = ts::Executor::Cuda;
    auto v = ts::Buffer<float>::from_host(c.v, gpu);
    auto a = ts::Buffer<std::int32_t>::from_host(c.a, gpu), b = ts::Buffer<std::int32_t>::from_host(c.b, gpu);
    auto val = ts::Buffer<float>::from_host(std::vector<float>(static_cast<std::size_t>(R), -1.f), gpu);
    auto idx = ts::Buffer<std::int32_t>::from_host(std::vector<std::int32_t>(static_cast<std::size_t>(R), -1), gpu);
    auto fwd = ts::Buffer<std::int32_t>::from_host(std::vector<std::int32_t>(c.a.size(), -1), gpu);
    auto rev = ts::Buffer<std::int32_t>::from_host(std::vector<std::int32_t>(c.a.size(), -1), gpu);
    k[{.grid = {1}, .meta = {{"R", R}, {"C", C}}, .num_warps = 4, .executor = gpu}](v, a, b, val, idx, fwd, rev);
    ts::synchronize(gpu);
    const std::string what = std::to_string(R) + "x" + std::to_string(C);
    gpu_test::check_equal("tuple argmax values " + what, val.to_host(), want.val);
    gpu_test::check_equal("tuple argmax indices " + what, idx.to_host(), want.idx);
    gpu_test::check_equal("linear recurrence " + what, fwd.to_host(), want.h_fwd);
    gpu_test::check_equal("reversed linear recurrence " + what, rev.to_host(), want.h_rev);
  }
}

TEST_CASE("GPU max_contiguous(multiple_of(rows % m)): the promise's 16-byte loads copy the right rows", "[gpu][shape]") {
  auto k = language_reference::make_wrapped_rows();
  std::mt19937 rng(kSeed);
  const ts::Executor gpu = ts::Executor::Cuda;
  for (const auto& [m, n, bm, bn] : language_reference::kWrappedRowsShapes) {
    const auto a = random_vector<float>(static_cast<std::size_t>(m * n), rng);
    const auto want = language_reference::wrapped_rows_reference(a, m, n);
    auto ab = upload(a, gpu), out = upload(poison<float>(want.size()), gpu);
    k[{.grid = {2 * m / bm, ts::cdiv(n, bn)}, .meta = {{"BM", bm}, {"BN", bn}}, .num_warps = 4, .executor = gpu}](ab, out, m, n);
    ts::synchronize(gpu);
    gpu_test::check_equal("wrapped rows " + std::to_string(m) + "x" + std::to_string(n), out.to_host(), want);
  }
}

TEST_CASE("GPU cache and eviction hints on loads and stores change no value", "[gpu][shape]") {
  auto k = language_reference::make_hinted_copies();
  std::mt19937 rng(kSeed + 1);
  const ts::Executor gpu = ts::Executor::Cuda;
  for (const std::int32_t n : {1000, 4096}) {
    const bool full = n % 256 == 0;
    const auto x = random_vector<float>(static_cast<std::size_t>(n), rng);
    const auto want = language_reference::hinted_copies_reference(x, full);
    auto xb = upload(x, gpu), out = upload(poison<float>(want.size()), gpu);
    k[{.grid = {ts::cdiv(n, 256)}, .meta = {{"BLOCK", 256}, {"FULL", full}}, .num_warps = 4, .executor = gpu}](xb, out, n);
    ts::synchronize(gpu);
    gpu_test::check_equal("hinted copies, n = " + std::to_string(n), out.to_host(), want);
  }
}

TEST_CASE("GPU device_print prints the interpreter's lines, each element once", "[gpu][shape][print]") {
  auto k = language_reference::make_printer();
  const int programs = 5;
  std::mt19937 rng(kSeed);
  std::vector<std::int32_t> x(32 * programs);
  for (auto& v : x) v = static_cast<std::int32_t>(rng() % 2000001) - 1000000;
  std::vector<float> y(16 * programs);
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = (static_cast<float>(i % 23) - 11.0f) * 0.375f;  // exact in %f
  const auto want = language_reference::printer_reference(x, y, programs);
  for (ts::Executor e : kExecs)
    for (int warps : {1, 4}) {
      INFO((e == ts::Executor::Cuda ? "cuda" : "interpreter") << ", num_warps " << warps);
      auto bx = upload(x, e);
      auto by = upload(y, e);
      const std::string text = test_output::capture_fd(1, [&] {
        k[{.grid = {programs}, .num_warps = warps, .executor = e}](bx, by);
        ts::synchronize(e);
      });
      CHECK(language_reference::sorted_lines(text) == want);
    }
}

TEST_CASE("GPU float downcasts with Rounding::rtz match the reference bit for bit", "[gpu][shape][rounding]") {
  auto k = language_reference::make_downcaster();
  const std::vector<double> d = language_reference::downcast_inputs(kSeed);
  const std::vector<float> x(d.begin(), d.end());
  const int n = static_cast<int>(d.size());
  auto bx = upload(x, ts::Executor::Cuda);
  auto bd = upload(d, ts::Executor::Cuda);
  auto bh = upload(std::vector<ts::half>(d.size()), ts::Executor::Cuda);
  auto bdh = upload(std::vector<ts::half>(d.size()), ts::Executor::Cuda);
  auto bb = upload(std::vector<ts::bfloat16>(d.size()), ts::Executor::Cuda);
  auto bf = upload(std::vector<float>(d.size()), ts::Executor::Cuda);
  k[{.grid = {ts::cdiv(n, 128)}, .num_warps = 4, .executor = ts::Executor::Cuda}](bx, bd, bh, bb, bf, bdh, n);
  ts::synchronize(ts::Executor::Cuda);
  const auto bad = language_reference::downcast_mismatches(x, d, bh.to_host(), bb.to_host(), bf.to_host(), bdh.to_host());
  for (const auto& line : bad) UNSCOPED_INFO(line);
  CHECK(bad.empty());
}
