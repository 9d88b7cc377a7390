// Hardening on the GPU: a loop counter that would wrap past the end of i32 ends the loop on the
// device as on the interpreter (before, it wrapped and the kernel never ended); kernel names that
// are not PTX identifiers compile and run; the interpreter is the oracle for both.
#include <catch2/catch.hpp>
#include <tessera/tessera.hpp>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "compare.hpp"

namespace ts = tessera;

namespace {

// count[0] = number of iterations of for_range(lb, ub, step); sum[0] = sum of the counter (wrapping
// i32 arithmetic, so that the device and the interpreter agree bit for bit).
auto count_trips() {
  return ts::kernel("count_trips", [](ts::Ptr<std::int32_t> count, ts::Int lb, ts::Int ub, ts::Int step) {
    ts::Int n = ts::zeros<std::int32_t>({});
    ts::for_range(lb, ub, step, [&](ts::Int) { n = n + 1; });
    ts::store(count, n);
  });
}

template <class K>
std::int32_t trips(K& k, ts::Executor ex, std::int32_t lb, std::int32_t ub, std::int32_t step) {
  auto out = ts::Buffer<std::int32_t>::from_host(std::vector<std::int32_t>{-1}, ex);
  k[{.grid = {1}, .num_warps = 1, .executor = ex}](out, lb, ub, step);
  ts::synchronize(ex);
  return out.to_host()[0];
}

}  // namespace

TEST_CASE("GPU: a loop counter that would wrap past i32 ends the loop, as on the interpreter", "[gpu][hardening]") {
  auto k = count_trips();
  k.do_not_specialize(1).do_not_specialize(2).do_not_specialize(3);
  constexpr std::int32_t kMax = INT32_MAX, kMin = INT32_MIN;
  for (auto [lb, ub, step, want] : {std::tuple{kMax - 10, kMax, 7, 2}, std::tuple{kMin + 10, kMin, -7, 2},
                                    std::tuple{0, kMax, 1 << 30, 2}, std::tuple{kMax - 1, kMax, kMax, 1},
                                    std::tuple{0, 100, 3, 34}, std::tuple{5, 5, 1, 0}}) {
    INFO("lb " << lb << ", ub " << ub << ", step " << step);
    CHECK(trips(k, ts::Executor::Interpreter, lb, ub, step) == want);
    CHECK(trips(k, ts::Executor::Cuda, lb, ub, step) == want);
  }
}

TEST_CASE("GPU: kernel names that are not PTX identifiers compile and run", "[gpu][hardening]") {
  for (const std::string& name : std::vector<std::string>{"norm.fwd", "9lives", "my kernel", "ns::f<float>", "caf\xc3\xa9", std::string(400, 'k')}) {
    INFO("name '" << name << "'");
    auto k = ts::kernel(name, [](ts::Ptr<float> out) { ts::store(out + ts::arange(0, 32), 3.0f); });
    auto out = ts::Buffer<float>(32, ts::Executor::Cuda);
    k[{.grid = {1}, .num_warps = 1, .executor = ts::Executor::Cuda}](out);
    ts::synchronize(ts::Executor::Cuda);
    gpu_test::check_equal("output", out.to_host(), std::vector<float>(32, 3.0f));
  }
}
