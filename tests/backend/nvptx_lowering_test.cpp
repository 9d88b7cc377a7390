// End to end on NVPTX: a masked tile kernel, lowered by jit/lower, keeps its predicated vector
// accesses and fast exp all the way to PTX, the form a memory-bound Triton kernel has.
#include <catch2/catch.hpp>

#include "jit/ir/parser.hpp"
#include "jit/ir/printer.hpp"
#include "jit/ir/verifier.hpp"
#include "jit/lower/codegen.hpp"
#include "jit/transforms/assign_layouts.hpp"
#include "jit/transforms/passes.hpp"
#include "nvptx_test_util.hpp"
#include "tessera/error.hpp"

namespace {

// out[i] = exp(x[i]) for i < n, in blocks of 1024; n divisible by 16, as Triton specializes it,
// so the mask is constant over 4 consecutive elements and the accesses are v4.
constexpr const char* masked_exp = R"(
kernel @masked_exp(%x: ptr<f32> {divisibility = 16}, %out: ptr<f32> {divisibility = 16}, %n: i32 {divisibility = 16}) num_warps = 4 {
  %0 = program_id {axis = 0} : i32
  %1 = constant {value = 1024} : i32
  %2 = mul %0, %1 : i32
  %3 = arange {end = 1024, start = 0} : <1024xi32>
  %4 = splat %2 : <1024xi32>
  %5 = add %4, %3 : <1024xi32>
  %6 = splat %n : <1024xi32>
  %7 = cmp_lt %5, %6 : <1024xi1>
  %8 = splat %x : <1024xptr<f32>>
  %9 = addptr %8, %5 : <1024xptr<f32>>
  %10 = constant {value = 0.0} : f32
  %11 = splat %10 : <1024xf32>
  %12 = load %9, %7, %11 : <1024xf32>
  %13 = exp %12 : <1024xf32>
  %14 = splat %out : <1024xptr<f32>>
  %15 = addptr %14, %5 : <1024xptr<f32>>
  store %15, %13, %7
  return
}
)";

}  // namespace

TEST_CASE("a masked f32 kernel lowers to predicated v4 accesses and ex2.approx", "[backend][nvptx]") {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    INFO("arch " << arch);
    auto m = tessera::ir::parse_module(masked_exp, "masked_exp.tir");
    tessera::transforms::run_pass_pipeline(*m, tessera::transforms::default_pipeline());
    tessera::transforms::assign_layouts(*m, tessera::analysis::target_info(arch));
    const std::string ptx = tessera::lower::compile_to_device(*m, arch).assembly;
    INFO(ptx);
    CHECK(tessera::test::contains(ptx, R"(@%p\d+ ld\.global\.v4\.b32 )"));
    CHECK(tessera::test::contains(ptx, R"(@%p\d+ st\.global\.v4\.b32 )"));
    CHECK(tessera::test::contains(ptx, R"(ex2\.approx\.f32\s)"));
    CHECK_FALSE(tessera::test::contains(ptx, R"(\bbra\b)"));
    tessera::test::check_ptxas_accepts(ptx, arch);
  }
}

namespace {
// `text` parsed and taken through the compile's passes for `arch`, as compile_to_device meets it.
std::unique_ptr<tessera::ir::Module> through_passes(const std::string& text, const char* arch) {
  auto m = tessera::ir::parse_module(text, "smem.tir");
  tessera::transforms::run_pass_pipeline(*m, tessera::transforms::default_pipeline());
  tessera::transforms::run_pass_pipeline(*m, tessera::transforms::target_pipeline(), tessera::transforms::pass_context(*m, arch));
  tessera::ir::verify(*m);
  return m;
}
}  // namespace

