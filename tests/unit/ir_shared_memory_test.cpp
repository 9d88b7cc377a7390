// The shared-memory plan (jit/analysis/shared_memory.hpp): regions and the barriers its analysis
// places, on programs whose layouts the coalescing pass chose (4 warps of 32 threads).
#include <algorithm>
#include <catch2/catch.hpp>

#include <fstream>
#include <functional>
#include <sstream>
#include <set>
#include <string>

#include <fmt/format.h>

#include "jit/analysis/layouts.hpp"
#include "jit/analysis/register_conversion.hpp"
#include "jit/analysis/shared_memory.hpp"
#include "jit/analysis/wgmma_in_flight.hpp"
#include "jit/ir/parser.hpp"
#include "jit/ir/verifier.hpp"
#include "jit/ir/printer.hpp"
#include "jit/transforms/assign_layouts.hpp"
#include "jit/transforms/expand_conversions.hpp"
#include "jit/transforms/pipeline_loads.hpp"
#include "jit/transforms/passes.hpp"
#include "jit/transforms/place_barriers.hpp"

using namespace tessera;

namespace {

std::unique_ptr<ir::Module> with_layouts(const std::string& body, const std::string& args = "%x: ptr<f32>, %y: ptr<f32>") {
  auto m = ir::parse_module("kernel @k(" + args + ") num_warps = 4 {\n" + body + "  return\n}\n");
  ir::verify(*m);
  transforms::assign_layouts(*m, {.warp_size = 32});
  ir::verify(*m);
  return m;
}

// Loads a 1024-element f32 row of %x as %row.
const std::string kLoadRow = R"(
  %i = arange {end = 1024, start = 0} : <1024xi32>
  %px = splat %x : <1024xptr<f32>>
  %ax = addptr %px, %i : <1024xptr<f32>>
  %row = load %ax : <1024xf32>
)";

std::string sum_of(const std::string& result, const std::string& operand, const std::string& combine = "add") {
  return "  %" + result + " = reduce %" + operand + " {axis = 0} : f32 {\n  ^bb(%" + result + "a: f32, %" + result +
         "b: f32):\n    %" + result + "c = " + combine + " %" + result + "a, %" + result + "b : f32\n    yield %" + result +
         "c\n  }\n";
}

const std::string kStoreScalar(const std::string& v) { return "  store %y, %" + v + "\n"; }

std::vector<const ir::Op*> ops_of_kind(const ir::Module& m, ir::OpKind k) {
  std::vector<const ir::Op*> out;
  ir::walk(const_cast<ir::Block&>(m.entry()), [&](const ir::Op& op) {
    if (op.kind == k) out.push_back(&op);
  });
  return out;
}

}  // namespace

TEST_CASE("two reductions in a row: a barrier inside each, none between them", "[shared_memory]") {
  auto m = with_layouts(kLoadRow + sum_of("mx", "row", "max") + sum_of("s", "row") + kStoreScalar("mx") + kStoreScalar("s"));
  analysis::SharedMemoryPlan plan(*m);
  auto reduces = ops_of_kind(*m, ir::OpKind::Reduce);
  REQUIRE(reduces.size() == 2);
  CHECK_FALSE(plan.barrier_before(*reduces[0], 0));
  CHECK(plan.barrier_before(*reduces[0], 1));
  CHECK_FALSE(plan.barrier_before(*reduces[1], 0));  // its own region: the first one's reads do not conflict
  CHECK(plan.barrier_before(*reduces[1], 1));
  CHECK(plan.num_barriers() == 2);
  // Private regions that do not overlap, 4 warps x 1 f32 each.
  CHECK(plan.offset(*reduces[0]) != plan.offset(*reduces[1]));
  CHECK(plan.total_bytes() == 32);
}

TEST_CASE("a reduction in a loop: the next iteration's writes wait for this one's reads", "[shared_memory]") {
  const std::string loop = R"(
  %c0 = constant {value = 0} : i32
  %c1 = constant {value = 1} : i32
  %c4 = constant {value = 4} : i32
  for %c0, %c4, %c1 {
  ^bb(%it: i32):
)" + kLoadRow + sum_of("s", "row") + kStoreScalar("s") + "    yield\n  }\n";
  auto m = with_layouts(loop);
  analysis::SharedMemoryPlan plan(*m);
  auto reduces = ops_of_kind(*m, ir::OpKind::Reduce);
  REQUIRE(reduces.size() == 1);
  CHECK(plan.barrier_before(*reduces[0], 0));
  CHECK(plan.barrier_before(*reduces[0], 1));
}

TEST_CASE("two reductions in a loop: each one's barrier covers the other's next writes", "[shared_memory]") {
  const std::string loop = R"(
  %c0 = constant {value = 0} : i32
  %c1 = constant {value = 1} : i32
  %c4 = constant {value = 4} : i32
  for %c0, %c4, %c1 {
  ^bb(%it: i32):
)" + kLoadRow + sum_of("mx", "row", "max") + sum_of("s", "row") + kStoreScalar("mx") + kStoreScalar("s") + "    yield\n  }\n";
  auto m = with_layouts(loop);
  analysis::SharedMemoryPlan plan(*m);
  auto reduces = ops_of_kind(*m, ir::OpKind::Reduce);
  REQUIRE(reduces.size() == 2);
  // Iteration k+1's first writes follow iteration k's second barrier, which ordered the first
  // reduction's reads; the second reduction's writes follow the first one's barrier.
  CHECK(plan.num_barriers() == 2);
  CHECK(plan.barrier_before(*reduces[0], 1));
  CHECK(plan.barrier_before(*reduces[1], 1));
}

TEST_CASE("shape ops share one region: the second one's writes wait for the first one's reads", "[shared_memory]") {
  const std::string body = kLoadRow + R"(
  %sq = reshape %row : <32x32xf32>
  %back = reshape %sq : <1024xf32>
  %py = splat %y : <1024xptr<f32>>
  %ay = addptr %py, %i : <1024xptr<f32>>
  store %ay, %back
)";
  auto m = with_layouts(body);
  analysis::SharedMemoryPlan plan(*m);
  auto reshapes = ops_of_kind(*m, ir::OpKind::Reshape);
  REQUIRE(reshapes.size() == 2);
  CHECK(plan.offset(*reshapes[0]) == 0);
  CHECK(plan.offset(*reshapes[1]) == 0);
  CHECK_FALSE(plan.barrier_before(*reshapes[0], 0));
  CHECK(plan.barrier_before(*reshapes[0], 1));
  CHECK(plan.barrier_before(*reshapes[1], 0));
  CHECK(plan.barrier_before(*reshapes[1], 1));
  CHECK(plan.total_bytes() == 4096);
}

