// Triton language ops built from tessera's primitives (shape_ops.hpp: cat, interleave, ravel, flip,
// broadcast_to; ops.hpp: clamp, minimum/maximum with PropagateNan, swizzle2d) on the interpreter
// and the host targets, against references written here in plain C++ from Triton's definitions;
// and their misuse errors, which name the user's line.
#include "host_test_util.hpp"
#include "tests/common/capture_output.hpp"
#include "tests/common/inline_asm_kernels.hpp"
#include "tests/common/language_reference.hpp"

using namespace host_test;

namespace {

constexpr ts::Executor kExecutors[] = {ts::Executor::Interpreter, ts::Executor::Host, ts::Executor::Host64};

auto make_nan_ops() {
  return ts::kernel("nan_ops", [](ts::Ptr<float> a, ts::Ptr<float> b, ts::Ptr<float> lo, ts::Ptr<float> hi,
                                  ts::Ptr<float> out, ts::Int n) {
    auto offs = ts::program_id(0) * 256 + ts::arange(0, 256);
    auto mask = offs < n;
    auto x = ts::load(a + offs, mask), y = ts::load(b + offs, mask);
    auto l = ts::load(lo + offs, mask), h = ts::load(hi + offs, mask);
    ts::store(out + offs, ts::minimum(x, y, ts::PropagateNan::all), mask);
    ts::store(out + n + offs, ts::maximum(x, y, ts::PropagateNan::all), mask);
    ts::store(out + 2 * n + offs, ts::maximum(x, y, ts::PropagateNan::none), mask);
    ts::store(out + 3 * n + offs, ts::clamp(x, l, h), mask);
    ts::store(out + 4 * n + offs, ts::clamp(x, l, h, ts::PropagateNan::all), mask);
    ts::store(out + 5 * n + offs, ts::clamp(x, -0.5f, 0.5f), mask);
  });
}

float fmin_all(float a, float b) { return std::isnan(a) || std::isnan(b) ? NAN : std::fmin(a, b); }
float fmax_all(float a, float b) { return std::isnan(a) || std::isnan(b) ? NAN : std::fmax(a, b); }

}  // namespace

TEST_CASE("cat, interleave, ravel, flip and broadcast_to move elements as Triton defines them", "[host][language]") {
  enable_host();
  auto k = language_reference::make_shape_ops();
  for (auto [R, C] : language_reference::kShapes)
    for (std::int64_t op = 0; op < language_reference::kShapeOps; ++op) {
      const std::vector<std::int32_t> in = language_reference::shape_input(R, C);
      const auto want = language_reference::shape_reference(op, in, R, C);
      for (ts::Executor e : kExecutors) {
        auto out = poisoned<std::int32_t>(want.size());
        k[{.grid = {1}, .meta = {{"R", R}, {"C", C}, {"OP", op}}, .num_warps = 4, .executor = e}](in, out);
        expect_match("op " + std::to_string(op) + ", " + std::to_string(R) + "x" + std::to_string(C) + ", " +
                         executor_name(e), out, want);
      }
    }
}

TEST_CASE("minimum/maximum with PropagateNan and clamp treat NaN as Triton's", "[host][language]") {
  enable_host();
  auto k = make_nan_ops();
  const std::size_t n = 1000;
  std::mt19937 rng(kSeed);
  auto a = random_values<float>(n, rng, -2, 2), b = random_values<float>(n, rng, -2, 2);
  auto lo = random_values<float>(n, rng, -1, 0), hi = random_values<float>(n, rng, 0, 1);
  for (std::size_t i = 0; i < n; i += 5) a[i] = NAN;
  for (std::size_t i = 1; i < n; i += 7) b[i] = NAN;
  for (std::size_t i = 2; i < n; i += 11) lo[i] = NAN;
  for (std::size_t i = 3; i < n; i += 13) hi[i] = NAN;
  std::vector<float> want(6 * n);
  for (std::size_t i = 0; i < n; ++i) {
    want[i] = fmin_all(a[i], b[i]);
    want[n + i] = fmax_all(a[i], b[i]);
    want[2 * n + i] = std::fmax(a[i], b[i]);
    want[3 * n + i] = std::fmin(std::fmax(a[i], lo[i]), hi[i]);
    want[4 * n + i] = fmin_all(fmax_all(a[i], lo[i]), hi[i]);
    want[5 * n + i] = std::fmin(std::fmax(a[i], -0.5f), 0.5f);
  }
  for (ts::Executor e : kExecutors) {
    auto out = poisoned<float>(6 * n);
    k[{.grid = {ts::cdiv(static_cast<std::int64_t>(n), 256)}, .num_warps = 4, .executor = e}](
        a, b, lo, hi, out, static_cast<std::int32_t>(n));
    expect_match(std::string("NaN ops, ") + executor_name(e), out, want);
  }
}

