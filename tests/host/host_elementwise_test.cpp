// Elementwise ops on the host targets against the interpreter, bit for bit: arithmetic, division
// and remainder (zero divisors and MIN / -1 included), bitwise ops and shifts for every dtype;
// masked loads with `other`; i1 tiles; a 3-D grid; a branch on a scalar; every num_warps, one
// element to a million.
#include "host_test_util.hpp"
#include "tests/common/numerics_reference.hpp"

using namespace host_test;

namespace {

constexpr int kWarps64[] = {1, 8, 32};

template <class T>
auto make_arith() {
  return ts::kernel("arith", [](ts::Ptr<T> x, ts::Ptr<T> y, ts::Ptr<T> o1, ts::Ptr<T> o2, ts::Ptr<T> o3,
                                ts::Ptr<T> o4, ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    auto a = ts::load(x + offs, mask);
    auto b = ts::load(y + offs, mask);
    ts::store(o1 + offs, ts::where(a > b, a - b, ts::maximum(a, b) + ts::minimum(a, b) * b), mask);
    ts::store(o2 + offs, a / b, mask);
    ts::store(o3 + offs, a % b, mask);
    if constexpr (std::is_integral_v<T>)
      ts::store(o4 + offs, ((a & b) ^ (a | (b << a))) + (a >> b) - ts::abs(b), mask);
    else
      ts::store(o4 + offs, -a + ts::abs(b) * (a != b).template to<T>(), mask);
  });
}

// Operands: the full range of an integer type (divisors with zeros and -1s, the dividends with
// MIN), floats of both signs with exact zeros among the divisors.
template <class T>
std::pair<std::vector<T>, std::vector<T>> arith_inputs(std::size_t n, std::mt19937& rng) {
  if constexpr (std::is_integral_v<T>) {
    auto a = random_values<T>(n, rng, static_cast<double>(std::numeric_limits<T>::min()),
                              static_cast<double>(std::numeric_limits<T>::max()));
    auto b = random_values<T>(n, rng, -40, 40);
    for (std::size_t i = 0; i < n; i += 7) a[i] = std::numeric_limits<T>::min();
    for (std::size_t i = 3; i < n; i += 11) b[i] = static_cast<T>(-1);
    return {a, b};
  } else {
    auto a = random_values<T>(n, rng, -100, 100), b = random_values<T>(n, rng, -100, 100);
    for (std::size_t i = 2; i < n; i += 13) b[i] = T(0.0f);
    return {a, b};
  }
}

}  // namespace

TEMPLATE_TEST_CASE("arithmetic, division, bitwise ops and shifts on the host targets match the interpreter",
                   "[host][elementwise]", float, double, ts::half, ts::bfloat16, std::int8_t, std::int16_t,
                   std::int32_t, std::int64_t, std::uint8_t, std::uint32_t) {
  using T = TestType;
  auto k = make_arith<T>();
  for (std::int64_t n : kSizes) {
    std::mt19937 rng(kSeed + static_cast<std::uint32_t>(n));
    const auto [a, b] = arith_inputs<T>(static_cast<std::size_t>(n), rng);
    using Out = std::array<std::vector<T>, 4>;
    auto run = [&](ts::Executor e, int warps) {
      Out o{poisoned<T>(n), poisoned<T>(n), poisoned<T>(n), poisoned<T>(n)};
      const int block = block_for(e, warps, n, sizeof(T));
      k[{.grid = {ts::cdiv(n, block)}, .meta = {{"BLOCK", block}}, .num_warps = warps, .executor = e}](
          a, b, o[0], o[1], o[2], o[3], static_cast<std::int32_t>(n));
      return o;
    };
    against_interpreter("arith, n = " + std::to_string(n), run,
                        [](const std::string& what, const Out& got, const Out& want) {
                          for (int i = 0; i < 4; ++i) expect_match(what + ", output " + std::to_string(i + 1), got[i], want[i]);
                        },
                        kAllWarps, kWarps64);
  }
}