TEST_CASE("an if joins its arms: a conflict in either arm places the barrier after it", "[shared_memory]") {
  const std::string body = kLoadRow + R"(
  %c0 = constant {value = 0} : i32
  %cond = cmp_lt %c0, %c0 : i1
  if %cond {
    %sq = reshape %row : <32x32xf32>
    %back = reshape %sq : <1024xf32>
    %py = splat %y : <1024xptr<f32>>
    %ay = addptr %py, %i : <1024xptr<f32>>
    store %ay, %back
    yield
  } else {
    yield
  }
  %sq2 = reshape %row : <32x32xf32>
  %back2 = reshape %sq2 : <1024xf32>
  %py2 = splat %y : <1024xptr<f32>>
  %ay2 = addptr %py2, %i : <1024xptr<f32>>
  store %ay2, %back2
)";
  auto m = with_layouts(body);
  analysis::SharedMemoryPlan plan(*m);
  auto reshapes = ops_of_kind(*m, ir::OpKind::Reshape);
  REQUIRE(reshapes.size() == 4);
  CHECK(plan.barrier_before(*reshapes[2], 0));  // the then arm left reads pending
}

TEST_CASE("an atomic whose old values nobody reads uses no shared memory", "[shared_memory]") {
  const std::string body = R"(
  %one = constant {value = 1.0} : f32
  %old = atomic_rmw %x, %one {op = "add", scope = "gpu", sem = "relaxed"} : f32
)";
  auto m = with_layouts(body);
  analysis::SharedMemoryPlan plan(*m);
  auto atomics = ops_of_kind(*m, ir::OpKind::AtomicRmw);
  REQUIRE(atomics.size() == 1);
  CHECK_FALSE(plan.has_region(*atomics[0]));
  CHECK(plan.total_bytes() == 0);
}

namespace {

// IR text: the f32 tile %c of `rows` rows summed to one value stored to %y, so that every value
// of %c is used.
std::string sum_into_y(int rows) {
  return fmt::format(R"(  %sum_rows = reduce %c {{axis = 1}} : <{0}xf32> {{
  ^bb(%sum_ra: f32, %sum_rb: f32):
    %sum_rc = add %sum_ra, %sum_rb : f32
    yield %sum_rc
  }}
  %sum = reduce %sum_rows {{axis = 0}} : f32 {{
  ^bb(%sum_a: f32, %sum_b: f32):
    %sum_c = add %sum_a, %sum_b : f32
    yield %sum_c
  }}
  store %y, %sum
)",
                     rows);
}

// %name = the offsets of a row-major rows x cols tile: %row_index[:, None] * cols + %col_index[None, :].
std::string row_major_offsets(const std::string& name, const std::string& row_index, const std::string& col_index,
                              int rows, int cols) {
  return fmt::format(R"(  %{0}_r = expand_dims %{1} {{axis = 1}} : <{3}x1xi32>
  %{0}_s = constant {{value = {4}}} : <{3}x1xi32>
  %{0}_rs = mul %{0}_r, %{0}_s : <{3}x1xi32>
  %{0}_rb = broadcast %{0}_rs : <{3}x{4}xi32>
  %{0}_c = expand_dims %{2} {{axis = 0}} : <1x{4}xi32>
  %{0}_cb = broadcast %{0}_c : <{3}x{4}xi32>
  %{0} = add %{0}_rb, %{0}_cb : <{3}x{4}xi32>
)",
                     name, row_index, col_index, rows, cols);
}

// A loop of f16 dots c += a·b (a: M x K, b: K x N, row-major, 4 warps) after the pipeline pass and
// the layout pass as sm_90a runs it, preceded and followed by reductions with regions of their own
// (the first one's comes first, so the dot's is aligned past it). With `store_c`, c is then
// stored to %y as a row-major M x N tile (a matmul's epilogue); with `nested`, everything from the
// accumulator's initial value on runs in an outer loop. `between` runs between the two passes.
std::unique_ptr<ir::Module> wgmma_dot_loop(int m, int n, int k, int stages, bool store_c = false, bool nested = false,
                                           const std::function<void(ir::Module&)>& between = {}) {
  const std::string epilogue = !store_c ? "" : row_major_offsets("coff", "rm", "rn", m, n) + fmt::format(R"(
  %pc = splat %y : <{0}x{1}xptr<f32>>
  %ac = addptr %pc, %coff : <{0}x{1}xptr<f32>>
  store %ac, %c
)", m, n);
  const std::string outer_begin = nested ? "  %olb = constant {value = 0} : i32\n  %ostep = constant {value = 1} : i32\n"
                                           "  for %olb, %n, %ostep {\n  ^bb(%ov: i32):\n" : "";
  const std::string outer_end = nested ? "    yield\n  }\n" : "";
  const std::string text = fmt::format(R"(kernel @dot_loop(%a: ptr<f16> {{divisibility = 16}}, %b: ptr<f16> {{divisibility = 16}}, %y: ptr<f32> {{divisibility = 16}}, %n: i32) num_warps = 4 num_stages = {3} {{
  %rm = arange {{end = {0}, start = 0}} : <{0}xi32>
  %rk = arange {{end = {2}, start = 0}} : <{2}xi32>
  %rn = arange {{end = {1}, start = 0}} : <{1}xi32>
{7}{8}  %r1k = arange {{end = 1024, start = 0}} : <1024xi32>
  %py = splat %y : <1024xptr<f32>>
  %ay = addptr %py, %r1k : <1024xptr<f32>>
  %v = load %ay : <1024xf32>
  %s0 = reduce %v {{axis = 0}} : f32 {{
  ^bb(%ta: f32, %tb: f32):
    %tc = add %ta, %tb : f32
    yield %tc
  }}
  store %y, %s0
{4}  %zero = constant {{value = 0.0}} : <{0}x{1}xf32>
  %lb = constant {{value = 0}} : i32
  %step = constant {{value = 1}} : i32
  %c = for %lb, %n, %step, %zero : <{0}x{1}xf32> {{
  ^bb(%iv: i32, %acc: <{0}x{1}xf32>):
    %pa = splat %a : <{0}x{2}xptr<f16>>
    %aa = addptr %pa, %aoff : <{0}x{2}xptr<f16>>
    %x = load %aa : <{0}x{2}xf16>
    %pb = splat %b : <{2}x{1}xptr<f16>>
    %bb = addptr %pb, %boff : <{2}x{1}xptr<f16>>
    %w = load %bb : <{2}x{1}xf16>
    %d = dot %x, %w, %acc : <{0}x{1}xf32>
    yield %d
  }}
{9}{5}{6}  return
}}
)",
                                       m, n, k, stages, outer_begin, epilogue, outer_end,
                                       row_major_offsets("aoff", "rm", "rk", m, k), row_major_offsets("boff", "rk", "rn", k, n),
                                       sum_into_y(m));
  auto mod = ir::parse_module(text);
  ir::verify(*mod);
  // No spare capacity at the top level: a pass that inserts there (local_alloc) while iterating
  // over those ops reads freed memory (it did, with a nested dot loop: random program seed 25215).
  mod->entry().ops.shrink_to_fit();
  transforms::pipeline_loads(*mod, mod->num_stages);
  if (between) between(*mod);
  transforms::assign_layouts(*mod, analysis::target_info("sm_90a"));
  ir::verify(*mod);
  return mod;
}

}  // namespace

