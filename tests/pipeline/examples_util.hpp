// Shared by the pipeline tests of the example kernels (examples/kernels.hpp): random inputs,
// poisoned outputs, and each example kernel packaged with host memory for a run on given sizes.
#pragma once
#include <catch2/catch.hpp>
#include <tessera/tessera.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "examples/kernels.hpp"
#include "examples/matmul_kernels.hpp"
#include "examples/norm_kernels.hpp"

namespace tessera::test {

namespace ex = ::tessera_examples;

// Fixed, printed with INFO by every test that draws from it, so a failure can be replayed.
constexpr std::uint32_t kExamplesSeed = 20261130;

template <class T>
std::vector<T> random_values(std::size_t n, std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(dist(rng));
  return v;
}

// Every byte 0x7f: a huge finite f32 (3.39e38) and a NaN f16, so that an element the kernel
// should have written but did not can never pass for a result.
template <class T>
std::vector<T> poisoned(std::size_t n) {
  std::vector<T> v(n);
  std::memset(static_cast<void*>(v.data()), 0x7f, n * sizeof(T));
  return v;
}

template <class T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// One example kernel on one problem size, with its own host memory: the launch options the
// example uses, and the arguments as the launch path makes them (pointer arguments carry their
// buffer sizes, so the interpreter checks every access against them).
struct HostCase {
  std::string label;
  detail::KernelDef* def = nullptr;  // non-const: compile_only takes it so
  LaunchOptions opts;
  std::vector<std::vector<std::byte>> memory;  // one per pointer argument, outputs poisoned
  std::vector<ArgValue> args;

  HostCase() = default;
  HostCase(const HostCase&) = delete;  // args point into memory
  HostCase(HostCase&&) = default;      // moving the vectors keeps their storage

