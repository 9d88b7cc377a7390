// The host targets from several OS threads at once: kernels compile concurrently (the JIT), each
// thread runs its programs on fibers of its own, and one kernel launched from two threads runs one
// launch at a time (its shared memory is one buffer). Results must equal the interpreter's.
#include <thread>

#include "host_test_util.hpp"

using namespace host_test;

TEST_CASE("host launches from four threads at once match the interpreter", "[host][threads]") {
  enable_host();
  // A row sum: barriers and shuffles (fibers), shared memory across warps.
  auto k = ts::kernel("row_sums", [](ts::Ptr<float> x, ts::Ptr<float> out, ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto cols = ts::arange(0, BLOCK);
    auto v = ts::load(x + ts::program_id(0) * n + cols, cols < n, 0.0f);
    ts::store(out + ts::program_id(0), ts::sum(v, 0));
  });
  const int rows = 64, n = 1000;
  std::mt19937 rng(kSeed);
  std::vector<float> x(rows * n);
  for (auto& v : x) v = static_cast<float>(static_cast<int>(rng() % 17) - 8);  // sums exact in any order
  auto run = [&](ts::Executor e, int warps) {
    std::vector<float> out = poisoned<float>(rows);
    k[{.grid = {rows}, .meta = {{"BLOCK", 1024}}, .num_warps = warps, .executor = e}](x, out, n);
    return out;
  };
  const auto want = run(ts::Executor::Interpreter, 4);
  std::vector<std::vector<float>> got(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      // Threads 0 and 1 share a specialization (one compile, launches in turn); 2 and 3 have their
      // own, compiled at the same time.
      const ts::Executor e = t == 3 ? ts::Executor::Host64 : ts::Executor::Host;
      const int warps = t < 2 ? 4 : t == 2 ? 8 : 2;
      for (int rep = 0; rep < 2; ++rep) got[t * 2 + rep] = run(e, warps);
    });
  for (auto& th : threads) th.join();
  for (std::size_t i = 0; i < got.size(); ++i) expect_match("thread " + std::to_string(i / 2), got[i], want);
}