TEST_CASE("local_store and local_load compile, ordered by the barrier place-barriers writes", "[backend][nvptx]") {
  // A tile stored into a stage and loaded back in another layout: the compile's passes put a
  // debug_barrier between the store and the load (a read of bytes other threads wrote), and the
  // PTX stores and loads shared memory around one bar.sync.
  const std::string stored = R"(kernel @k(%x: ptr<f32> {divisibility = 16}) num_warps = 4 {
  %0 = arange {end = 64, start = 0} : <64xi32>
  %r = expand_dims %0 {axis = 1} : <64x1xi32>
  %c = expand_dims %0 {axis = 0} : <1x64xi32>
  %k = constant {value = 64} : <64x1xi32>
  %rk = mul %r, %k : <64x1xi32>
  %rb = broadcast %rk : <64x64xi32>
  %cb = broadcast %c : <64x64xi32>
  %i = add %rb, %cb : <64x64xi32>
  %1 = splat %x : <64x64xptr<f32>>
  %2 = addptr %1, %i : <64x64xptr<f32>>
  %3 = load %2 : <64x64xf32>
  %4 = local_alloc : !smem<1x64x64xf32, #padded<4>>
  %c0 = constant {value = 0} : i32
  %v = smem_index %4, %c0 : !smem<64x64xf32, #padded<4>>
  local_store %v, %3 loc("k.cpp":8:3)
  %5 = local_load %v : <64x64xf32> loc("k.cpp":9:3)
  %6 = trans %5 {order = [1, 0]} : <64x64xf32>
  store %2, %6
  return
}
)";
  for (const char* arch : {"sm_80", "sm_90a"}) {
    INFO("arch " << arch);
    auto m = through_passes(stored, arch);
    const std::string ir = tessera::ir::print(*m, {.locations = false});
    INFO(ir);
    CHECK(tessera::test::contains(ir, R"(local_store %\w+, %\w+\n\s*debug_barrier\n\s*%\w+ = local_load)"));
    const std::string ptx = tessera::lower::compile_to_device(*m, arch).assembly;
    CHECK(tessera::test::contains(ptx, R"(st\.shared)"));
    CHECK(tessera::test::contains(ptx, R"(bar\.sync)"));
    CHECK(tessera::test::contains(ptx, R"(ld\.shared)"));
    tessera::test::check_ptxas_accepts(ptx, arch);
    // Without place-barriers the lowering finds the missing barrier and refuses the module.
    auto unplaced = tessera::ir::parse_module(stored, "smem.tir");
    const std::vector<std::string> layouts_only = {"legalize-fp8", "coalesce", "sink", "expand-conversions"};
    tessera::transforms::run_pass_pipeline(*unplaced, layouts_only, tessera::transforms::pass_context(*unplaced, arch));
    CHECK_THROWS_AS(tessera::lower::compile_to_device(*unplaced, arch), tessera::InternalError);
    CHECK_THROWS_WITH(tessera::lower::compile_to_device(*unplaced, arch),
                      Catch::Contains("'local_load' at k.cpp:9:3 needs a barrier before its shared-memory reads"));
  }
}