TEST_CASE("where on pointer tiles picks each element's pointer as Triton's", "[host][language]") {
  enable_host();
  auto k = language_reference::make_where_pointers();
  const language_reference::WherePointersCase c;
  const auto want = c.expected();
  for (ts::Executor e : kExecutors) {
    auto out = poisoned<std::int32_t>(want.size());
    k[{.grid = {ts::cdiv(static_cast<std::int64_t>(c.n), 256)}, .num_warps = 4, .executor = e}](c.x, c.y, c.z, out, c.split, c.n);
    expect_match(std::string("where on pointers, ") + executor_name(e), out, want);
  }
}

TEST_CASE("reduce and associative_scan over tuples run the user's combine as Triton's", "[host][language]") {
  enable_host();
  auto k = language_reference::make_tuple_reductions();
  for (auto [R, C] : language_reference::kTupleShapes) {
    const language_reference::TupleReductionsCase c(R, C);
    const auto want = c.expected();
    for (ts::Executor e : kExecutors) {
      auto val = poisoned<float>(static_cast<std::size_t>(R));
      auto idx = poisoned<std::int32_t>(static_cast<std::size_t>(R));
      auto fwd = poisoned<std::int32_t>(c.a.size()), rev = poisoned<std::int32_t>(c.a.size());
      k[{.grid = {1}, .meta = {{"R", R}, {"C", C}}, .num_warps = 4, .executor = e}](c.v, c.a, c.b, val, idx, fwd, rev);
      const std::string what = std::to_string(R) + "x" + std::to_string(C) + ", " + executor_name(e);
      expect_match("tuple argmax values, " + what, val, want.val);
      expect_match("tuple argmax indices, " + what, idx, want.idx);
      expect_match("linear recurrence, " + what, fwd, want.h_fwd);
      expect_match("reversed linear recurrence, " + what, rev, want.h_rev);
    }
  }
}

TEST_CASE("bitcast reinterprets numbers and pointers bit for bit", "[host][language]") {
  enable_host();
  auto k = language_reference::make_bitcasts();
  const language_reference::BitcastCase c;
  const auto want = c.expected();
  for (ts::Executor e : kExecutors) {
    auto out32 = poisoned<std::uint32_t>(want.out32.size());
    auto out16 = poisoned<std::int16_t>(want.out16.size());
    auto out64 = poisoned<std::int64_t>(want.out64.size());
    auto outf = poisoned<float>(want.outf_bits.size());
    k[{.grid = {ts::cdiv(static_cast<std::int64_t>(c.n), 256)}, .num_warps = 4, .executor = e}](
        c.f, c.h, c.d, out32, out16, out64, outf, c.n);
    const std::string on = std::string(", ") + executor_name(e);
    expect_match("bitcast to u32" + on, out32, want.out32);
    expect_match("bitcast to i16" + on, out16, want.out16);
    expect_match("bitcast to i64" + on, out64, want.out64);
    std::vector<std::uint32_t> outf_bits;
    for (float x : outf) outf_bits.push_back(std::bit_cast<std::uint32_t>(x));
    expect_match("sign flipped through the bits" + on, outf_bits, want.outf_bits);
  }
}

TEST_CASE("while_ loops run while their condition holds, and not at all when it never does", "[host][language]") {
  enable_host();
  auto k = language_reference::make_while_loops();
  const language_reference::WhileLoopsCase c;
  const auto want = c.expected();
  for (ts::Executor e : kExecutors) {
    auto pos = poisoned<std::int32_t>(want.pos.size()), halved = poisoned<std::int32_t>(want.halved.size());
    auto rounds = poisoned<std::int32_t>(want.rounds.size()), flag = poisoned<std::int32_t>(want.flag.size());
    k[{.grid = {c.programs}, .num_warps = 4, .executor = e}](c.keys, c.q, c.x, pos, halved, rounds, flag, c.n);
    const std::string on = std::string(", ") + executor_name(e);
    expect_match("binary search" + on, pos, want.pos);
    expect_match("halved tile" + on, halved, want.halved);
    expect_match("halving rounds" + on, rounds, want.rounds);
    expect_match("a loop that never runs" + on, flag, want.flag);
  }
}

