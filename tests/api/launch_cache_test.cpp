// The specialization cache seen from the public API: what compiles again and what does not
// (tessera::runtime_stats().compiles), and concurrent launches of one kernel.
#include <atomic>
#include <cstdint>
#include <exception>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "launch_test_util.hpp"

using namespace launch_test;

namespace {
std::size_t compiles() { return ts::runtime_stats().compiles; }
}  // namespace

TEST_CASE("the same specialization compiles once, a new meta value or argument fact compiles again",
          "[api][launch][cache]") {
  auto k = make_scale("cache_kernel");
  const auto c0 = compiles();
  const auto l0 = ts::runtime_stats().launches;
  REQUIRE(scale_works(k, 100));  // n = 100: not divisible by 16
  CHECK(compiles() == c0 + 1);
  REQUIRE(scale_works(k, 100));
  REQUIRE(scale_works(k, 100, 5.0f));  // a float argument's value is not specialized on
  REQUIRE(scale_works(k, 99));         // nor is an integer's, beyond "divisible by 16" and "== 1"
  CHECK(compiles() == c0 + 1);
  CHECK(ts::runtime_stats().launches == l0 + 4);

  REQUIRE(scale_works(k, 96));  // divisible by 16: a new specialization
  CHECK(compiles() == c0 + 2);
  REQUIRE(scale_works(k, 160));
  REQUIRE(scale_works(k, 100));
  CHECK(compiles() == c0 + 2);

  REQUIRE(scale_works(k, 1));  // n == 1 is a fact of its own
  CHECK(compiles() == c0 + 3);

  REQUIRE(scale_works(k, 100, 3.0f, 128));  // another BLOCK
  CHECK(compiles() == c0 + 4);
  REQUIRE(scale_works(k, 100, 3.0f, 128));
  REQUIRE(scale_works(k, 100, 3.0f, 64));
  CHECK(compiles() == c0 + 4);

  // num_warps is part of the key.
  ts::Buffer<float> x(100, ts::Executor::Interpreter), out(100, ts::Executor::Interpreter);
  auto o = scale_options(100);
  o.num_warps = 8;
  k[o](x, out, 100, 1.0f);
  CHECK(compiles() == c0 + 5);
  k[o](x, out, 100, 1.0f);
  CHECK(compiles() == c0 + 5);
}

TEST_CASE("a second kernel object does not share the first one's cache", "[api][launch][cache]") {
  auto a = make_scale("cache_a");
  auto b = make_scale("cache_b");
  const auto c0 = compiles();
  REQUIRE(scale_works(a));
  REQUIRE(scale_works(b));
  CHECK(compiles() == c0 + 2);
}

TEST_CASE("meta-parameters with equal values under other names do not evict each other", "[api][launch][cache]") {
  // {BLOCK=64, PAD=64} and {PAD=64, BLOCK=64} once shared a cache key (values only): each launch
  // replaced the other's entry and compiled again, and freed a module another thread might run.
  auto k = make_scale("meta_names_kernel");
  const auto host = iota_floats(100);
  auto x = ts::Buffer<float>::from_host(host, ts::Executor::Interpreter);
  ts::Buffer<float> out(100, ts::Executor::Interpreter);
  const ts::MetaValues ab{{"BLOCK", 64}, {"PAD", 64}}, ba{{"PAD", 64}, {"BLOCK", 64}};
  const auto c0 = compiles();
  for (int round = 0; round < 3; ++round) {
    for (const auto* meta : {&ab, &ba}) {
      k[{.grid = {2}, .meta = *meta, .executor = ts::Executor::Interpreter}](x, out, 100, 2.0f);
      const auto got = out.to_host();
      for (std::size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == host[i] * 2.0f);
    }
  }
  CHECK(compiles() == c0 + 2);
}

TEST_CASE("8 threads launching one kernel with 2 meta values", "[api][launch][cache][threads]") {
  auto k = make_scale("threads_kernel");
  constexpr int kThreads = 8, kIterations = 6;
  constexpr std::int32_t n = 200;
  const auto host = iota_floats(n);
  const auto c0 = compiles();
  const auto l0 = ts::runtime_stats().launches;

  // Catch2 v2 assertions are not thread-safe: threads record what went wrong, the main thread checks.
  std::vector<std::string> failures(kThreads);
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        const std::int64_t block = t % 2 == 0 ? 32 : 64;
        const float alpha = static_cast<float>(t + 1);
        auto x = ts::Buffer<float>::from_host(host, ts::Executor::Interpreter);
        ts::Buffer<float> out(n, ts::Executor::Interpreter);
        start.arrive_and_wait();  // all threads reach the (cold) cache together
        for (int it = 0; it < kIterations; ++it) {
          k[scale_options(n, block)](x, out, n, alpha);
          const auto got = out.to_host();
          for (std::int32_t i = 0; i < n; ++i)
            if (got[i] != host[i] * alpha) {
              failures[t] = "thread " + std::to_string(t) + " iteration " + std::to_string(it) + ": element " +
                            std::to_string(i) + " is " + std::to_string(got[i]);
              return;
            }
        }
      } catch (const std::exception& e) {
        failures[t] = "thread " + std::to_string(t) + " threw: " + e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& f : failures) CHECK(f.empty());
  CHECK(compiles() == c0 + 2);
  CHECK(ts::runtime_stats().launches == l0 + kThreads * kIterations);
  CHECK(scale_works(k, n, 3.0f, 32));
  CHECK(compiles() == c0 + 2);
}