TEST_CASE("wgmma dots: dense 1024-aligned stages, in flight, a spare stage only where it keeps the programs per SM",
          "[shared_memory][wgmma]") {
  struct Case {
    int m, n, k, stages;
    bool spare;
  };
  // 64x64x64: a 16 KB stage; 3 stages leave room for four programs per SM (228 KB), 4 for three.
  // 64x256x64: a 40 KB stage; one program per SM either way.
  for (const Case c : {Case{64, 64, 64, 3, false}, Case{64, 256, 64, 3, true}}) {
    INFO(c.m << "x" << c.n << "x" << c.k << ", " << c.stages << " stages");
    auto m = wgmma_dot_loop(c.m, c.n, c.k, c.stages);
    auto dots = ops_of_kind(*m, ir::OpKind::Dot);
    REQUIRE(dots.size() == 1);
    const ir::Op& dot = *dots[0];
    REQUIRE(analysis::dot_uses_wgmma(dot));
    REQUIRE(analysis::is_async_dot(dot));
    const auto rings = ops_of_kind(*m, ir::OpKind::LocalAlloc);
    REQUIRE(rings.size() == 2);
    CHECK(analysis::shared_buffer_of(dot.operands[0]) == rings[0]);
    CHECK(analysis::shared_buffer_of(dot.operands[1]) == rings[1]);
    const ir::Type& a = dot.operands[0]->type;
    const ir::Type& b = dot.operands[1]->type;
    CHECK(a.encoding.kind == ir::SharedEncoding::Kind::Nvmma);
    CHECK(b.encoding.kind == ir::SharedEncoding::Kind::Nvmma);
    CHECK(analysis::shared_stage_bytes(a) == std::int64_t{c.m} * c.k * 2);  // no row padding
    CHECK(analysis::shared_stage_bytes(b) == std::int64_t{c.k} * c.n * 2);
    CHECK(analysis::wgmma_in_flight(dot));
    // The layout pass lengthened both rings by the spare stage, or put a barrier after the dot.
    const std::int64_t ring = c.stages + (c.spare ? 1 : 0);
    for (const ir::Op* r : rings) CHECK(r->result()->type.shape[0] == ring);
    const auto& body = dot.parent->ops;
    auto after = std::find_if(body.begin(), body.end(), [&](auto& o) { return o.get() == &dot; }) + 1;
    CHECK(((*after)->kind == ir::OpKind::DebugBarrier) == !c.spare);
    CHECK(analysis::shared_bytes(*rings[0]) == ring * analysis::shared_stage_bytes(a));
    CHECK(analysis::shared_bytes(*rings[1]) == ring * analysis::shared_stage_bytes(b));
    CHECK(analysis::shared_bytes(dot) == 0);  // nothing staged: it reads the rings
    analysis::SharedMemoryPlan plan(*m);
    CHECK(plan.alignment() == 1024);
    CHECK(plan.offset(*rings[0]) > 0);
    CHECK(plan.offset(*rings[0]) % 1024 == 0);
    CHECK(plan.offset(*rings[1]) == plan.offset(*rings[0]) + analysis::shared_bytes(*rings[0]));
    // The reduction before the loop has a region of its own, below the rings.
    const auto reduces = ops_of_kind(*m, ir::OpKind::Reduce);
    REQUIRE(plan.has_region(*reduces.front()));
    CHECK(plan.offset(*reduces.front()) + analysis::shared_bytes(*reduces.front()) <= plan.offset(*rings[0]));
  }
}

namespace {
bool overlaps(const analysis::SharedMemoryPlan& plan, const ir::Op& a, const ir::Op& b) {
  return plan.offset(a) < plan.offset(b) + analysis::shared_bytes(b) && plan.offset(b) < plan.offset(a) + analysis::shared_bytes(a);
}
// Whether `a` shares bytes with either ring of the module's dot.
bool overlaps_rings(const analysis::SharedMemoryPlan& plan, const ir::Op& a, const ir::Module& m) {
  const auto rings = ops_of_kind(m, ir::OpKind::LocalAlloc);
  return std::any_of(rings.begin(), rings.end(), [&](const ir::Op* r) { return overlaps(plan, a, *r); });
}
}  // namespace

TEST_CASE("a matmul's epilogue converts to 16-byte runs in the finished ring's bytes, after a barrier",
          "[shared_memory][wgmma]") {
  auto m = wgmma_dot_loop(64, 256, 64, 3, /*store_c=*/true);
  const ir::Op& last_ring = *ops_of_kind(*m, ir::OpKind::LocalAlloc).at(1);
  // The store's conversion: accumulator pairs to the coalesced layout (the reduction of c after
  // the loop has one of its own, to the default layout).
  const auto stores = ops_of_kind(*m, ir::OpKind::Store);
  const ir::Value* stored = stores.back()->operands.at(1);
  REQUIRE(stored->def);
  REQUIRE(stored->def->kind == ir::OpKind::ConvertLayout);
  const ir::Op& convert = *stored->def;
  CHECK(analysis::row_run(convert.operands[0]->type) == 2);
  CHECK(analysis::row_run(convert.result()->type) == 4);  // 16 bytes of f32
  CHECK(analysis::convert_row_pad(convert) == 4);          // rows padded by 16 bytes
  CHECK(analysis::shared_bytes(convert) == (64 * 256 + 64 * 4) * 4);
  analysis::SharedMemoryPlan plan(*m);
  CHECK(overlaps_rings(plan, convert, *m));
  CHECK(plan.total_bytes() == plan.offset(last_ring) + analysis::shared_bytes(last_ring));  // no bytes of its own
  CHECK(plan.barrier_before(convert, 1));
  // The first op after the loop that reuses the ring's bytes writes only after a barrier: every
  // warp is done with the ring. (The reduction of c reads it in the accumulator's layout and
  // converts only its 1-D result, which may lie elsewhere: the first such op is found in order.)
  const auto& top = m->entry().ops;
  auto loop = std::find_if(top.begin(), top.end(), [](auto& o) { return o->kind == ir::OpKind::For; });
  REQUIRE(loop != top.end());
  auto first_after = std::find_if(loop + 1, top.end(), [&](auto& o) {
    return plan.has_region(*o) && overlaps_rings(plan, *o, *m);
  });
  REQUIRE(first_after != top.end());
  CHECK(plan.barrier_before(**first_after, 0));
  // The reductions after the loop may reuse the ring as well; the one before it may not.
  const auto reduces = ops_of_kind(*m, ir::OpKind::Reduce);
  CHECK_FALSE(overlaps_rings(plan, *reduces.front(), *m));

  // In an outer loop, the next iteration's prologue writes the ring again: nothing shares it.
  auto nested = wgmma_dot_loop(64, 256, 64, 3, /*store_c=*/true, /*nested=*/true);
  analysis::SharedMemoryPlan nested_plan(*nested);
  for (const ir::Op* c : ops_of_kind(*nested, ir::OpKind::ConvertLayout)) CHECK_FALSE(overlaps_rings(nested_plan, *c, *nested));
  for (const ir::Op* r : ops_of_kind(*nested, ir::OpKind::Reduce))
    if (nested_plan.has_region(*r)) CHECK_FALSE(overlaps_rings(nested_plan, *r, *nested));
}

