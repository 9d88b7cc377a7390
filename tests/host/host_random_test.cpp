// Random numbers (dsl/include/tessera/random.hpp) and umulhi on the interpreter and the host
// targets, against a plain C++ Philox-4x32 written here from the paper's round function, which is
// itself checked against Random123's published known-answer vectors (tests/kat_vectors of
// Random123, "philox4x32 10" lines). randint4x and rand must match bit for bit; randn within the
// error of the executor's f32 log, sqrt, sin and cos.
#include "host_test_util.hpp"
#include "tests/common/numerics_reference.hpp"

using namespace host_test;

namespace {

using U32 = std::uint32_t;
using numerics_reference::Words;

double normal_reference(U32 a, U32 b) {
  const double u1 = std::max(1.0e-7f, numerics_reference::uniform(a));
  const double th = static_cast<double>(6.283185307179586f) * numerics_reference::uniform(b);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(th);
}

struct Kat {
  Words counter;
  U32 k0, k1;
  Words expected;
};
const Kat kKat[] = {
    {{0, 0, 0, 0}, 0, 0, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, 0xffffffff, 0xffffffff,
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, 0xa4093822, 0x299f31d0,
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

std::int64_t seed_of(U32 k0, U32 k1) { return static_cast<std::int64_t>((std::uint64_t{k1} << 32) | k0); }

// ts::philox on counters given as four words per element, with a seed argument.
auto make_philox() {
  return ts::kernel("philox_words", [](ts::Ptr<U32> counters, ts::Ptr<U32> out, ts::Int64 seed) {
    auto i = ts::arange(0, 4);
    auto word = [&](int w) { return ts::load(counters + i * 4 + w); };
    auto r = ts::philox(seed, word(0), word(1), word(2), word(3));
    for (int w = 0; w < 4; ++w) ts::store(out + i * 4 + w, r[static_cast<std::size_t>(w)]);
  });
}

// randint4x, rand and randn of `offset` tiles (int32_t) with a seed from meta SEED (a C++ value)
// or, when meta TILE_SEED is 1, from the argument.
auto make_streams() {
  return ts::kernel("random_streams", [](ts::Ptr<std::int32_t> offsets, ts::Ptr<U32> words, ts::Ptr<float> uniform,
                                         ts::Ptr<float> normal, ts::Int64 seed_arg, ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    auto off = ts::load(offsets + offs, mask);
    std::array<ts::Tile<U32>, 4> r;
    ts::Tile<float> u, g;
    if (ts::meta("TILE_SEED")) {
      r = ts::randint4x(seed_arg, off);
      u = ts::rand(seed_arg, off);
      g = ts::randn(seed_arg, off);
    } else {
      const std::int64_t seed = ts::meta("SEED");
      r = ts::randint4x(seed, off);
      u = ts::rand(seed, off);
      g = ts::randn(seed, off);
    }
    for (int w = 0; w < 4; ++w) ts::store(words + offs * 4 + w, r[static_cast<std::size_t>(w)], mask);
    ts::store(uniform + offs, u, mask);
    ts::store(normal + offs, g, mask);
  });
}

template <class T>
auto make_umulhi() {
  return ts::kernel("umulhi", [](ts::Ptr<T> a, ts::Ptr<T> b, ts::Ptr<T> out, ts::Int n) {
    auto offs = ts::program_id(0) * 256 + ts::arange(0, 256);
    auto mask = offs < n;
    ts::store(out + offs, ts::umulhi(ts::load(a + offs, mask), ts::load(b + offs, mask)), mask);
  });
}

template <class T>
T umulhi_reference(T a, T b) {
  if constexpr (sizeof(T) == 4) {
    return static_cast<T>((std::uint64_t{static_cast<U32>(a)} * static_cast<U32>(b)) >> 32);
  } else {
    const unsigned __int128 p = static_cast<unsigned __int128>(static_cast<std::uint64_t>(a)) * static_cast<std::uint64_t>(b);
    return static_cast<T>(static_cast<std::uint64_t>(p >> 64));
  }
}

constexpr ts::Executor kExecutors[] = {ts::Executor::Interpreter, ts::Executor::Host, ts::Executor::Host64};

}  // namespace

TEST_CASE("the C++ reference Philox-4x32-10 gives Random123's known answers", "[random]") {
  for (const Kat& k : kKat) CHECK(numerics_reference::philox(k.counter, k.k0, k.k1) == k.expected);
}

TEST_CASE("ts::philox gives Random123's known answers on every executor", "[random][host]") {
  enable_host();
  auto k = make_philox();
  for (const Kat& kat : kKat) {
    // Four elements: the vector itself, and three more counters checked against the reference.
    std::vector<U32> counters(16);
    for (int w = 0; w < 4; ++w) counters[static_cast<std::size_t>(w)] = kat.counter[static_cast<std::size_t>(w)];
    for (std::size_t i = 4; i < 16; ++i) counters[i] = static_cast<U32>(i * 0x9E3779B1u + kat.k0);
    for (ts::Executor e : kExecutors) {
      auto out = poisoned<U32>(16);
      k[{.grid = {1}, .num_warps = 1, .executor = e}](counters, out, seed_of(kat.k0, kat.k1));
      INFO(executor_name(e));
      CHECK(Words{out[0], out[1], out[2], out[3]} == kat.expected);
      for (std::size_t i = 1; i < 4; ++i) {
        Words c{counters[4 * i], counters[4 * i + 1], counters[4 * i + 2], counters[4 * i + 3]};
        CHECK(Words{out[4 * i], out[4 * i + 1], out[4 * i + 2], out[4 * i + 3]} == numerics_reference::philox(c, kat.k0, kat.k1));
      }
    }
  }
}

TEST_CASE("randint4x, rand and randn follow Triton's formulas on every executor", "[random][host]") {
  enable_host();
  auto k = make_streams();
  const std::int64_t n = 3000;
  std::mt19937 rng(kSeed);
  std::vector<std::int32_t> offsets = random_values<std::int32_t>(static_cast<std::size_t>(n), rng, INT32_MIN, INT32_MAX);
  for (std::int64_t i = 0; i < 64; ++i) offsets[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i);  // 0, 1, ...
  // Seeds: small, negative (sign-extended into the high key word), and beyond 32 bits.
  for (std::int64_t seed : {std::int64_t{42}, std::int64_t{-7}, std::int64_t{0x123456789abcdefLL}}) {
    const auto k0 = static_cast<U32>(static_cast<std::uint64_t>(seed)), k1 = static_cast<U32>(static_cast<std::uint64_t>(seed) >> 32);
    for (int tile_seed : {0, 1})
      for (ts::Executor e : kExecutors) {
        auto words = poisoned<U32>(static_cast<std::size_t>(4 * n));
        auto uniform = poisoned<float>(static_cast<std::size_t>(n)), normal = poisoned<float>(static_cast<std::size_t>(n));
        k[{.grid = {ts::cdiv(n, 512)}, .meta = {{"BLOCK", 512}, {"SEED", seed}, {"TILE_SEED", tile_seed}},
           .num_warps = 4, .executor = e}](offsets, words, uniform, normal, seed, static_cast<std::int32_t>(n));
        INFO(executor_name(e) << ", seed " << seed << (tile_seed ? " (an argument)" : " (a C++ value)"));
        std::int64_t bad_words = 0, bad_uniform = 0, bad_normal = 0;
        for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
          const Words want = numerics_reference::philox({static_cast<U32>(offsets[i]), 0, 0, 0}, k0, k1);
          for (std::size_t w = 0; w < 4; ++w) bad_words += words[4 * i + w] != want[w];
          bad_uniform += !same_bits(uniform[i], numerics_reference::uniform(want[0]));
          const double g = normal_reference(want[0], want[1]);
          bad_normal += !(std::fabs(normal[i] - g) <= 2e-5 * (1 + std::fabs(g)));
        }
        CHECK(bad_words == 0);
        CHECK(bad_uniform == 0);
        CHECK(bad_normal == 0);
      }
  }
}

TEST_CASE("rand is uniform on [0, 1] and randn standard normal (moments over 2^16 offsets)", "[random][host]") {
  auto k = make_streams();
  const std::int64_t n = 1 << 16;
  std::vector<std::int32_t> offsets(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) offsets[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i);
  std::vector<U32> words(static_cast<std::size_t>(4 * n));
  std::vector<float> uniform(static_cast<std::size_t>(n)), normal(static_cast<std::size_t>(n));
  k[{.grid = {ts::cdiv(n, 1024)}, .meta = {{"BLOCK", 1024}, {"SEED", 1234}, {"TILE_SEED", 0}},
     .executor = ts::Executor::Interpreter}](offsets, words, uniform, normal, std::int64_t{0}, static_cast<std::int32_t>(n));
  double su = 0, suu = 0, sg = 0, sgg = 0;
  for (std::size_t i = 0; i < uniform.size(); ++i) {
    REQUIRE(uniform[i] >= 0.0f);
    REQUIRE(uniform[i] <= 1.0f);
    su += uniform[i], suu += double(uniform[i]) * uniform[i];
    sg += normal[i], sgg += double(normal[i]) * normal[i];
  }
  const double m = static_cast<double>(n);
  // Standard errors: uniform mean 0.0011, variance 0.0003; normal mean 0.004, variance 0.0055.
  CHECK(std::fabs(su / m - 0.5) < 0.006);
  CHECK(std::fabs(suu / m - su * su / (m * m) - 1.0 / 12) < 0.002);
  CHECK(std::fabs(sg / m) < 0.02);
  CHECK(std::fabs(sgg / m - sg * sg / (m * m) - 1.0) < 0.03);
}

TEMPLATE_TEST_CASE("umulhi gives the high half of the unsigned double-width product", "[random][host]", std::int32_t,
                   std::uint32_t, std::int64_t) {
  using T = TestType;
  auto k = make_umulhi<T>();
  const std::int64_t n = 1000;
  std::mt19937_64 rng(kSeed);
  std::vector<T> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<T>(rng()), b[i] = static_cast<T>(rng());
  // Edge values: all ones, the sign bit alone, zero, one.
  const T edges[] = {static_cast<T>(-1), std::numeric_limits<T>::min(), T(0), T(1), std::numeric_limits<T>::max()};
  for (std::size_t i = 0; i < 5; ++i)
    for (std::size_t j = 0; j < 5; ++j) a[5 * i + j] = edges[i], b[5 * i + j] = edges[j];
  std::vector<T> want(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = umulhi_reference(a[i], b[i]);
  enable_host();
  for (ts::Executor e : kExecutors) {
    auto out = poisoned<T>(static_cast<std::size_t>(n));
    k[{.grid = {ts::cdiv(n, 256)}, .num_warps = 4, .executor = e}](a, b, out, static_cast<std::int32_t>(n));
    expect_match(std::string("umulhi on ") + type_name<T>() + ", " + executor_name(e), out, want);
  }
}
