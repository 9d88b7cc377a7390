// The matmul example compiled for sm_80 and sm_90a without a GPU: ptxas accepts the PTX, the dot
// runs on tensor cores (sm_80: mma.sync m16n8k16 fed by ldmatrix; sm_90a: wgmma.mma_async from
// swizzled shared memory, without C7515/C7511 warnings), and ptxas reports no spills.
#include <catch2/catch.hpp>

#include <random>
#include <regex>
#include <string>

#include "codegen_util.hpp"
#include "examples/matmul_kernels.hpp"
#include "examples_util.hpp"
#include "tessera/runtime.hpp"

namespace ts = tessera;
using namespace tessera::test;

namespace {

template <class In>
auto& matmul_kernel() {
  static auto k = ex::make_matmul<In, In>();
  return k;
}

template <class In>
HostCase matmul_case(std::int32_t size, const ex::MatmulConfig& cfg, std::mt19937& rng) {
  auto& k = matmul_kernel<In>();
  HostCase c;
  c.label = "matmul " + std::to_string(size) + "^3, blocks " + std::to_string(cfg.block_m) + "x" +
            std::to_string(cfg.block_n) + "x" + std::to_string(cfg.block_k) + ", warps " + std::to_string(cfg.num_warps);
  c.def = &k.def();
  const ex::MatmulShape s{size, size, size, size, 1, size, 1, size, 1};
  c.opts = ex::matmul_options(s, cfg, ts::Executor::Interpreter);
  const std::size_t elems = static_cast<std::size_t>(size) * static_cast<std::size_t>(size);
  c.memory = {as_bytes_vector(random_values<In>(elems, rng, -1.f, 1.f)), as_bytes_vector(random_values<In>(elems, rng, -1.f, 1.f)),
              as_bytes_vector(poisoned<In>(elems))};
  auto a = std::apply(
      [&](auto... sc) {
        return std::remove_reference_t<decltype(k)>::arg_values(typed<In>(c.memory[0]), typed<In>(c.memory[1]),
                                                                typed<In>(c.memory[2]), sc...);
      },
      ex::matmul_scalars(s));
  c.args.assign(a.begin(), a.end());
  return c;
}

// The body of the loop whose back edge branches to a label above it and that issues cp.async
// copies: the pipelined K loop ("" if there is none).
std::string k_loop(const std::string& ptx) {
  static const std::regex back_edge(R"(bra(?:\.uni)?\s+(\$L__BB\d+_\d+);)");
  for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), back_edge); it != std::sregex_iterator(); ++it) {
    const std::size_t label = ptx.rfind((*it)[1].str() + ":", static_cast<std::size_t>(it->position()));
    if (label == std::string::npos) continue;
    std::string body = ptx.substr(label, static_cast<std::size_t>(it->position()) - label);
    if (body.find("cp.async.c") != std::string::npos) return body;
  }
  return "";
}