TEST_CASE("conversions as shared-memory IR: the epilogue's buffer reuses the finished ring, barriers in the IR",
          "[shared_memory][wgmma]") {
  for (const bool nested : {false, true}) {
    INFO((nested ? "in an outer loop" : "at the top level"));
    auto m = wgmma_dot_loop(64, 256, 64, 3, /*store_c=*/true, nested);
    // The rings: the buffers async copies fill (the pipeline pass's), before any conversion's.
    std::vector<const ir::Op*> rings;
    for (const ir::Op* c : ops_of_kind(*m, ir::OpKind::AsyncCopy)) {
      const ir::Op* r = analysis::shared_buffer_of(c->operands[0]);
      if (std::find(rings.begin(), rings.end(), r) == rings.end()) rings.push_back(r);
    }
    REQUIRE(rings.size() == 2);
    const auto converts_before = ops_of_kind(*m, ir::OpKind::ConvertLayout).size();
    transforms::expand_conversions(*m);
    ir::verify(*m);
    // The 2-D conversion of the accumulator is a buffer now; the 1-D ones of the reduction stay.
    const auto stores = ops_of_kind(*m, ir::OpKind::Store);
    const ir::Value* stored = stores.back()->operands.at(1);
    REQUIRE(stored->def);
    REQUIRE(stored->def->kind == ir::OpKind::LocalLoad);
    const ir::Op& load = *stored->def;
    const ir::Op& buffer = *analysis::shared_buffer_of(load.operands[0]);
    CHECK(buffer.result()->type.encoding.kind == ir::SharedEncoding::Kind::Padded);
    CHECK(buffer.result()->type.encoding.bytes == 16);  // 16-byte runs both ways, as convert_row_pad says
    CHECK(analysis::shared_bytes(buffer) == (64 * 256 + 64 * 4) * 4);
    const auto converts_after = ops_of_kind(*m, ir::OpKind::ConvertLayout);
    CHECK(converts_after.size() < converts_before);
    for (const ir::Op* c : converts_after)
      CHECK((c->result()->type.rank() != 2 || analysis::register_renaming(c->operands[0]->type, c->result()->type)));
    {
      analysis::SharedMemoryPlan unplaced(*m);
      CHECK_FALSE(unplaced.missing_barriers().empty());
    }
    transforms::place_barriers(*m);
    ir::verify(*m);
    analysis::SharedMemoryPlan plan(*m);
    CHECK(plan.missing_barriers().empty());
    // The load follows a debug_barrier (the other threads' stores); at the top level, a barrier
    // comes between the loop (the ring's last reads and copies) and the first store into the
    // ring's bytes: a debug_barrier, or one the plan puts before an op's shared phase (the
    // reduction's 1-D conversion). In an outer loop the conversions have bytes of their own.
    const auto& block = load.parent->ops;
    auto at = std::find_if(block.begin(), block.end(), [&](auto& o) { return o.get() == &load; });
    REQUIRE(at - block.begin() >= 2);
    CHECK((*(at - 1))->kind == ir::OpKind::DebugBarrier);
    CHECK((*(at - 2))->kind == ir::OpKind::LocalStore);
    auto loop = std::find_if(block.begin(), block.end(), [](auto& o) { return o->kind == ir::OpKind::For; });
    auto first_store = std::find_if(loop, block.end(), [&](auto& o) {
      if (o->kind != ir::OpKind::LocalStore) return false;
      const ir::Op& target = *analysis::shared_buffer_of(o->operands[0]);
      return std::any_of(rings.begin(), rings.end(), [&](const ir::Op* r) { return overlaps(plan, target, *r); });
    });
    CHECK((first_store != block.end()) == !nested);
    if (first_store != block.end()) {  // a barrier between the loop and it: an op's or the plan's
      const bool ordered = std::any_of(loop + 1, first_store, [&](auto& o) {
        return o->kind == ir::OpKind::DebugBarrier ||
               (plan.has_region(*o) && (plan.barrier_before(*o, 0) || plan.barrier_before(*o, 1)));
      });
      CHECK(ordered);
    }
    // At the top level the buffer lies in the finished ring's bytes; in an outer loop (whose next
    // prologue refills the ring) it has bytes of its own.
    const bool shares = std::any_of(rings.begin(), rings.end(), [&](const ir::Op* r) { return overlaps(plan, buffer, *r); });
    CHECK(shares == !nested);
    // A second run finds nothing missing and adds nothing.
    const std::string once = ir::print(*m);
    transforms::place_barriers(*m);
    CHECK(ir::print(*m) == once);
  }
}