namespace {
// out[i] = x[i] where i < valid, else `other` (7): the value a masked lane must load.
template <class T>
auto make_masked_other() {
  return ts::kernel("masked_other", [](ts::Ptr<T> x, ts::Ptr<T> out, ts::Int valid, ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    ts::store(out + offs, ts::load(x + offs, offs < valid, 7), offs < n);
  });
}
}  // namespace

TEMPLATE_TEST_CASE("masked lanes of a load take `other` on the host targets", "[host][elementwise][mask]", float,
                   ts::half, std::int8_t, std::int32_t, std::int64_t, double) {
  using T = TestType;
  auto k = make_masked_other<T>();
  for (std::int64_t n : kSizes) {
    const std::int64_t valid = n / 2;
    std::mt19937 rng(kSeed + 1 + static_cast<std::uint32_t>(n));
    const auto x = random_values<T>(n, rng, -50, 50);
    std::vector<T> expected(x);
    for (std::int64_t i = valid; i < n; ++i) expected[i] = static_cast<T>(7);
    auto run = [&](ts::Executor e, int warps) {
      auto out = poisoned<T>(n);
      const int block = 2 * block_for(e, warps, n, sizeof(T));
      k[{.grid = {ts::cdiv(n, block)}, .meta = {{"BLOCK", block}}, .num_warps = warps, .executor = e}](
          x, out, static_cast<std::int32_t>(valid), static_cast<std::int32_t>(n));
      return out;
    };
    against_interpreter("masked load, n = " + std::to_string(n), run,
                        [&](const std::string& what, const std::vector<T>& got, const std::vector<T>& want) {
                          expect_match(what, got, want);
                          expect_match(what + " (expected values)", got, expected);
                        },
                        kAllWarps, kWarps64);
  }
}

namespace {
auto make_bools() {
  return ts::kernel("bools", [](ts::Ptr<bool> x, ts::Ptr<bool> y, ts::Ptr<bool> out, ts::Ptr<std::int32_t> count,
                                ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    auto a = ts::load(x + offs, mask);
    auto b = ts::load(y + offs, mask);
    ts::store(out + offs, (a && !b) || (a.to<std::int32_t>() + b.to<std::int32_t>() == 2), mask);
    ts::store(count + offs, ts::where(a, offs, -offs), mask);
  });
}
}  // namespace

TEST_CASE("i1 tiles (loads, stores, logic, where) on the host targets match the interpreter", "[host][elementwise]") {
  auto k = make_bools();
  for (std::int64_t n : kSizes) {
    std::mt19937 rng(kSeed + 2 + static_cast<std::uint32_t>(n));
    // As bytes: a bool vector has no data(); every byte 0 or 1.
    auto x = random_values<std::uint8_t>(n, rng, 0, 1), y = random_values<std::uint8_t>(n, rng, 0, 1);
    using Out = std::pair<std::vector<std::uint8_t>, std::vector<std::int32_t>>;
    auto run = [&](ts::Executor e, int warps) {
      Out o{std::vector<std::uint8_t>(n, 0x55), poisoned<std::int32_t>(n)};
      const ts::ArgValue args[] = {
          ts::ArgValue::pointer(x.data(), ts::DType::I1, x.size()), ts::ArgValue::pointer(y.data(), ts::DType::I1, y.size()),
          ts::ArgValue::pointer(o.first.data(), ts::DType::I1, o.first.size()),
          ts::ArgValue::pointer(o.second.data(), ts::DType::I32, o.second.size() * 4),
          ts::ArgValue::integer(n, ts::DType::I32)};
      const int block = block_for(e, warps, n, 1);
      ts::detail::launch(k.def(), {.grid = {ts::cdiv(n, block)}, .meta = {{"BLOCK", block}}, .num_warps = warps,
                                   .executor = e}, args);
      return o;
    };
    against_interpreter("i1, n = " + std::to_string(n), run,
                        [](const std::string& what, const Out& got, const Out& want) {
                          expect_match(what + ", logic", got.first, want.first);
                          expect_match(what + ", where", got.second, want.second);
                        },
                        kAllWarps, kWarps64);
  }
}