TEST_CASE("debug_barrier makes one thread's stores visible to the program's other threads", "[host][language]") {
  // The host targets run a program's threads one after another between barriers: without the
  // barrier, the first threads would read scratch before the last ones wrote it.
  enable_host();
  auto k = language_reference::make_debug_barrier();
  std::mt19937 rng(kSeed);
  const auto x = random_values<std::int32_t>(4 * 256, rng, -1000, 1000);
  const auto want = language_reference::debug_barrier_reference(x);
  for (ts::Executor e : kExecutors)
    for (int warps : {1, 4, 8}) {
      auto scratch = poisoned<std::int32_t>(x.size()), out = poisoned<std::int32_t>(x.size());
      k[{.grid = {4}, .num_warps = warps, .executor = e}](x, scratch, out);
      expect_match(std::string("reversed through scratch, ") + executor_name(e) + ", num_warps " + std::to_string(warps),
                   out, want);
    }
}

TEST_CASE("gather picks elements along either axis as Triton's", "[host][language]") {
  enable_host();
  auto k = language_reference::make_gathers();
  for (const auto& [R, C, K] : language_reference::kGatherShapes) {
    const language_reference::GatherCase c(R, C, K);
    const auto want1 = c.expected1(), want0 = c.expected0();
    for (ts::Executor e : kExecutors) {
      auto out1 = poisoned<float>(want1.size()), out0 = poisoned<float>(want0.size());
      k[{.grid = {1}, .meta = {{"R", R}, {"C", C}, {"K", K}}, .num_warps = 4, .executor = e}](c.src, c.idx1, c.idx0, out1, out0);
      const std::string what = std::to_string(R) + "x" + std::to_string(C) + ", K " + std::to_string(K) + ", " + executor_name(e);
      expect_match("gather along axis 1, " + what, out1, want1);
      expect_match("gather along axis 0, " + what, out0, want0);
    }
  }
}

TEST_CASE("gather: an index out of range and mismatched shapes are errors naming the line", "[host][language]") {
  auto k = ts::kernel("gather_oob", [](ts::Ptr<float> x, ts::Ptr<std::int32_t> idx) {
    auto offs = ts::arange(0, 16);
    ts::store(x + offs, ts::gather(ts::load(x + offs), ts::load(idx + offs), 0));
  });
  std::vector<float> x(16, 1.0f);
  std::vector<std::int32_t> idx(16, 3);
  idx[5] = 16;
  CHECK_THROWS_WITH((k[{.grid = {1}, .executor = ts::Executor::Interpreter}](x, idx)),
                    Catch::Contains("index 16 at position 5 is outside [0, 16)") &&
                        Catch::Contains("host_language_test.cpp:" + std::to_string(__LINE__ - 7)));
  auto bad = ts::kernel("gather_shapes", [](ts::Ptr<float> x, ts::Ptr<std::int32_t> idx) {
    auto r = ts::arange(0, 4), c = ts::arange(0, 8);
    auto v = ts::load(x + r.col() * 8 + c.row());                        // [4, 8]
    ts::store(x + r.col() * 8 + c.row(), ts::gather(v, ts::load(idx + c.col() * 4 + r.row()), 1));  // [8, 4]
  });
  std::vector<float> y(32, 0.0f);
  std::vector<std::int32_t> j(32, 0);
  CHECK_THROWS_WITH((bad[{.grid = {1}, .executor = ts::Executor::Interpreter}](y, j)),
                    Catch::Contains("differs from src <4x8> in dim 0") &&
                        Catch::Contains("host_language_test.cpp:" + std::to_string(__LINE__ - 6)));
}