namespace {
// Copies x's 32 x 32 tile `n` (row-major) to y transposed: a load coalesced along rows, a store
// along columns, and a 2-D conversion between them (rows and columns of 32 as %r and %c).
std::string transpose_copy(int n) {
  const std::string k = std::to_string(n);
  return fmt::format(R"(
  %in{0} = add %rc, %tile{0} : <32x32xi32>
  %out{0} = add %cr, %tile{0} : <32x32xi32>
  %px{0} = addptr %xs, %in{0} : <32x32xptr<f32>>
  %py{0} = addptr %ys, %out{0} : <32x32xptr<f32>>
  %v{0} = load %px{0} : <32x32xf32>
  store %py{0}, %v{0}
)",
                     k);
}
const std::string kTransposePrelude = R"(
  %a = arange {end = 32, start = 0} : <32xi32>
  %r = expand_dims %a {axis = 1} : <32x1xi32>
  %c = expand_dims %a {axis = 0} : <1x32xi32>
  %k32 = constant {value = 32} : <32x1xi32>
  %r32 = mul %r, %k32 : <32x1xi32>
  %k32c = constant {value = 32} : <1x32xi32>
  %c32 = mul %c, %k32c : <1x32xi32>
  %rb = broadcast %r32 : <32x32xi32>
  %cb = broadcast %c : <32x32xi32>
  %rc = add %rb, %cb : <32x32xi32>
  %cb32 = broadcast %c32 : <32x32xi32>
  %rbb = broadcast %r : <32x32xi32>
  %cr = add %cb32, %rbb : <32x32xi32>
  %xs = splat %x : <32x32xptr<f32>>
  %ys = splat %y : <32x32xptr<f32>>
  %tile0 = constant {value = 0} : <32x32xi32>
  %tile1 = constant {value = 1024} : <32x32xi32>
)";
}  // namespace

TEST_CASE("conversion buffers in different top-level ops share bytes, a barrier between them", "[shared_memory]") {
  auto m = with_layouts(kTransposePrelude + transpose_copy(0) + transpose_copy(1),
                        "%x: ptr<f32> {divisibility = 16}, %y: ptr<f32> {divisibility = 16}");
  transforms::expand_conversions(*m);
  {
    // The attribute speaks for composite ops only: on a local_load it hides no needed barrier.
    auto marked = m->clone();
    ir::Op& load = const_cast<ir::Op&>(*ops_of_kind(*marked, ir::OpKind::LocalLoad).front());
    load.attrs[analysis::kBarrierBeforeWrites] = std::int64_t{1};
    analysis::SharedMemoryPlan plan(*marked);
    const auto& missing = plan.missing_barriers();
    CHECK(std::any_of(missing.begin(), missing.end(), [&](const auto& b) { return b.first == &load; }));
  }
  transforms::place_barriers(*m);
  ir::verify(*m);
  const auto buffers = ops_of_kind(*m, ir::OpKind::LocalAlloc);
  REQUIRE(buffers.size() == 2);
  analysis::SharedMemoryPlan plan(*m);
  CHECK(plan.offset(*buffers[0]) == plan.offset(*buffers[1]));
  CHECK(plan.total_bytes() == analysis::shared_bytes(*buffers[0]));
  // Barriers: before each load (other threads' stores) and before the second store (the first
  // conversion's reads of the same bytes): three.
  CHECK(ops_of_kind(*m, ir::OpKind::DebugBarrier).size() == 3);
  const auto stores = ops_of_kind(*m, ir::OpKind::LocalStore);
  REQUIRE(stores.size() == 2);
  const auto& top = m->entry().ops;
  auto second = std::find_if(top.begin(), top.end(), [&](auto& o) { return o.get() == stores[1]; });
  CHECK((*(second - 1))->kind == ir::OpKind::DebugBarrier);

  // Both in one loop: live together, bytes of their own; the loop's next iteration makes the
  // first store wait for the last load.
  auto looped = with_layouts(kTransposePrelude + "  %c0 = constant {value = 0} : i32\n  %c1 = constant {value = 1} : i32\n"
                             "  %n = for %c0, %c1, %c1, %c0 : i32 {\n  ^bb(%i: i32, %s: i32):\n" +
                                 transpose_copy(0) + transpose_copy(1) + "    yield %s\n  }\n",
                             "%x: ptr<f32> {divisibility = 16}, %y: ptr<f32> {divisibility = 16}");
  transforms::expand_conversions(*looped);
  transforms::place_barriers(*looped);
  const auto looped_buffers = ops_of_kind(*looped, ir::OpKind::LocalAlloc);
  REQUIRE(looped_buffers.size() == 2);
  analysis::SharedMemoryPlan looped_plan(*looped);
  CHECK(looped_plan.offset(*looped_buffers[0]) != looped_plan.offset(*looped_buffers[1]));
  CHECK(looped_plan.missing_barriers().empty());
}

namespace {
std::vector<std::unique_ptr<ir::Op>>::iterator position_in(ir::Block& b, const ir::Op* op) {
  return std::find_if(b.ops.begin(), b.ops.end(), [&](auto& o) { return o.get() == op; });
}
}  // namespace

TEST_CASE("rings: a nested loop's prologue follows a barrier, a conversion before the loop's wait has bytes of its own",
          "[shared_memory][wgmma]") {
  // In an outer loop, the prologue's first copies refill stages the last run's dots read.
  auto nested = wgmma_dot_loop(64, 256, 64, 3, /*store_c=*/true, /*nested=*/true);
  const ir::Op& outer = *ops_of_kind(*nested, ir::OpKind::For).at(0);
  const auto& outer_body = outer.regions[0]->block->ops;
  auto first_copy = std::find_if(outer_body.begin(), outer_body.end(), [](auto& o) { return o->kind == ir::OpKind::AsyncCopy; });
  REQUIRE(first_copy != outer_body.end());
  CHECK(std::any_of(outer_body.begin(), first_copy, [](auto& o) { return o->kind == ir::OpKind::DebugBarrier; }));
  auto flat = wgmma_dot_loop(64, 256, 64, 3, /*store_c=*/true);
  CHECK(std::none_of(flat->entry().ops.begin(), flat->entry().ops.end(), [](auto& o) { return o->kind == ir::OpKind::DebugBarrier; }));

  // The store's conversion of the loop's result moved between the loop and its async_wait (where
  // the layout pass puts a conversion for a use in another block): the last copies may still land
  // there, so it must not share the rings' bytes.
  ir::Block& top = flat->entry();
  const ir::Op* convert = ops_of_kind(*flat, ir::OpKind::Store).back()->operands.at(1)->def;
  REQUIRE(convert->kind == ir::OpKind::ConvertLayout);
  const ir::Op* loop = ir::parent_op(*ops_of_kind(*flat, ir::OpKind::Dot).at(0));
  REQUIRE(loop);
  REQUIRE((*std::next(position_in(top, loop)))->kind == ir::OpKind::AsyncWait);
  {
    analysis::SharedMemoryPlan plan(*flat);
    CHECK(overlaps_rings(plan, *convert, *flat));  // after the wait: the rings' bytes are free
  }
  auto at = position_in(top, convert);
  std::unique_ptr<ir::Op> moved = std::move(*at);
  top.ops.erase(at);
  top.ops.insert(std::next(position_in(top, loop)), std::move(moved));
  ir::verify(*flat);
  analysis::SharedMemoryPlan plan(*flat);
  CHECK_FALSE(overlaps_rings(plan, *convert, *flat));
}