TEST_CASE("program ids and program counts of a 3-D grid, and a branch on a scalar, on the host targets",
          "[host][elementwise][grid]") {
  auto k = ts::kernel("grid3", [](ts::Ptr<std::int32_t> out, ts::Int threshold) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto x = ts::program_id(0), y = ts::program_id(1), z = ts::program_id(2);
    auto total = ts::num_programs(0) + ts::num_programs(1) * 100 + ts::num_programs(2) * 10000;
    auto idx = ((z * ts::num_programs(1) + y) * ts::num_programs(0) + x) * BLOCK + ts::arange(0, BLOCK);
    auto v = x + 1000 * y + 1000000 * z + 7 * total + ts::arange(0, BLOCK);
    ts::store(out + idx, v);
    ts::if_(x + y + z > threshold, [&] { ts::store(out + idx, -v); });
  });
  const int gx = 13, gy = 5, gz = 3, block = 64;
  const std::size_t n = static_cast<std::size_t>(gx) * gy * gz * block;
  auto run = [&](ts::Executor e, int warps) {
    auto out = poisoned<std::int32_t>(n);
    k[{.grid = {gx, gy, gz}, .meta = {{"BLOCK", block}}, .num_warps = warps, .executor = e}](out, 9);
    return out;
  };
  against_interpreter("3-D grid", run,
                      [](const std::string& what, const auto& got, const auto& want) { expect_match(what, got, want); },
                      kAllWarps, kWarps64);
}

namespace {
// Operands as random bit patterns (every exponent, subnormals, infinities and NaNs among them),
// then pairs of specials and the quotients near and far beyond 2^mantissa that an x - trunc(x/y)*y
// lowering gets wrong.
template <class T, class Bits>
std::pair<std::vector<T>, std::vector<T>> rem_inputs(std::size_t n, std::mt19937_64& rng) {
  std::vector<T> a(n), b(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto p = static_cast<Bits>(rng()), q = static_cast<Bits>(rng());
    std::memcpy(&a[i], &p, sizeof(T));
    std::memcpy(&b[i], &q, sizeof(T));
    if (i % 3 == 0) b[i] = static_cast<T>(static_cast<float>(rng() % 1000) - 500.0f);  // ordinary divisors
  }
  const double inf = INFINITY;
  const double specials[] = {0.0, -0.0, 1.0, -3.0, inf, -inf, NAN, 7.0, 1e-40, 65504.0};
  std::size_t i = 0;
  for (double s : specials)
    for (double t : specials) a[i] = static_cast<T>(s), b[i] = static_cast<T>(t), ++i;
  return {a, b};
}

template <class T, class Bits>
void check_exact_rem() {
  auto k = numerics_reference::make_rem<T>();
  const std::size_t n = 4000;
  std::mt19937_64 rng(kSeed);
  const auto [a, b] = rem_inputs<T, Bits>(n, rng);
  std::vector<T> want(n);
  for (std::size_t i = 0; i < n; ++i)
    want[i] = static_cast<T>(std::fmod(static_cast<double>(as_double(a[i])), static_cast<double>(as_double(b[i]))));
  enable_host();
  for (ts::Executor e : {ts::Executor::Interpreter, ts::Executor::Host, ts::Executor::Host64}) {
    auto out = poisoned<T>(n);
    k[{.grid = {ts::cdiv(static_cast<std::int64_t>(n), 256)}, .num_warps = 4, .executor = e}](
        a, b, out, static_cast<std::int32_t>(n));
    expect_match(std::string("% on ") + type_name<T>() + ", " + executor_name(e), out, want);
  }
}
}  // namespace

TEST_CASE("float % is C's fmod, exact at any quotient, on the interpreter and the host targets",
          "[host][elementwise][fmod]") {
  // fmod in double is exact and its result is representable in the operands' type, so the
  // double computation is the reference for every float type.
  check_exact_rem<float, std::uint32_t>();
  check_exact_rem<double, std::uint64_t>();
  check_exact_rem<ts::half, std::uint16_t>();
  check_exact_rem<ts::bfloat16, std::uint16_t>();
}