TEST_CASE("swizzle2d renumbers a grid in groups of rows as Triton's", "[host][language]") {
  enable_host();
  auto k = ts::kernel("swizzle", [](ts::Ptr<std::int32_t> out, ts::Int size_i, ts::Int size_j) {
    auto p = ts::arange(0, 1024);
    auto i = p / 32, j = p % 32;
    auto [ni, nj] = ts::swizzle2d(i, j, size_i, size_j, 3);
    auto mask = (i < size_i) & (j < size_j);
    ts::store(out + p * 2, ni, mask);
    ts::store(out + p * 2 + 1, nj, mask);
  });
  for (auto [si, sj] : {std::pair{32, 32}, std::pair{7, 5}, std::pair{10, 32}}) {
    std::vector<std::int32_t> want(2048, 0x7f7f7f7f);
    for (int i = 0; i < si; ++i)
      for (int j = 0; j < sj; ++j) {  // Triton's swizzle2d, line by line
        int ij = i * sj + j, size_gj = 3 * sj, group = ij / size_gj, off_i = group * 3;
        int size_g = std::min(si - off_i, 3);
        ij %= size_gj;
        want[static_cast<std::size_t>(2 * (i * 32 + j))] = off_i + ij % size_g;
        want[static_cast<std::size_t>(2 * (i * 32 + j) + 1)] = ij / size_g;
      }
    for (ts::Executor e : kExecutors) {
      auto out = poisoned<std::int32_t>(2048);
      k[{.grid = {1}, .num_warps = 4, .executor = e}](out, si, sj);
      expect_match("swizzle2d " + std::to_string(si) + "x" + std::to_string(sj) + ", " + executor_name(e), out, want);
    }
  }
}