TEST_CASE("chained wgmma dots: the second reads its A (the first's accumulator, cast) from registers",
          "[shared_memory][wgmma]") {
  // Attention's P·V without the loop: %p is computed from the first dot's accumulator, in its
  // wgmma layout, so the second dot stages only its B; the first stages both of its loads.
  auto m = ir::parse_module("kernel @k(%a: ptr<f16> {divisibility = 16}, %c: ptr<f32> {divisibility = 16}) num_warps = 4 {\n"
                            "  %i = arange {end = 64, start = 0} : <64xi32>\n" +
                            row_major_offsets("off", "i", "i", 64, 64) + R"(  %zero = constant {value = 0.0} : <64x64xf32>
  %pa = splat %a : <64x64xptr<f16>>
  %aa = addptr %pa, %off : <64x64xptr<f16>>
  %x = load %aa : <64x64xf16>
  %s = dot %x, %x, %zero : <64x64xf32>
  %p = cast %s : <64x64xf16>
  %o = dot %p, %x, %zero : <64x64xf32>
  %pc = splat %c : <64x64xptr<f32>>
  %ac = addptr %pc, %off : <64x64xptr<f32>>
  store %ac, %o
  return
}
)");
  ir::verify(*m);
  transforms::assign_layouts(*m, analysis::target_info("sm_90a"));
  ir::verify(*m);
  const auto dots = ops_of_kind(*m, ir::OpKind::Dot);
  REQUIRE(dots.size() == 2);
  const ir::Op& first = *dots[0];
  const ir::Op& second = *dots[1];
  REQUIRE(analysis::dot_uses_wgmma(first));
  REQUIRE(analysis::dot_uses_wgmma(second));
  CHECK_FALSE(analysis::wgmma_a_in_registers(first));
  CHECK(analysis::dot_stages(first, 0));
  CHECK(analysis::dot_stages(first, 1));
  CHECK(analysis::shared_bytes(first) == 2 * 64 * 64 * 2);
  CHECK(analysis::wgmma_a_in_registers(second));
  CHECK(second.operands[0]->type.layout == analysis::wgmma_layout({64, 64}, 4));
  CHECK_FALSE(analysis::dot_stages(second, 0));
  CHECK(analysis::dot_stages(second, 1));
  CHECK(analysis::dot_staged_offset(second, 1) == 0);  // B first in its region: A has none
  CHECK(analysis::shared_bytes(second) == 64 * 64 * 2);
}

namespace {

enum class AccUse { AfterFirstDot, BeforeFirstDot, LoadedA, CarriedA };

// Attention's loop without its softmax, 4 warps, num_stages = 2: s = q·kᵀ (q [64 x d] loaded
// once, kᵀ [d x 64] a ring), then o = cast(s)·v + acc·2 (v [64 x d] a ring, acc carried). With
// BeforeFirstDot the carried value is scaled before the first dot; with LoadedA (d = 64) the
// second dot's A is a loaded tile (a ring of its own) and s is added to the accumulator instead;
// with CarriedA (d = 64) A is the previous iteration's cast(s), carried by the loop.
std::unique_ptr<ir::Module> attention_loop(int d, AccUse use) {
  const std::string scale = "    %sc = mul %acc, %two : <64x{0}xf32>\n";
  const bool loaded = use == AccUse::LoadedA, carried = use == AccUse::CarriedA;
  const std::string text = fmt::format(R"(kernel @attention_loop(%a: ptr<f16> {{divisibility = 16}}, %b: ptr<f16> {{divisibility = 16}}, %y: ptr<f32> {{divisibility = 16}}, %n: i32) num_warps = 4 num_stages = 2 {{
  %rm = arange {{end = 64, start = 0}} : <64xi32>
  %rd = arange {{end = {0}, start = 0}} : <{0}xi32>
{4}{5}{6}{7}  %pq = splat %a : <64x{0}xptr<f16>>
  %aq = addptr %pq, %qoff : <64x{0}xptr<f16>>
  %q = load %aq : <64x{0}xf16>
  %zero = constant {{value = 0.0}} : <64x{0}xf32>
  %szero = constant {{value = 0.0}} : <64x64xf32>
  %two = constant {{value = 2.0}} : <64x{0}xf32>
  %lb = constant {{value = 0}} : i32
  %step = constant {{value = 1}} : i32
{8}  ^bb(%iv: i32, %acc: <64x{0}xf32>{9}):
{1}    %pk = splat %b : <{0}x64xptr<f16>>
    %ak = addptr %pk, %koff : <{0}x64xptr<f16>>
    %k = load %ak : <{0}x64xf16>
    %s = dot %q, %k, %szero : <64x64xf32>
{2}{3}    %pv = splat %b : <64x{0}xptr<f16>>
    %av = addptr %pv, %voff : <64x{0}xptr<f16>>
    %v = load %av : <64x{0}xf16>
    %o = dot %{10}, %v, %sc : <64x{0}xf32>
{11}  }}
{12}  return
}}
)",
                                       d, use == AccUse::BeforeFirstDot ? fmt::format(fmt::runtime(scale), d) : "",
                                       use == AccUse::AfterFirstDot || carried ? fmt::format(fmt::runtime(scale), d) : "",
                                       loaded ? "    %pa = splat %a : <64x64xptr<f16>>\n    %aa = addptr %pa, %aoff : <64x64xptr<f16>>\n"
                                                "    %p = load %aa : <64x64xf16>\n    %sc = add %acc, %s : <64x64xf32>\n"
                                              : "    %p = cast %s : <64x64xf16>\n",
                                       row_major_offsets("qoff", "rm", "rd", 64, d), row_major_offsets("koff", "rd", "rm", d, 64),
                                       row_major_offsets("voff", "rm", "rd", 64, d), loaded ? row_major_offsets("aoff", "rm", "rm", 64, 64) : "",
                                       carried ? "  %pzero = constant {value = 0.0} : <64x64xf16>\n  %c, %cp = for %lb, %n, %step, %zero, %pzero : <64x64xf32>, <64x64xf16> {\n"
                                               : fmt::format("  %c = for %lb, %n, %step, %zero : <64x{}xf32> {{\n", d),
                                       carried ? ", %pc: <64x64xf16>" : "", carried ? "pc" : "p",
                                       carried ? "    yield %o, %p\n" : "    yield %o\n", sum_into_y(64));
  auto mod = ir::parse_module(text);
  ir::verify(*mod);
  transforms::pipeline_loads(*mod, mod->num_stages);
  transforms::assign_layouts(*mod, analysis::target_info("sm_90a"));
  ir::verify(*mod);
  return mod;
}