TEST_CASE("shared-memory ops the lowering does not compile yet are refused, naming the op", "[backend][nvptx]") {
  // ops.def "Shared memory": the lowering compiles stages of 2-D tiles, filled by async_copy and
  // read by a dot or (after a barrier) local_load, or written by local_store and read by
  // local_load, and stages of 1-D tiles that local_load reads; a buffer of another rank, a view of
  // i1, local_store into a 1-D stage, and a local_load of a ring with no barrier after its wait
  // are refused.
  // A buffer of two dims (stages of 1-D tiles) written by local_store (local_load reads such a
  // stage of a ring: a row loop's, tests/ir/pipeline_row_loads.tir).
  const std::string one_d_stages = R"(kernel @k(%x: ptr<f32> {divisibility = 16}) num_warps = 4 {
  %0 = arange {end = 128, start = 0} : <128xi32>
  %1 = splat %x : <128xptr<f32>>
  %2 = addptr %1, %0 : <128xptr<f32>>
  %3 = load %2 : <128xf32>
  %4 = local_alloc : !smem<1x128xf32> loc("k.cpp":7:3)
  %c0 = constant {value = 0} : i32
  %v = smem_index %4, %c0 : !smem<128xf32> loc("k.cpp":7:9)
  local_store %v, %3 loc("k.cpp":8:3)
  fence_async_shared
  %5 = local_load %v : <128xf32>
  store %2, %5
  return
}
)";
  // A stage of 2-D i1 tiles, written by local_store.
  const std::string stored_bits = R"(kernel @k(%x: ptr<f32> {divisibility = 16}) num_warps = 4 {
  %0 = arange {end = 128, start = 0} : <128xi32>
  %1 = splat %x : <128xptr<f32>>
  %2 = addptr %1, %0 : <128xptr<f32>>
  %3 = load %2 : <128xf32>
  %z = constant {value = 0.0} : <128xf32>
  %b = cmp_lt %3, %z : <128xi1>
  %e = expand_dims %b {axis = 0} : <1x128xi1>
  %p = expand_dims %2 {axis = 0} : <1x128xptr<f32>>
  %4 = local_alloc : !smem<1x1x128xi1>
  %c0 = constant {value = 0} : i32
  %v = smem_index %4, %c0 : !smem<1x128xi1>
  local_store %v, %e loc("k.cpp":8:3)
  %5 = local_load %v : <1x128xi1>
  %f = expand_dims %3 {axis = 0} : <1x128xf32>
  %g = select %5, %f, %f : <1x128xf32>
  store %p, %g
  return
}
)";
  // A copy into a whole buffer of three dims (no stage of it taken).
  const std::string whole_copy = R"(kernel @k(%x: ptr<f32> {divisibility = 16}) num_warps = 4 {
  %0 = constant {value = 0} : <1x2x64xi32>
  %1 = splat %x : <1x2x64xptr<f32>>
  %2 = addptr %1, %0 : <1x2x64xptr<f32>>
  %3 = local_alloc : !smem<1x2x64xf32>
  async_copy %3, %2 loc("k.cpp":9:3)
  async_commit
  async_wait {pending = 0}
  return
}
)";
  // 16 x 16 f16 tiles of x at row-major offsets %i, %p their pointers (for the two below).
  const std::string tile16 = R"(kernel @k(%x: ptr<f16> {divisibility = 16}, %y: ptr<f32> {divisibility = 16}) num_warps = 4 {
  %a = arange {end = 16, start = 0} : <16xi32>
  %r = expand_dims %a {axis = 1} : <16x1xi32>
  %c = expand_dims %a {axis = 0} : <1x16xi32>
  %k = constant {value = 16} : <16x1xi32>
  %rk = mul %r, %k : <16x1xi32>
  %rb = broadcast %rk : <16x16xi32>
  %cb = broadcast %c : <16x16xi32>
  %i = add %rb, %cb : <16x16xi32>
  %xs = splat %x : <16x16xptr<f16>>
  %p = addptr %xs, %i : <16x16xptr<f16>>
  %ys = splat %y : <16x16xptr<f32>>
  %q = addptr %ys, %i : <16x16xptr<f32>>
  %buf = local_alloc : !smem<1x16x16xf16>
  %c0 = constant {value = 0} : i32
  %s = smem_index %buf, %c0 : !smem<16x16xf16>
)";
  // A local_load of a stage async_copy filled with no barrier after the wait: place-barriers does
  // not model the copies (the pipeliner's rings order themselves), so the lowering checks it.
  const std::string load_of_ring = tile16 + R"(  async_copy %s, %p
  async_commit
  async_wait {pending = 0}
  %v = local_load %s : <16x16xf16> loc("k.cpp":8:3)
  %f = cast %v : <16x16xf32>
  store %q, %f
  return
}
)";
  // A dot reading views that local_store wrote: compiled (below), with the barrier between them.
  const std::string dot_of_stored = tile16 + R"(  %v = load %p : <16x16xf16>
  local_store %s, %v
  %z = constant {value = 0.0} : <16x16xf32>
  %d = dot %s, %s, %z : <16x16xf32> loc("k.cpp":9:3)
  store %q, %d
  return
}
)";
  for (const char* arch : {"sm_80", "sm_90a"}) {
    INFO("arch " << arch);
    CHECK_THROWS_WITH(tessera::lower::compile_to_device(*through_passes(load_of_ring, arch), arch),
                      Catch::Contains("'local_load' at k.cpp:8:3: reads a buffer that async_copy fills with no debug_barrier "
                                      "between the async_wait before it and it"));
    auto stored = through_passes(dot_of_stored, arch);
    const std::string stored_ir = tessera::ir::print(*stored, {.locations = false});
    INFO(stored_ir);
    CHECK(stored_ir.find("debug_barrier", stored_ir.find("local_store")) < stored_ir.find("= dot "));
    CHECK_NOTHROW(tessera::lower::compile_to_device(*stored, arch));
    CHECK_THROWS_WITH(tessera::lower::compile_to_device(*through_passes(stored_bits, arch), arch),
                      Catch::Contains("'local_store' at k.cpp:8:3: a view of !smem<1x128xi1> is not compiled yet"));
    CHECK_THROWS_WITH(tessera::lower::compile_to_device(*through_passes(whole_copy, arch), arch),
                      Catch::Contains("async_copy at k.cpp:9:3: into !smem<1x2x64xf32>"));
    auto m = through_passes(one_d_stages, arch);
    CHECK_THROWS_AS(tessera::lower::compile_to_device(*m, arch), tessera::ProgramError);
    CHECK_THROWS_WITH(tessera::lower::compile_to_device(*m, arch),
                      Catch::Contains("'local_store' at k.cpp:8:3: a view of !smem<128xf32> is not compiled yet (one stage of 2-D "
                                      "tiles of bytes or wider is; local_load also reads 1-D ones)"));
  }
}
