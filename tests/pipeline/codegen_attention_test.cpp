// The attention example compiled for sm_80 and sm_90a without a GPU: both dots run on tensor
// cores (sm_80: mma.sync; sm_90a: wgmma, the second one reading its left operand P from
// registers), ptxas accepts the PTX without C7515/C7511/C7519 and reports no spills.
#include <catch2/catch.hpp>

#include <string>
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
      const auto opts = ex::attention_options(heads, n, d, causal, cfg, ts::Executor::Interpreter);
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

}  // namespace

TEST_CASE("attention f16 compiles to mma.sync (sm_80) and wgmma (sm_90a) that ptxas accepts without spills", "[pipeline][codegen][nvptx][dot][attention]") {
  check_attention_ptx<ts::half>("f16");
}
TEST_CASE("attention bf16 compiles to mma.sync (sm_80) and wgmma (sm_90a) that ptxas accepts without spills", "[pipeline][codegen][nvptx][dot][attention]") {
  check_attention_ptx<ts::bfloat16>("bf16");
}