bool barrier_after(const ir::Op& op) {
  const auto& body = op.parent->ops;
  auto it = std::find_if(body.begin(), body.end(), [&](auto& o) { return o.get() == &op; });
  return std::next(it) != body.end() && (*std::next(it))->kind == ir::OpKind::DebugBarrier;
}

}  // namespace

TEST_CASE("rings: attention's P·V waits for nothing, the next iteration's first wgmma wait retires it",
          "[shared_memory][wgmma]") {
  // head_dim 64: q 8 KB and two rings of 2 x 8 KB leave room for five programs per SM, a spare
  // stage for four: a barrier after the first dot instead. head_dim 128: 80 KB and 96 KB both
  // leave two: v's ring takes a spare stage (k's, which only the synchronous dot reads, does not).
  for (const int d : {64, 128}) {
    INFO("head_dim " << d);
    auto m = attention_loop(d, AccUse::AfterFirstDot);
    const auto dots = ops_of_kind(*m, ir::OpKind::Dot);
    REQUIRE(dots.size() == 2);
    const ir::Op &qk = *dots[0], &pv = *dots[1];
    REQUIRE(analysis::dot_uses_wgmma(pv));
    CHECK(analysis::wgmma_a_in_registers(pv));
    CHECK(analysis::wgmma_retiring_dot(pv) == &qk);
    CHECK(analysis::wgmma_deferred(pv));
    CHECK(analysis::wgmma_in_flight(pv));
    CHECK_FALSE(analysis::wgmma_in_flight(qk));
    const auto retired = analysis::wgmma_accumulators_retired_by(qk);
    REQUIRE(retired.size() == 1);
    CHECK(retired[0] == pv.parent->args.at(1).get());  // the carried accumulator, tied through qk's wait
    const auto rings = ops_of_kind(*m, ir::OpKind::LocalAlloc);
    REQUIRE(rings.size() >= 3);  // q, kᵀ, v (and the reductions' scratch after them)
    CHECK(analysis::shared_buffer_of(pv.operands[1]) == rings[2]);
    CHECK(rings[1]->result()->type.shape[0] == 2);
    CHECK(rings[2]->result()->type.shape[0] == (d == 128 ? 3 : 2));
    CHECK(barrier_after(qk) == (d == 64));
    CHECK_FALSE(barrier_after(pv));
  }
  // The carried accumulator read before the first dot (its wait could not tie it), or an A that
  // is not computed from the first dot (registers the loop may write while the wgmma reads them):
  // synchronous, as before, with neither a spare stage nor a barrier.
  for (const auto& [d, use] : {std::pair{128, AccUse::BeforeFirstDot}, std::pair{64, AccUse::CarriedA}}) {
    INFO("head_dim " << d << (use == AccUse::CarriedA ? ", A carried" : ", accumulator read before the first dot"));
    auto m = attention_loop(d, use);
    const auto dots = ops_of_kind(*m, ir::OpKind::Dot);
    REQUIRE(dots.size() == 2);
    if (use == AccUse::CarriedA) CHECK(analysis::wgmma_a_in_registers(*dots[1]));
    CHECK(analysis::wgmma_retiring_dot(*dots[1]) == nullptr);
    CHECK_FALSE(analysis::wgmma_in_flight(*dots[1]));
    CHECK_FALSE(dots[1]->has_attr("wgmma_in_flight"));
    CHECK(analysis::wgmma_accumulators_retired_by(*dots[0]).empty());
    for (const ir::Op* r : ops_of_kind(*m, ir::OpKind::LocalAlloc))
      if (r->result()->type.rank() == 3) CHECK(r->result()->type.shape[0] == 2);
    CHECK_FALSE(barrier_after(*dots[0]));
  }
  // A from a ring of its own (both operands views): deferred too; the two rings' spare stages
  // would cost a program per SM (56 KB: four, 72 KB: three), so a barrier after the first dot.
  auto m = attention_loop(64, AccUse::LoadedA);
  const auto dots = ops_of_kind(*m, ir::OpKind::Dot);
  REQUIRE(dots.size() == 2);
  CHECK(analysis::is_async_dot(*dots[1]));
  CHECK(analysis::wgmma_deferred(*dots[1]));
  for (const ir::Op* r : ops_of_kind(*m, ir::OpKind::LocalAlloc))
    if (r->result()->type.rank() == 3) CHECK(r->result()->type.shape[0] == 2);
  CHECK(barrier_after(*dots[0]));
}

TEST_CASE("rings: a wgmma dot stays synchronous where the copies do not follow the pipeline pass's schedule",
          "[shared_memory][wgmma]") {
  // 64x256x64 with 3 stages would stay in flight with a spare stage (the first test case). Here
  // (1) the copies after the dot go to the stage the dot reads, or (2) every stage index is the
  // constant 0 (the copies still one "ahead" of it): nothing may stay in flight. A stale
  // {wgmma_in_flight = 1} in the IR does not survive the layout pass's decision.
  const std::function<void(ir::Module&)> mutations[] = {
      [](ir::Module& mod) {
        ir::Op* dot = const_cast<ir::Op*>(ops_of_kind(mod, ir::OpKind::Dot).at(0));
        ir::Value* slot = dot->operands[0]->def->operands[1];
        for (auto& op : dot->parent->ops)
          if (op->kind == ir::OpKind::AsyncCopy) op->operands[0]->def->operands[1] = slot;
        dot->attrs["wgmma_in_flight"] = std::int64_t{1};
      },
      [](ir::Module& mod) {
        ir::Op* dot = const_cast<ir::Op*>(ops_of_kind(mod, ir::OpKind::Dot).at(0));
        ir::Value* zero = ops_of_kind(mod, ir::OpKind::SmemIndex).at(0)->operands[1];  // the prologue's stage 0
        ir::Value* slot = dot->operands[0]->def->operands[1];
        for (int l = 0; l < 2; ++l) dot->operands[static_cast<std::size_t>(l)]->def->operands[1] = zero;
        for (auto& op : dot->parent->ops)
          if (op->kind == ir::OpKind::AsyncCopy)
            for (ir::Value*& v : op->operands[0]->def->operands[1]->def->operands)
              if (v == slot) v = zero;
      }};
  for (const auto& mutate : mutations) {
    auto m = wgmma_dot_loop(64, 256, 64, 3, false, false, mutate);
    const ir::Op& dot = *ops_of_kind(*m, ir::OpKind::Dot).at(0);
    REQUIRE(analysis::dot_uses_wgmma(dot));
    CHECK_FALSE(analysis::wgmma_in_flight(dot));
    CHECK_FALSE(dot.has_attr("wgmma_in_flight"));
    for (const ir::Op* r : ops_of_kind(*m, ir::OpKind::LocalAlloc)) CHECK(r->result()->type.shape[0] == 3);
    const auto& body = dot.parent->ops;
    auto after = std::next(std::find_if(body.begin(), body.end(), [&](auto& o) { return o.get() == &dot; }));
    CHECK((*after)->kind != ir::OpKind::DebugBarrier);
  }
  // As the pass wrote it: in flight, recorded on the dot.
  const auto kept = wgmma_dot_loop(64, 256, 64, 3);
  CHECK(ops_of_kind(*kept, ir::OpKind::Dot).at(0)->has_attr("wgmma_in_flight"));
}