  Dim3 grid() const {
    auto g = opts.grid.resolve(opts.meta);
    return {static_cast<std::uint32_t>(g[0]), static_cast<std::uint32_t>(g[1]), static_cast<std::uint32_t>(g[2])};
  }
};

template <class T>
std::vector<std::byte> as_bytes_vector(const std::vector<T>& v) {
  std::vector<std::byte> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <class T>
std::span<T> typed(std::vector<std::byte>& b) {
  return {reinterpret_cast<T*>(b.data()), b.size() / sizeof(T)};
}

// The kernel objects live as long as the test program: KernelDef is what the pipeline reads.
inline auto& vector_add_kernel() { static auto k = ex::make_vector_add(); return k; }
inline auto& fused_elu_kernel() { static auto k = ex::make_fused_elu(); return k; }
inline auto& broadcast_2d_kernel() { static auto k = ex::make_broadcast_2d(); return k; }

inline HostCase vector_add_case(std::int32_t n, std::mt19937& rng) {
  auto& k = vector_add_kernel();
  HostCase c;
  c.label = "add, n = " + std::to_string(n);
  c.def = &k.def();
  c.opts = ex::vector_add_options(n, Executor::Interpreter);
  c.memory = {as_bytes_vector(random_values<float>(n, rng, -100.f, 100.f)),
              as_bytes_vector(random_values<float>(n, rng, -100.f, 100.f)), as_bytes_vector(poisoned<float>(n))};
  auto a = std::remove_reference_t<decltype(k)>::arg_values(typed<float>(c.memory[0]), typed<float>(c.memory[1]),
                                                            typed<float>(c.memory[2]), n);
  c.args.assign(a.begin(), a.end());
  return c;
}

inline HostCase fused_elu_case(std::int32_t n, float scale, float bias, std::mt19937& rng) {
  auto& k = fused_elu_kernel();
  HostCase c;
  c.label = "fused_elu, n = " + std::to_string(n) + ", scale " + std::to_string(scale) + ", bias " + std::to_string(bias);
  c.def = &k.def();
  c.opts = ex::fused_elu_options(n, Executor::Interpreter);
  c.memory = {as_bytes_vector(random_values<half>(n, rng, -3.f, 3.f)), as_bytes_vector(poisoned<half>(n))};
  auto a = std::remove_reference_t<decltype(k)>::arg_values(typed<half>(c.memory[0]), typed<half>(c.memory[1]), scale,
                                                            bias, n);
  c.args.assign(a.begin(), a.end());
  return c;
}

inline HostCase broadcast_2d_case(std::int32_t m, std::int32_t n, std::int32_t stride, std::mt19937& rng) {
  auto& k = broadcast_2d_kernel();
  HostCase c;
  c.label = "broadcast_2d, " + std::to_string(m) + " x " + std::to_string(n) + ", stride " + std::to_string(stride);
  c.def = &k.def();
  c.opts = ex::broadcast_2d_options(m, n, Executor::Interpreter);
  const std::size_t elems = static_cast<std::size_t>(m) * static_cast<std::size_t>(stride);
  c.memory = {as_bytes_vector(random_values<float>(elems, rng, -1.f, 1.f)),
              as_bytes_vector(random_values<float>(m, rng, -1.f, 1.f)),
              as_bytes_vector(random_values<float>(n, rng, -1.f, 1.f)), as_bytes_vector(poisoned<float>(elems))};
  auto a = std::remove_reference_t<decltype(k)>::arg_values(typed<float>(c.memory[0]), typed<float>(c.memory[1]),
                                                            typed<float>(c.memory[2]), typed<float>(c.memory[3]), m,
                                                            n, stride);
  c.args.assign(a.begin(), a.end());
  return c;
}

inline auto& matmul_f16_kernel() { static auto k = ex::make_matmul<half, float>("matmul_f16"); return k; }

// The matmul example (f16 in, f32 out) on an m x n x k problem, row-major A, B and C.
inline HostCase matmul_case(std::int32_t m, std::int32_t n, std::int32_t k, const ex::MatmulConfig& cfg, std::mt19937& rng) {
  auto& kernel = matmul_f16_kernel();
  HostCase c;
  c.label = "matmul f16 " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + ", num_stages " +
            std::to_string(cfg.num_stages);
  c.def = &kernel.def();
  const ex::MatmulShape s{m, n, k, k, 1, n, 1, n, 1};
  c.opts = ex::matmul_options(s, cfg, Executor::Interpreter);
  c.memory = {as_bytes_vector(random_values<half>(static_cast<std::size_t>(m) * k, rng, -1.f, 1.f)),
              as_bytes_vector(random_values<half>(static_cast<std::size_t>(k) * n, rng, -1.f, 1.f)),
              as_bytes_vector(poisoned<float>(static_cast<std::size_t>(m) * n))};
  auto a = std::apply(
      [&](auto... sc) {
        return std::remove_reference_t<decltype(kernel)>::arg_values(typed<half>(c.memory[0]), typed<half>(c.memory[1]),
                                                                     typed<float>(c.memory[2]), sc...);
      },
      ex::matmul_scalars(s));
  c.args.assign(a.begin(), a.end());
  return c;
}

inline auto& layer_norm_bwd_dx_kernel() { static auto k = ex::make_layer_norm_bwd_dx(); return k; }

// Layer norm's backward dX example: a persistent row loop that asks for pipelining (LoopOptions,
// ROW_STAGES deep): x's and dy's rows go through rings while dx is stored in the same loop.
inline HostCase layer_norm_bwd_dx_case(std::int32_t rows, std::int32_t cols, std::int32_t programs, std::mt19937& rng) {
  auto& k = layer_norm_bwd_dx_kernel();
  HostCase c;
  c.label = "layer_norm_bwd_dx, " + std::to_string(rows) + " x " + std::to_string(cols) + ", " + std::to_string(programs) +
            " programs";
  c.def = &k.def();
  c.opts = ex::norm_bwd_dx_options(cols, programs, Executor::Interpreter);
  const std::size_t elems = static_cast<std::size_t>(rows) * cols, partials = static_cast<std::size_t>(programs) * cols;
  c.memory = {as_bytes_vector(random_values<half>(elems, rng, -2.f, 2.f)), as_bytes_vector(random_values<half>(elems, rng, -1.f, 1.f)),
              as_bytes_vector(poisoned<half>(elems)), as_bytes_vector(random_values<half>(cols, rng, 0.5f, 1.5f)),
              as_bytes_vector(random_values<float>(rows, rng, -0.5f, 0.5f)), as_bytes_vector(random_values<float>(rows, rng, 0.5f, 2.f)),
              as_bytes_vector(poisoned<float>(partials)), as_bytes_vector(poisoned<float>(partials))};
  auto a = std::remove_reference_t<decltype(k)>::arg_values(
      typed<half>(c.memory[0]), typed<half>(c.memory[1]), typed<half>(c.memory[2]), typed<half>(c.memory[3]),
      typed<float>(c.memory[4]), typed<float>(c.memory[5]), typed<float>(c.memory[6]), typed<float>(c.memory[7]), cols, rows,
      cols);
  c.args.assign(a.begin(), a.end());
  return c;
}

// Small sizes of every example kernel: tails, exact multiples of the block (which turn on the
// divisibility facts), and single rows and columns.
inline std::vector<HostCase> small_cases(std::mt19937& rng) {
  std::vector<HostCase> cases;
  for (std::int32_t n : {1, 1000, 4096}) cases.push_back(vector_add_case(n, rng));
  for (std::int32_t n : {1, 1000, 4096}) cases.push_back(fused_elu_case(n, 1.5f, -0.25f, rng));
  for (auto [m, n, stride] : {std::array{37, 70, 73}, std::array{64, 128, 128}, std::array{1, 100, 100},
                              std::array{100, 1, 4}, std::array{1, 1, 1}})
    cases.push_back(broadcast_2d_case(m, n, stride, rng));
  // The matmul, pipelined (num_stages 2: the pipeline pass applies) and not, with masked edges.
  cases.push_back(matmul_case(100, 70, 40, {.block_m = 64, .block_n = 32, .block_k = 16, .group_m = 2, .num_warps = 4, .num_stages = 2}, rng));
  cases.push_back(matmul_case(32, 32, 32, {.block_m = 16, .block_n = 32, .block_k = 16, .group_m = 1, .num_warps = 4, .num_stages = 1}, rng));
  // Rings deeper than the K loop (4 stages, 2 iterations: a prologue copy past the end, masked)
  // and longer than it is (5 stages over 5 iterations of a partial last K step); the interpreter
  // checks every wait of the pipelined IR.
  cases.push_back(matmul_case(50, 40, 24, {.block_m = 32, .block_n = 32, .block_k = 16, .group_m = 1, .num_warps = 4, .num_stages = 4}, rng));
  cases.push_back(matmul_case(33, 17, 70, {.block_m = 16, .block_n = 16, .block_k = 16, .group_m = 2, .num_warps = 4, .num_stages = 5}, rng));
  // Row loops: more rows per program than stages, fewer (a prologue copy past the end), a tail.
  for (auto [rows, cols, programs] : {std::array{37, 128, 4}, std::array{3, 100, 2}, std::array{1, 16, 1}})
    cases.push_back(layer_norm_bwd_dx_case(rows, cols, programs, rng));
  return cases;
}

}  // namespace tessera::test