template <class In>
void check_matmul_ptx(const char* dtype) {
  const std::string ptxas = ptxas_or_skip();
  std::mt19937 rng(kExamplesSeed);
  // The default (128 x 128 x 32, 4 warps, num_stages 3), 128 x 128 x 64 with 8 warps unpipelined,
  // and the widest wgmma tile the autotuner tries (128 x 256 x 64, 8 warps, 3 stages).
  ex::MatmulConfig wide;
  wide.block_n = 256, wide.block_k = 64, wide.num_warps = 8;
  ex::MatmulConfig unpipelined;
  unpipelined.block_k = 64, unpipelined.num_warps = 8, unpipelined.num_stages = 1;
  for (const ex::MatmulConfig& cfg : {ex::MatmulConfig{}, unpipelined, wide}) {
    HostCase c = matmul_case<In>(512, cfg, rng);
    for (const std::string arch : {"sm_80", "sm_90a"}) {
      INFO(dtype << " " << c.label << ", " << arch);
      const auto art = ts::detail::compile_only(*c.def, c.opts, c.args, arch);
      REQUIRE(art.format == "ptx");
      if (arch == "sm_80") {  // mma.sync m16n8k16 fed by ldmatrix
        CHECK(count(art.data, "mma.sync.aligned.m16n8k16.row.col.f32." + std::string(dtype)) > 0);
        CHECK(count(art.data, "ldmatrix.sync.aligned.m8n8.x4.shared.b16") > 0);
        CHECK(count(art.data, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") > 0);
      } else {  // wgmma over the whole N from swizzled shared memory; no ldmatrix, no mma.sync
        const std::string n = std::to_string(cfg.block_n);
        CHECK(count(art.data, "wgmma.mma_async.sync.aligned.m64n" + n + "k16.f32." + dtype) > 0);
        CHECK(count(art.data, "wgmma.wait_group.sync.aligned") > 0);
        // Each pipelined K step's wgmmas stay in flight (wait for the previous step's only); the
        // unpipelined dot waits for its own.
        const bool in_flight = std::regex_search(art.data, std::regex(R"(wgmma\.wait_group\.sync\.aligned\s+1;)"));
        CHECK(in_flight == (cfg.num_stages > 1));
        // A proxy fence after the dot's own staging stores; none for the rings cp.async fills
        // (shared_encodings.cpp says why).
        CHECK((count(art.data, "fence.proxy.async") > 0) == (cfg.num_stages == 1));
        CHECK(count(art.data, "ldmatrix") == 0);
        CHECK(count(art.data, "mma.sync") == 0);
      }
      // The epilogue stores C in 16-byte vectors (converted from the accumulator's pairs through
      // shared memory), never element pairs.
      CHECK(count(art.data, "st.global.v4.b32") > 0);
      CHECK(count(art.data, "st.global.b32") == 0);
      // Pipelined through shared memory when num_stages > 1: cp.async copies, no register staging.
      CHECK((count(art.data, "cp.async.cg.shared.global") > 0) == (cfg.num_stages > 1));
      if (cfg.num_stages > 1) {
        // Masked copies zero-fill through cp.async's ignore-src predicate (the predicate itself;
        // 4-5% over a source size on sm_90a), and the predicate the copies of one operand share
        // (the K mask, the pipeline's in-range test) is one value: at most one `and` per operand.
        // Each copy's own chain of them (25 for the 12 copies of the wide config's K loop) cost
        // 5% of its instructions.
        const std::string loop = k_loop(art.data);
        INFO(loop);
        const int copies = count(loop, "cp.async.cg.shared.global");
        CHECK(copies > 0);
        static const std::regex ignore_src(R"(cp\.async\.cg\.shared\.global \[[^\]]+\], \[[^\]]+\], 16, %p\d+;)");
        const int ignoring = static_cast<int>(std::distance(std::sregex_iterator(loop.begin(), loop.end(), ignore_src), std::sregex_iterator()));
        CHECK(ignoring == copies);
        CHECK(count(loop, "and.pred") <= count(loop, "cp.async.commit_group"));
        if (arch == "sm_90a") {
          // A dot's wgmma descriptors are 64-bit adds to one base per operand slab (ptxas: one
          // UIADD3.64 each), not an or of the start field and the constant fields per wgmma (an
          // or and a move each): or.b64 only for the bases.
          const int wgmmas_per_k_step = count(loop, "wgmma.mma_async") / static_cast<int>(cfg.block_k / 16);
          CHECK(wgmmas_per_k_step > 0);
          CHECK(count(loop, "or.b64") <= wgmmas_per_k_step + 1);
        }
      }
      if (!ptxas.empty()) check_ptxas_accepts_without_spills(ptxas, art.data, arch);
    }
  }
}

}  // namespace

TEST_CASE("matmul f16 compiles to mma.sync (sm_80) and wgmma (sm_90a) that ptxas accepts without spills", "[pipeline][codegen][nvptx][dot]") {
  check_matmul_ptx<ts::half>("f16");
}
TEST_CASE("matmul bf16 compiles to mma.sync (sm_80) and wgmma (sm_90a) that ptxas accepts without spills", "[pipeline][codegen][nvptx][dot]") {
  check_matmul_ptx<ts::bfloat16>("bf16");
}

// Code after a top-level loop with a dot computes thread indices from a new thread-id read (an
// "index epoch", lowering.hpp). The warp id was made lazily before the loop from the current
// epoch's thread id, which the loop's exit dominates and the kernel's start does not: a kernel
// whose first use of the warp id came after such a loop (here the column sums across the warps of
// an fma dot's accumulator, which uses no warp id itself) was invalid LLVM IR. Found by the random
// programs (seeds 1318 and 1507 of tests/random, once they drew dots).
TEST_CASE("a reduction across warps after a dot loop compiles: the warp id of the epilogue's index epoch", "[pipeline][codegen][nvptx][dot]") {
  const std::string ptxas = ptxas_or_skip();
  auto k = ts::kernel("dot_then_column_sums", [](ts::Ptr<float> a, ts::Ptr<float> b, ts::Ptr<float> out) {
    auto rows = ts::arange(0, 32), cols = ts::arange(0, 32), ks = ts::arange(0, 16);
    auto acc = ts::zeros<float>({32, 32});
    ts::for_range(0, 64, 16, [&](ts::Int k0) {
      auto at = ts::load(a + rows.col() * 64 + (k0 + ks).row());
      auto bt = ts::load(b + (k0 + ks).col() * 32 + cols.row());
      acc = ts::dot(at, bt, acc, ts::InputPrecision::ieee);
    });
    ts::store(out + cols, ts::sum(acc, 0));
  });
  std::vector<float> a(32 * 64), b(64 * 32), out(32);
  auto args = decltype(k)::arg_values(a, b, out);
  const std::vector<ts::ArgValue> argv(args.begin(), args.end());
  for (const char* arch : {"sm_80", "sm_90a"}) {
    INFO(arch);
    const std::string ptx = ts::detail::compile_only(k.def(), {.grid = {1}, .num_warps = 4}, argv, arch).assembly;
    CHECK(ptx.find("shfl.sync.idx") != std::string::npos);  // the warp id, read after the loop
    if (ptxas.empty()) continue;
    ScratchFile file(ptx, ".ptx");
    const auto r = run_command(ptxas + " -arch=" + std::string(arch) + " " + file.path() + " -o /dev/null");
    INFO(r.output);
    CHECK(r.exit_code == 0);
  }
}