TEST_CASE("past kSeparateRegionsBytes, reductions in different top-level ops share bytes, barriers between them",
          "[shared_memory]") {
  // Column sums of a 32x32 f32 tile across 4 warps: 512 bytes each.
  auto column_sum = [](int i) {
    return fmt::format(R"(  %s{0} = reduce %v0 {{axis = 0}} : <32xf32> {{
  ^bb(%s{0}a: f32, %s{0}b: f32):
    %s{0}c = add %s{0}a, %s{0}b : f32
    yield %s{0}c
  }}
  store %ay, %s{0}
)",
                       i);
  };
  // `count` column sums at the top level, then two in one loop (live together: never sharing).
  auto column_sums = [&](int count) {
    std::string body = kTransposePrelude + transpose_copy(0) + R"(
  %ys1 = splat %y : <32xptr<f32>>
  %ay = addptr %ys1, %a : <32xptr<f32>>
)";
    for (int i = 0; i < count; ++i) body += column_sum(i);
    body += "  %lc0 = constant {value = 0} : i32\n  %lc1 = constant {value = 1} : i32\n  %lc4 = constant {value = 4} : i32\n"
            "  for %lc0, %lc4, %lc1 {\n  ^bb(%it: i32):\n" +
            column_sum(count) + column_sum(count + 1) + "    yield\n  }\n";
    return with_layouts(body, "%x: ptr<f32> {divisibility = 16}, %y: ptr<f32> {divisibility = 16}");
  };
  auto few = column_sums(4);
  const std::int64_t one = analysis::shared_bytes(*ops_of_kind(*few, ir::OpKind::Reduce).front());
  REQUIRE(one > 0);
  const int many = static_cast<int>(analysis::kSeparateRegionsBytes / one) + 8;
  {  // Within the budget: regions of their own, no barrier between two reductions.
    analysis::SharedMemoryPlan plan(*few);
    const auto reduces = ops_of_kind(*few, ir::OpKind::Reduce);
    std::set<std::int64_t> offsets;
    for (const ir::Op* r : reduces) {
      offsets.insert(plan.offset(*r));
      CHECK_FALSE(plan.barrier_before(*r, 0));
    }
    CHECK(offsets.size() == reduces.size());
  }
  auto m = column_sums(many);
  transforms::place_barriers(*m);
  ir::verify(*m);
  analysis::SharedMemoryPlan plan(*m);
  CHECK(plan.missing_barriers().empty());
  // Everything shares one region: as large as the largest user (the transpose's conversion).
  std::int64_t largest = 0;
  ir::walk(m->entry(), [&](const ir::Op& op) { largest = std::max(largest, analysis::shared_bytes(op)); });
  CHECK(plan.total_bytes() == (largest + 15) / 16 * 16);
  const auto reduces = ops_of_kind(*m, ir::OpKind::Reduce);
  REQUIRE(static_cast<int>(reduces.size()) == many + 2);
  for (int i = 1; i < many; ++i) {
    CHECK(plan.offset(*reduces[i]) == plan.offset(*reduces[0]));
    CHECK(reduces[i]->attrs.count(analysis::kBarrierBeforeWrites) == 1);  // the last one's reads of these bytes
  }
  // The loop's two: each may share with the top level's, not with the other.
  const std::int64_t a = plan.offset(*reduces[many]), b = plan.offset(*reduces[many + 1]);
  CHECK((a + one <= b || b + one <= a));
}

TEST_CASE("BUG-3's program (16 transposing copies of a 16x256 f32 tile) fits in two conversions' bytes", "[shared_memory]") {
  // tests/random/repro/bug3_shared_memory.tir needed 543 KB when every conversion had bytes of
  // its own; compiled as a launch compiles it, its conversions now reuse bytes (they are 2-D, so
  // buffers since expand-conversions: this pins the repro, the test above the 16 KB rule).
  std::ifstream in(TESSERA_TEST_DIR "/random/repro/bug3_shared_memory.tir");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  auto m = ir::parse_module(text.str());
  transforms::run_pass_pipeline(*m, transforms::default_pipeline());
  transforms::run_pass_pipeline(*m, transforms::target_pipeline());
  analysis::SharedMemoryPlan plan(*m);
  CHECK(plan.missing_barriers().empty());
  std::int64_t largest = 0, sum = 0;
  ir::walk(m->entry(), [&](const ir::Op& op) {
    largest = std::max(largest, analysis::shared_bytes(op));
    sum += analysis::shared_bytes(op);
  });
  REQUIRE(largest > 0);
  CHECK(sum >= 16 * largest);  // many users,
  CHECK(plan.total_bytes() <= 2 * ((largest + 15) / 16 * 16));  // few bytes
}

TEST_CASE("a buffer of one 2-D tile takes that tile's bytes, a ring those of its stages", "[shared_memory]") {
  // A loop-invariant dot operand stored once (pipeline_loads.hpp) is a 2-D buffer: one tile, not
  // stages of rows (which, swizzled, would each round up to 1024 bytes).
  auto m = ir::parse_module(R"(kernel @k() num_warps = 4 {
  %0 = local_alloc : !smem<128x128xf16, #nvmma<128>>
  %1 = local_alloc : !smem<64x32xf16, #padded<16>>
  %2 = local_alloc : !smem<3x64x128xf16, #nvmma<128>>
  return
}
)");
  ir::verify(*m);
  const auto allocs = ops_of_kind(*m, ir::OpKind::LocalAlloc);
  REQUIRE(allocs.size() == 3);
  CHECK(analysis::shared_bytes(*allocs[0]) == 128 * 128 * 2);
  CHECK(analysis::shared_bytes(*allocs[1]) == 64 * (32 * 2 + 16));
  CHECK(analysis::shared_bytes(*allocs[2]) == 3 * 64 * 128 * 2);
}
