// The demo: vector add, written as in Triton's tutorial (the kernel is in kernels.hpp). Runs on the
// GPU when one is present, else on the interpreter, says which, and checks its own result.
#include <tessera/tessera.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "kernels.hpp"

namespace ts = tessera;
namespace ex = tessera_examples;

int main(int argc, char** argv) {
  const std::int32_t n = argc > 1 ? std::atoi(argv[1]) : 98432;

  auto add = ex::make_vector_add();

  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> hx(n), hy(n);
  for (auto& v : hx) v = dist(rng);
  for (auto& v : hy) v = dist(rng);

  try {
    auto where = ts::default_executor();
    std::printf("tessera vector add, n = %d, running on: %s\n", n, where.description.c_str());
    auto x = ts::Buffer<float>::from_host(hx), y = ts::Buffer<float>::from_host(hy);
    ts::Buffer<float> out(n);
    add[ex::vector_add_options(n)](x, y, out, n);
    ts::synchronize();
    auto result = out.to_host();
    std::vector<float> ref(n);
    ex::vector_add_reference(hx, hy, ref);
    for (std::int32_t i = 0; i < n; ++i) {
      if (result[i] != ref[i]) {
        std::printf("FAILED at %d: %g != %g\n", i, result[i], ref[i]);
        return 1;
      }
    }
    std::printf("OK: %d elements match the host reference\n", n);
    return 0;
  } catch (const ts::Error& e) {
    std::printf("tessera error: %s\n", e.what());
    return 1;
  }
}