TEST_CASE("misused shape ops name the user's line", "[host][language][errors]") {
  auto bad_flip = ts::kernel("bad_flip", [](ts::Ptr<float> p) {
    auto x = ts::load(p + ts::arange(0, 16));
    ts::store(p + ts::arange(0, 16), ts::flip(x, 1));  // a 1-D tile has no dim 1
  });
  auto bad_cat2 = ts::kernel("bad_cat2", [](ts::Ptr<float> p) {
    auto x = ts::load(p + ts::arange(0, 16)), y = ts::load(p + ts::arange(0, 32));
    ts::store(p + ts::arange(0, 32), ts::cat(x, y));
  });
  std::vector<float> buf(64);
  auto message = [&](auto& kern) {
    try {
      kern[{.grid = {1}, .executor = ts::Executor::Interpreter}](buf);
    } catch (const ts::ProgramError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string flip = message(bad_flip);
  CHECK_THAT(flip, Catch::Contains("flip of <16>: dim 1 is out of range for a 1-D tile") && Catch::Contains("host_language_test.cpp"));
  const std::string cat = message(bad_cat2);
  CHECK_THAT(cat, Catch::Contains("cat of <16> and <32>: both tiles must have the same shape") &&
                      Catch::Contains("host_language_test.cpp"));
}

namespace {

// sort / topk / histogram of an R x C tile of T chosen by meta OP, stored row-major.
template <class T>
auto make_sort_ops() {
  return ts::kernel("sort_ops", [](ts::Ptr<T> in, ts::Ptr<T> out, ts::Ptr<std::int32_t> hist) {
    const int R = static_cast<int>(ts::meta("R")), C = static_cast<int>(ts::meta("C"));
    const std::int64_t op = ts::meta("OP");
    auto r = ts::arange(0, R), c = ts::arange(0, C);
    auto x = ts::load(in + r.col() * C + c.row());
    auto o = out + r.col() * C + c.row();
    if (op == 0) ts::store(o, ts::sort(x));
    else if (op == 1) ts::store(o, ts::sort(x, 0, true));
    else if (op == 2) ts::store(out + r.col() * 4 + ts::arange(0, 4).row(), ts::topk(x, 4));
    if constexpr (std::is_integral_v<T>) {
      if (op == 3) ts::store(hist + ts::arange(0, 16), ts::histogram(x, 16));
      if (op == 4) ts::store(hist + ts::arange(0, 16), ts::histogram(x, 16, x > 2));
    }
  });
}

template <class T>
void check_sort_ops(std::mt19937& rng) {
  auto k = make_sort_ops<T>();
  for (auto [R, C] : {std::pair{4, 16}, std::pair{8, 64}, std::pair{1, 1024}, std::pair{32, 8}}) {
    if (kSanitized && R * C > 64) continue;  // the sanitized pass checks the C++ around the code, not the network again
    std::vector<T> x(static_cast<std::size_t>(R * C));
    for (auto& v : x) v = std::is_integral_v<T> ? static_cast<T>(rng() % 21) - static_cast<T>(2) : static_cast<T>(
                                                        static_cast<float>(rng() % 2001) / 100.0f - 10.0f);
    auto at = [&](int i, int j) { return x[static_cast<std::size_t>(i * C + j)]; };
    for (std::int64_t op = 0; op <= 4; ++op) {
      if (op >= 3 && !std::is_integral_v<T>) continue;
      if (op == 2 && C < 4) continue;
      for (ts::Executor e : kExecutors) {
        // 1024 elements in one row: 55 network steps, host-target frames beyond the fiber stack,
        // an error there (the next test); the interpreter runs it.
        if (R * C > 512 && e != ts::Executor::Interpreter) continue;
        auto out = poisoned<T>(x.size());
        auto hist = poisoned<std::int32_t>(16);
        k[{.grid = {1}, .meta = {{"R", R}, {"C", C}, {"OP", op}}, .num_warps = 4, .executor = e}](x, out, hist);
        const std::string what = "op " + std::to_string(op) + " of " + std::to_string(R) + "x" + std::to_string(C) + ", " +
                                 type_name<T>() + ", " + executor_name(e);
        INFO(what);
        if (op == 0 || op == 1) {
          // Each line along the sorted dim is a permutation of the input's, in order (NaN aside).
          const int lines = op == 0 ? R : C, len = op == 0 ? C : R;
          for (int l = 0; l < lines; ++l) {
            std::vector<T> in_line, out_line;
            for (int m = 0; m < len; ++m) {
              in_line.push_back(op == 0 ? at(l, m) : at(m, l));
              out_line.push_back(out[static_cast<std::size_t>(op == 0 ? l * C + m : m * C + l)]);
            }
            auto key = [](T v) { return std::isnan(static_cast<double>(v)) ? INFINITY : static_cast<double>(v); };
            auto by_key = [&](T a, T b) { return key(a) < key(b); };
            std::vector<T> in_sorted = in_line, out_sorted = out_line;
            std::sort(in_sorted.begin(), in_sorted.end(), by_key);
            std::sort(out_sorted.begin(), out_sorted.end(), by_key);
            REQUIRE(std::equal(in_sorted.begin(), in_sorted.end(), out_sorted.begin(), [&](T a, T b) { return key(a) == key(b); }));
            std::vector<T> finite;
            for (T v : out_line)
              if (!std::isnan(static_cast<double>(v))) finite.push_back(v);
            if (op == 0) REQUIRE(std::is_sorted(finite.begin(), finite.end()));
            else REQUIRE(std::is_sorted(finite.rbegin(), finite.rend()));
          }
        } else if (op == 2) {
          for (int i = 0; i < R; ++i) {
            std::vector<T> row(x.begin() + i * C, x.begin() + (i + 1) * C), top;
            std::erase_if(row, [](T v) { return std::isnan(static_cast<double>(v)); });
            std::sort(row.rbegin(), row.rend());
            for (int j = 0; j < 4; ++j) top.push_back(out[static_cast<std::size_t>(i * 4 + j)]);
            if (row.size() == static_cast<std::size_t>(C)) REQUIRE(std::equal(top.begin(), top.end(), row.begin()));
          }
        } else {
          std::vector<std::int32_t> want(16, 0);
          for (T v : x)
            if (v >= 0 && v < 16 && (op == 3 || v > 2)) ++want[static_cast<std::size_t>(v)];
          expect_match(what, hist, want);
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("sort, topk and histogram as Triton's", "[host][language][sort]") {
  enable_host();
  std::mt19937 rng(kSeed);
  check_sort_ops<std::int32_t>(rng);
  check_sort_ops<float>(rng);
  check_sort_ops<std::uint8_t>(rng);
}

TEST_CASE("sort and topk misuse name the user's line", "[host][language][errors]") {
  auto bad_k = ts::kernel("bad_k", [](ts::Ptr<float> p) {
    auto x = ts::load(p + ts::arange(0, 16));
    ts::store(p + ts::arange(0, 8), ts::topk(x, 3).reshape({1}).broadcast_to({8}));
  });
  std::vector<float> buf(64);
  try {
    bad_k[{.grid = {1}, .executor = ts::Executor::Interpreter}](buf);
    FAIL("no error");
  } catch (const ts::ProgramError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("topk: k = 3 must be a power of two between 1 and the last dim's 16") &&
                                          Catch::Contains("host_language_test.cpp"));
  }
}

TEST_CASE("max_contiguous(multiple_of(rows % n)) rows: the promise's wider loads are right on the host targets",
          "[host][language][hints]") {
  enable_host();
  auto k = language_reference::make_wrapped_rows();
  std::mt19937 rng(kSeed);
  for (const auto& [m, n, bm, bn] : language_reference::kWrappedRowsShapes) {
    auto a = random_values<float>(static_cast<std::size_t>(m * n), rng, -4, 4);
    const auto want = language_reference::wrapped_rows_reference(a, m, n);
    for (ts::Executor e : kExecutors) {
      auto out = poisoned<float>(want.size());
      k[{.grid = {2 * m / bm, ts::cdiv(n, bn)}, .meta = {{"BM", bm}, {"BN", bn}}, .num_warps = 4, .executor = e}](
          a, out, m, n);
      expect_match("wrapped rows " + std::to_string(m) + "x" + std::to_string(n) + ", " + executor_name(e), out, want);
    }
  }
}

TEST_CASE("cache and eviction hints on loads and stores change no value", "[host][language][hints]") {
  enable_host();
  auto k = language_reference::make_hinted_copies();
  std::mt19937 rng(kSeed);
  for (const std::int32_t n : {1000, 4096}) {
    const bool full = n % 256 == 0;
    const auto x = random_values<float>(static_cast<std::size_t>(n), rng, -4, 4);
    const auto want = language_reference::hinted_copies_reference(x, full);
    for (ts::Executor e : kExecutors) {
      auto out = poisoned<float>(want.size());
      k[{.grid = {ts::cdiv(n, 256)}, .meta = {{"BLOCK", 256}, {"FULL", full}}, .num_warps = 4, .executor = e}](x, out, n);
      expect_match("hinted copies, n = " + std::to_string(n) + ", " + executor_name(e), out, want);
    }
  }
}

TEST_CASE("a load or store with both a cache modifier and an eviction policy is refused at the user's line",
          "[host][language][errors]") {
  auto k = ts::kernel("both_hints", [](ts::Ptr<float> p) {
    ts::store(p, ts::load(p, {.cache = ts::LoadCache::cg, .eviction = ts::Eviction::last}));
  });
  std::vector<float> buf(4);
  try {
    k[{.grid = {1}, .executor = ts::Executor::Interpreter}](buf);
    FAIL("no error");
  } catch (const ts::ProgramError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("takes a cache modifier ('cg') or an eviction policy "
                                                      "('evict_last'), not both") &&
                                          Catch::Contains("host_language_test.cpp"));
  }
}

TEST_CASE("device_print prints the same lines on the interpreter and the host targets", "[host][language][print]") {
  enable_host();
  auto k = language_reference::make_printer();
  const int programs = 3;
  std::mt19937 rng(kSeed);
  std::vector<std::int32_t> x = random_values<std::int32_t>(32 * programs, rng, -100000, 100000);
  std::vector<float> y(16 * programs);
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = (static_cast<float>(i % 23) - 11.0f) * 0.375f;  // exact in %f
  const auto want = language_reference::printer_reference(x, y, programs);
  for (ts::Executor e : kExecutors) {
    INFO(executor_name(e));
    const std::string text = test_output::capture_fd(1, [&] {
      k[{.grid = {programs}, .num_warps = 4, .executor = e}](x, y);
      ts::synchronize(e);
    });
    CHECK(language_reference::sorted_lines(text) == want);
  }
}

TEST_CASE("device_print refuses a prefix that is not printable ASCII, naming the line", "[host][language][print][errors]") {
  const int line = __LINE__ + 1;
  auto k = ts::kernel("bad_print", [](ts::Ptr<float> p) { ts::device_print("a\nb", ts::load(p)); });
  std::vector<float> buf(1);
  REQUIRE_THROWS_WITH((k[{.grid = {1}, .executor = ts::Executor::Interpreter}](buf)),
                      Catch::Contains("host_language_test.cpp:" + std::to_string(line)) && Catch::Contains("printable ASCII") &&
                          Catch::Contains("0x0a"));
}

namespace {
// make_checker's launch: debug mode or not.
ts::LaunchOptions checker_launch(int programs, ts::Executor e, bool debug) {
  return {.grid = {programs}, .num_warps = 4, .executor = e, .compile = {.debug = debug}};
}
std::string checker_site(int line_offset) {
  return "language_reference.hpp:" + std::to_string(language_reference::kCheckLine + line_offset) + ":";
}
}  // namespace

TEST_CASE("device_assert names the program, the element and the line of the first failing element", "[host][language][assert]") {
  enable_host();
  auto k = language_reference::make_checker();
  const int programs = 3;
  std::mt19937 rng(kSeed);
  const auto x = random_values<std::int32_t>(128 * programs, rng, -1000, 999);
  auto bad = x;
  bad[2 * 128 + 5 * 8 + 3] = 1000;  // program 2, element (5, 3): not below the limit
  for (ts::Executor e : kExecutors) {
    INFO(executor_name(e));
    // Every element holds: the kernel computes what it computes without the asserts.
    auto out = poisoned<std::int32_t>(x.size());
    k[checker_launch(programs, e, true)](x, out, 1000, 3);
    expect_match("passing asserts", out, language_reference::checker_reference(x, 3));
    REQUIRE_THROWS_AS((k[checker_launch(programs, e, true)](bad, out, 1000, 3)), ts::ProgramError);
    REQUIRE_THROWS_WITH((k[checker_launch(programs, e, true)](bad, out, 1000, 3)),
                        Catch::Contains("pid (2, 0, 0) idx (5, 3) device_assert at ") &&
                            Catch::Contains(checker_site(1)) && Catch::EndsWith("failed: x below the limit"));
    // A scalar condition: no index.
    REQUIRE_THROWS_WITH((k[checker_launch(programs, e, true)](x, out, 1000, 0)),
                        Catch::Contains("pid (0, 0, 0) device_assert at ") && Catch::Contains(checker_site(0)) &&
                            Catch::EndsWith("failed: scale is not zero"));
  }
}

TEST_CASE("outside debug mode, compiled code drops device_assert and the interpreter checks it always", "[host][language][assert]") {
  enable_host();
  auto k = language_reference::make_checker();
  std::mt19937 rng(kSeed);
  auto x = random_values<std::int32_t>(128 * 2, rng, -1000, 999);
  x[77] = 5000;
  for (ts::Executor e : {ts::Executor::Host, ts::Executor::Host64}) {
    INFO(executor_name(e));
    auto out = poisoned<std::int32_t>(x.size());
    k[checker_launch(2, e, false)](x, out, 1000, 3);
    expect_match("no debug mode", out, language_reference::checker_reference(x, 3));
  }
  auto out = poisoned<std::int32_t>(x.size());
  REQUIRE_THROWS_WITH((k[checker_launch(2, ts::Executor::Interpreter, false)](x, out, 1000, 3)),
                      Catch::Contains("pid (0, 0, 0) idx (9, 5) device_assert at ") && Catch::Contains(checker_site(1)));
}

TEST_CASE("debug mode checks signed integer multiplies for overflow on the host targets", "[host][language][assert]") {
  enable_host();
  auto k = language_reference::make_checker();
  std::mt19937 rng(kSeed);
  auto x = random_values<std::int32_t>(128 * 2, rng, -1000, 999);
  const std::int32_t scale = 1 << 21;  // |x| * 2^21 < 2^31 for |x| <= 1000
  x[128 + 2 * 8 + 7] = 1024;           // 2^31: one past INT32_MAX
  for (ts::Executor e : {ts::Executor::Host, ts::Executor::Host64}) {
    INFO(executor_name(e));
    auto out = poisoned<std::int32_t>(x.size());
    REQUIRE_THROWS_WITH((k[checker_launch(2, e, true)](x, out, 2000, scale)),
                        Catch::Contains("pid (1, 0, 0) idx (2, 7) i32 overflow in mul at ") &&
                            Catch::Contains(checker_site(2)));
    // Without debug mode the multiply wraps, as on the interpreter.
    out = poisoned<std::int32_t>(x.size());
    k[checker_launch(2, e, false)](x, out, 2000, scale);
    expect_match("wrapped", out, language_reference::checker_reference(x, scale));
  }
  auto out = poisoned<std::int32_t>(x.size());
  k[checker_launch(2, ts::Executor::Interpreter, true)](x, out, 2000, scale);
  expect_match("interpreter", out, language_reference::checker_reference(x, scale));
}

TEST_CASE("device_assert refuses a message that is not printable ASCII, naming the line", "[host][language][assert][errors]") {
  const int line = __LINE__ + 1;
  auto k = ts::kernel("bad_assert", [](ts::Ptr<float> p) { ts::device_assert(ts::load(p) > 0.0f, "a\tb"); });
  std::vector<float> buf(1, 1.0f);
  REQUIRE_THROWS_WITH((k[{.grid = {1}, .executor = ts::Executor::Interpreter}](buf)),
                      Catch::Contains("host_language_test.cpp:" + std::to_string(line)) &&
                          Catch::Contains("device_assert message must be printable ASCII") && Catch::Contains("0x09"));
}

TEST_CASE("float downcasts round toward zero with Rounding::rtz, bit for bit", "[host][language][rounding]") {
  enable_host();
  auto k = language_reference::make_downcaster();
  const std::vector<double> d = language_reference::downcast_inputs(kSeed);
  std::vector<float> x(d.begin(), d.end());
  const int n = static_cast<int>(d.size());
  for (ts::Executor e : kExecutors) {
    INFO(executor_name(e));
    std::vector<ts::half> h(d.size()), dh(d.size());
    std::vector<ts::bfloat16> b(d.size());
    std::vector<float> f(d.size());
    k[{.grid = {ts::cdiv(n, 128)}, .num_warps = 4, .executor = e}](x, d, h, b, f, dh, n);
    const auto bad = language_reference::downcast_mismatches(x, d, h, b, f, dh);
    for (const auto& line : bad) UNSCOPED_INFO(line);
    CHECK(bad.empty());
  }
}

TEST_CASE("Rounding::rtz on a conversion that is not a float downcast is an error naming the line", "[host][language][rounding][errors]") {
  const int line = __LINE__ + 2;
  auto k = ts::kernel("bad_rounding", [](ts::Ptr<std::int32_t> p, ts::Ptr<ts::half> q) {
    ts::store(q, ts::load(p).to<ts::half>(ts::Rounding::rtz));
  });
  std::vector<std::int32_t> p(1);
  std::vector<ts::half> q(1);
  REQUIRE_THROWS_WITH((k[{.grid = {1}, .executor = ts::Executor::Interpreter}](p, q)),
                      Catch::Contains("host_language_test.cpp:" + std::to_string(line)) &&
                          Catch::Contains("applies to float downcasts") && Catch::Contains("not i32 to f16"));
}

TEST_CASE("the host targets refuse inline GPU assembly with a ProgramError naming the line", "[host][language][inline_asm]") {
  auto kernel = tessera::test::inline_asm_kernels::make_packed_bytes();
  for (ts::Executor e : {ts::Executor::Host, ts::Executor::Host64}) {
    auto in = ts::Buffer<std::uint8_t>::from_host(std::vector<std::uint8_t>(64, 1), e);
    ts::Buffer<std::uint8_t> out(64, e);
    auto launch = [&] { kernel[{.grid = {1}, .meta = {{"BLOCK", 64}}, .executor = e}](in, out, 64); };
    REQUIRE_THROWS_WITH(launch(), Catch::Contains("cannot run GPU assembly") && Catch::Contains("inline_asm_kernels.hpp"));
  }
}

TEST_CASE("a kernel whose frames pass a host thread's fiber stack is refused with an error, not a fault", "[host][language]") {
  // Sorting a row of 1024 floats: the network's steps, each value a stack slot at the host JIT's
  // code generation level, need more than the 256 KB stack each thread of a program has there.
  if (kSanitized) return;  // one compile of this kernel takes most of a minute there
  enable_host();
  auto k = make_sort_ops<float>();
  std::vector<float> x(1024, 1.f), out(1024);
  std::vector<std::int32_t> hist(16);
  std::string message;
  try {
    k[{.grid = {1}, .meta = {{"R", 1}, {"C", 1024}, {"OP", 0}}, .num_warps = 4, .executor = ts::Executor::Host}](x, out, hist);
  } catch (const tessera::LaunchError& e) {
    message = e.what();
  }
  CHECK_THAT(message, Catch::Contains("kernel 'sort_ops' needs") && Catch::Contains("KB of stack per thread on the host targets") &&
                          Catch::Contains("more than a host thread's 256 KB"));
  INFO(message);
  // Its 512-element sibling fits (the sort test runs it there).
  CHECK_NOTHROW(k[{.grid = {1}, .meta = {{"R", 1}, {"C", 512}, {"OP", 0}}, .num_warps = 4, .executor = ts::Executor::Host}](
      std::span<float>(x).first(512), std::span<float>(out).first(512), hist));
}
