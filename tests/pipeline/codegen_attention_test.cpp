// The attention example compiled for sm_80 and sm_90a without a GPU: both dots run on tensor
// cores (sm_80: mma.sync; sm_90a: wgmma, the second one reading its left operand P from
// registers), ptxas accepts the PTX without C7515/C7511/C7519 and reports no spills. The same for
// the backward's kernels (the forward with its lse, delta, dK/dV, dQ) on attention_bwd_config.
#include <catch2/catch.hpp>

#include <string>
#include <type_traits>
#include <vector>

#include "codegen_util.hpp"
#include "examples/attention_kernels.hpp"
#include "examples_util.hpp"
#include "tessera/runtime.hpp"

namespace ts = tessera;
using namespace tessera::test;

namespace {

template <class In>
void check_attention_ptx(const char* dtype) {
  const std::string ptxas = ptxas_or_skip();
  static auto kernel = ex::make_attention<In>();
  constexpr std::int64_t heads = 4, n = 1024;
  for (const std::int64_t d : {64, 128})
    for (const bool causal : {false, true}) {
      const std::size_t elems = static_cast<std::size_t>(heads * n * d);
      std::vector<In> q(elems), k(elems), v(elems), o(elems);
      auto args = decltype(kernel)::arg_values(q, k, v, o, static_cast<std::int32_t>(n), 0.125f);
      const std::vector<ts::ArgValue> argv(args.begin(), args.end());
      const ex::AttentionConfig cfg = ex::attention_config(d);
      const auto opts = ex::attention_options(heads, n, d, causal, 0.125f, cfg, ts::Executor::Interpreter);
      for (const std::string arch : {"sm_80", "sm_90a"}) {
        INFO(dtype << " head_dim " << d << (causal ? " causal" : " full") << ", " << arch);
        const auto art = ts::detail::compile_only(kernel.def(), opts, argv, arch);
        REQUIRE(art.format == "ptx");
        if (arch == "sm_80") CHECK(count(art.data, "mma.sync.aligned.m16n8k16.row.col.f32." + std::string(dtype)) > 0);
        else {
          CHECK(count(art.data, "wgmma.mma_async.sync.aligned") > 0);
          // P·V: A as four registers after the accumulators' list, not a descriptor (%rd).
          CHECK(count(art.data, "}, {%r") > 0);
        }
        if (!ptxas.empty()) check_ptxas_accepts_without_spills(ptxas, art.data, arch);
      }
    }
}

// One kernel's PTX for arch, checked: tensor-core instructions where it has dots, ptxas without spills.
template <class Kernel>
void check_kernel_ptx(const std::string& ptxas, Kernel& kernel, const ts::LaunchOptions& opts,
                      const std::vector<ts::ArgValue>& argv, const std::string& arch, bool has_dots) {
  const auto art = ts::detail::compile_only(kernel.def(), opts, argv, arch);
  REQUIRE(art.format == "ptx");
  if (has_dots) CHECK(count(art.data, arch == "sm_80" ? "mma.sync.aligned.m16n8k16" : "wgmma.mma_async.sync.aligned") > 0);
  if (!ptxas.empty()) check_ptxas_accepts_without_spills(ptxas, art.data, arch);
}

template <class In>
void check_attention_backward_ptx(const char* dtype) {
  const std::string ptxas = ptxas_or_skip();
  static auto forward = ex::make_attention_fwd<In>();
  static auto delta_kernel = ex::make_attention_bwd_delta<In>();
  static auto dkdv = ex::make_attention_bwd_dkdv<In>();
  static auto dq_kernel = ex::make_attention_bwd_dq<In>();
  constexpr std::int64_t heads = 4, n = 1024;
  const auto nn = static_cast<std::int32_t>(n);
  auto values = [](auto& kernel, auto&&... args) {
    auto a = std::remove_reference_t<decltype(kernel)>::arg_values(args...);
    return std::vector<ts::ArgValue>(a.begin(), a.end());
  };
  for (const std::int64_t d : {64, 128})
    for (const bool causal : {false, true}) {
      const std::size_t elems = static_cast<std::size_t>(heads * n * d), rows = static_cast<std::size_t>(heads * n);
      std::vector<In> q(elems), k(elems), v(elems), o(elems), d_o(elems), dq(elems), dk(elems), dv(elems);
      std::vector<float> lse(rows), delta(rows);
      const auto on = ts::Executor::Interpreter;
      for (const std::string arch : {"sm_80", "sm_90a"}) {
        const ex::AttentionBackwardConfig cfg = ex::attention_bwd_config(d, causal, arch);
        INFO(dtype << " head_dim " << d << (causal ? " causal" : " full") << ", " << arch);
        check_kernel_ptx(ptxas, forward, ex::attention_options(heads, n, d, causal, 0.125f, ex::attention_config(d), on),
                         values(forward, q, k, v, o, lse, nn, 0.125f), arch, true);
        check_kernel_ptx(ptxas, delta_kernel, ex::attention_bwd_options(heads, n, d, causal, cfg.dq, false, on),
                         values(delta_kernel, o, d_o, delta, nn), arch, false);
        check_kernel_ptx(ptxas, dkdv, ex::attention_bwd_options(heads, n, d, causal, cfg.dkdv, true, on),
                         values(dkdv, q, k, v, d_o, lse, delta, dk, dv, nn, 0.125f), arch, true);
        check_kernel_ptx(ptxas, dq_kernel, ex::attention_bwd_options(heads, n, d, causal, cfg.dq, false, on),
                         values(dq_kernel, q, k, v, d_o, lse, delta, dq, nn, 0.125f), arch, true);
      }
    }
}

}  // namespace

TEST_CASE("attention f16 compiles to mma.sync (sm_80) and wgmma (sm_90a) that ptxas accepts without spills", "[pipeline][codegen][nvptx][dot][attention]") {
  check_attention_ptx<ts::half>("f16");
}
TEST_CASE("attention bf16 compiles to mma.sync (sm_80) and wgmma (sm_90a) that ptxas accepts without spills", "[pipeline][codegen][nvptx][dot][attention]") {
  check_attention_ptx<ts::bfloat16>("bf16");
}
TEST_CASE("attention backward f16 and bf16 compile to tensor-core code that ptxas accepts without spills", "[pipeline][codegen][nvptx][dot][attention]") {
  check_attention_backward_ptx<ts::half>("f16");
  check_attention_backward_ptx<ts::bfloat16>("bf16");
}
