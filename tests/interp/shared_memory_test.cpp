// Shared memory in the interpreter (ops.def, "Shared memory"): buffers and their stages, async
// copies that land at the wait covering their group, and the errors that a missing wait, a stage
// overwritten while in flight, a negative stage or a read of unwritten memory give, each
// naming the ops' lines.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "jit/interp/interpreter.hpp"
#include "jit/ir/parser.hpp"
#include "jit/ir/verifier.hpp"
#include "tessera/error.hpp"

using namespace tessera;
using Catch::Matchers::Contains;

namespace {

// Lines 2 to 18 of every program: pointers to x[0..16) (%px0), x[16..32) (%px1) and y likewise,
// an i32 0, 1, 2 and 4, and a two-stage buffer of 16 f32 (%buf) with its stages %s0 and %s1.
const std::string kPrelude = R"(  %i = arange {end = 16, start = 0} : <16xi32>
  %xs = splat %x : <16xptr<f32>>
  %ys = splat %y : <16xptr<f32>>
  %c0 = constant {value = 0} : i32
  %c1 = constant {value = 1} : i32
  %c2 = constant {value = 2} : i32
  %c4 = constant {value = 4} : i32
  %k16 = constant {value = 16} : <16xi32>
  %i16 = add %i, %k16 : <16xi32>
  %px0 = addptr %xs, %i : <16xptr<f32>>
  %px1 = addptr %xs, %i16 : <16xptr<f32>>
  %py0 = addptr %ys, %i : <16xptr<f32>>
  %py1 = addptr %ys, %i16 : <16xptr<f32>>
  %buf = local_alloc : !smem<2x16xf32, #padded<16>>
  %s0 = smem_index %buf, %c0 : !smem<16xf32, #padded<16>>
  %s1 = smem_index %buf, %c1 : !smem<16xf32, #padded<16>>
  %k8 = constant {value = 8} : <16xi32>
)";
constexpr int kFirstLine = 19;  // of the body after the prelude

struct Run {
  std::vector<float> x = std::vector<float>(64), y = std::vector<float>(64, -1.f);
  Run() {
    for (std::size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(k) * 0.5f + 1.f;
  }
  // Each op line of `body` gets its own line number as its location, smem.tir:LINE:3.
  void operator()(const std::string& body) {
    std::string located;
    int n = kFirstLine;
    for (std::size_t at = 0, end; at < body.size(); at = end + 1, ++n) {
      end = body.find('\n', at);
      std::string text_line = body.substr(at, end - at);
      const bool region_line = text_line.back() == '{' || text_line.find("^bb") != std::string::npos ||
                               text_line.find_first_not_of(' ') == text_line.find('}');
      if (!region_line) text_line += " loc(\"smem.tir\":" + std::to_string(n) + ":3)";
      located += text_line + "\n";
    }
    const std::string text = "kernel @k(%x: ptr<f32>, %y: ptr<f32>) num_warps = 4 {\n" + kPrelude + located + "  return\n}\n";
    auto m = ir::parse_module(text, "smem.tir");
    ir::verify(*m);
    const std::vector<ArgValue> args{ArgValue::pointer(x.data(), DType::F32, x.size() * 4),
                                     ArgValue::pointer(y.data(), DType::F32, y.size() * 4)};
    interp::run(*m, {1, 1, 1}, args);
  }
};

std::string line(int n) { return "smem.tir:" + std::to_string(kFirstLine + n) + ":"; }

}  // namespace

TEST_CASE("shared memory: copies land at their wait, masked elements as 0, stores and loads round-trip",
          "[interp][shared]") {
  Run run;
  run(R"(  async_copy %s0, %px0
  async_commit
  %m = cmp_lt %i, %k8 : <16xi1>
  async_copy %s1, %px1, %m
  async_commit
  async_wait {pending = 1}
  %v0 = local_load %s0 : <16xf32>
  store %py0, %v0
  async_wait {pending = 0}
  %v1 = local_load %s1 : <16xf32>
  %two = constant {value = 2.0} : <16xf32>
  %w = mul %v1, %two : <16xf32>
  local_store %s0, %w
  fence_async_shared
  %v2 = local_load %s0 : <16xf32>
  store %py1, %v2
)");
  for (int k = 0; k < 16; ++k) {
    INFO("element " << k);
    CHECK(run.y[k] == run.x[k]);
    CHECK(run.y[16 + k] == (k < 8 ? 2.f * run.x[16 + k] : 0.f));
  }
  CHECK(run.y[32] == -1.f);
}

TEST_CASE("shared memory: a two-stage ring over a loop sums four chunks", "[interp][shared]") {
  // What the pipeliner will emit: iteration 0's copy before the loop; in iteration i, the copy of
  // chunk i + 1 (masked off past the end) into the other stage, one commit, a wait that leaves that
  // newest group in flight, then chunk i read from its stage.
  const std::string ring = R"(  async_copy %s0, %px0
  async_commit
  %zero = constant {value = 0.0} : <16xf32>
  %r = for %c0, %c4, %c1, %zero : <16xf32> {
  ^bb(%it: i32, %acc: <16xf32>):
    %nx = add %it, %c1 : i32
    %has = cmp_lt %nx, %c4 : i1
    %hasv = splat %has : <16xi1>
    %ns = rem %nx, %c2 : i32
    %sn = smem_index %buf, %ns : !smem<16xf32, #padded<16>>
    %c16 = constant {value = 16} : i32
    %base = mul %nx, %c16 : i32
    %bases = splat %base : <16xi32>
    %offs = add %i, %bases : <16xi32>
    %pn = addptr %xs, %offs : <16xptr<f32>>
    async_copy %sn, %pn, %hasv
    async_commit
    async_wait {pending = PENDING}
    %cs = rem %it, %c2 : i32
    %sc = smem_index %buf, %cs : !smem<16xf32, #padded<16>>
    %v = local_load %sc : <16xf32>
    %acc2 = add %acc, %v : <16xf32>
    yield %acc2
  }
  store %py0, %r
)";
  auto with_pending = [&](const char* n) {
    std::string s = ring;
    s.replace(s.find("PENDING"), 7, n);
    return s;
  };
  Run run;
  run(with_pending("1"));
  for (int k = 0; k < 16; ++k) {
    INFO("element " << k);
    CHECK(run.y[k] == run.x[k] + run.x[16 + k] + run.x[32 + k] + run.x[48 + k]);
  }
  // Waiting for all but the two newest groups leaves the current chunk's copy in flight.
  Run early;
  CHECK_THROWS_WITH(early(with_pending("2")),
                    Contains("local_load at " + line(20)) && Contains("async_copy at " + line(0)) &&
                        Contains("no async_wait has covered its group yet"));
}

TEST_CASE("shared memory: reading or overwriting a stage in flight is an error naming both ops", "[interp][shared]") {
  Run run;
  // The newer of two groups is still pending after wait {pending = 1}.
  const std::string newer_pending = R"(  async_copy %s0, %px0
  async_commit
  async_copy %s1, %px1
  async_commit
  async_wait {pending = 1}
  %v = local_load %s1 : <16xf32>
)";
  CHECK_THROWS_AS(run(newer_pending), ProgramError);
  CHECK_THROWS_WITH(run(newer_pending), Contains("local_load at " + line(5)) && Contains("async_copy at " + line(2)));
  // A copy never committed is not waited for.
  CHECK_THROWS_WITH(run(R"(  async_copy %s0, %px0
  async_wait {pending = 0}
  %v = local_load %s0 : <16xf32>
)"),
                    Contains("never committed"));
  // Overwriting a stage whose copy is in flight: by a store, or by another copy.
  CHECK_THROWS_WITH(run(R"(  async_copy %s0, %px0
  async_commit
  %v = load %px1 : <16xf32>
  local_store %s0, %v
)"),
                    Contains("local_store at " + line(3) + "3 overwrites") && Contains("async_copy at " + line(0)));
  CHECK_THROWS_WITH(run(R"(  async_copy %s1, %px0
  async_copy %s1, %px1
)"),
                    Contains("async_copy at " + line(1) + "3 overwrites") && Contains("async_copy at " + line(0)));
  // After the wait the same reads and writes are fine.
  run(R"(  async_copy %s0, %px0
  async_commit
  async_wait {pending = 0}
  %v = local_load %s0 : <16xf32>
  local_store %s0, %v
  store %py0, %v
)");
  CHECK(run.y[3] == run.x[3]);
}

TEST_CASE("shared memory: in a loop, each iteration's copy is its own, committed or not", "[interp][shared]") {
  // Iteration i copies into stage i mod 2 and reads stage (i + 1) mod 2 before committing. In
  // iteration 1 that is iteration 0's copy: committed, never waited for (the same async_copy op
  // has an uncommitted copy of its own in flight by then, into the other stage).
  Run run;
  CHECK_THROWS_WITH(run(R"(  %w = load %px1 : <16xf32>
  local_store %s1, %w
  for %c0, %c2, %c1 {
  ^bb(%it: i32):
    %cur = rem %it, %c2 : i32
    %sc = smem_index %buf, %cur : !smem<16xf32, #padded<16>>
    async_copy %sc, %px0
    %nx = add %it, %c1 : i32
    %other = rem %nx, %c2 : i32
    %so = smem_index %buf, %other : !smem<16xf32, #padded<16>>
    %v = local_load %so : <16xf32>
    async_commit
    yield
  }
)"),
                    Contains("local_load at " + line(10)) && Contains("async_copy at " + line(6)) &&
                        Contains("no async_wait has covered its group yet"));
}

TEST_CASE("shared memory: a slot past the stages wraps, a negative one and a read of unwritten memory are errors",
          "[interp][shared]") {
  Run run;
  // Slot 2 of two stages is stage 0 (a ring), which the copy of %px0 filled.
  run(R"(  async_copy %s0, %px0
  async_commit
  async_wait {pending = 0}
  %s2 = smem_index %buf, %c2 : !smem<16xf32, #padded<16>>
  %v = local_load %s2 : <16xf32>
  store %py0, %v
)");
  for (int k = 0; k < 16; ++k) CHECK(run.y[k] == run.x[k]);
  CHECK_THROWS_WITH(run(R"(  %cm1 = constant {value = -1} : i32
  %sm1 = smem_index %buf, %cm1 : !smem<16xf32, #padded<16>>
)"),
                    Contains("smem_index at " + line(1)) && Contains("stage -1 (negative) of a buffer of 2 stages"));
  CHECK_THROWS_WITH(run(R"(  async_copy %s0, %px0
  async_commit
  async_wait {pending = 0}
  %v = local_load %s1 : <16xf32>
)"),
                    Contains("local_load at " + line(3)) && Contains("nothing wrote"));
}

TEST_CASE("shared memory: a dot reads its operands from two stages of a buffer", "[interp][shared]") {
  const std::string text = R"(kernel @k(%x: ptr<f32>, %y: ptr<f32>) num_warps = 4 {
  %r = arange {end = 16, start = 0} : <16xi32>
  %r1 = expand_dims %r {axis = 1} : <16x1xi32>
  %k16 = constant {value = 16} : <16x1xi32>
  %rows = mul %r1, %k16 : <16x1xi32>
  %rowsb = broadcast %rows : <16x16xi32>
  %c = expand_dims %r {axis = 0} : <1x16xi32>
  %colsb = broadcast %c : <16x16xi32>
  %idx = add %rowsb, %colsb : <16x16xi32>
  %xs = splat %x : <16x16xptr<f32>>
  %pa = addptr %xs, %idx : <16x16xptr<f32>>
  %k256 = constant {value = 256} : <16x16xi32>
  %idx2 = add %idx, %k256 : <16x16xi32>
  %pb = addptr %xs, %idx2 : <16x16xptr<f32>>
  %buf = local_alloc : !smem<2x16x16xf32, #nvmma<64>>
  %c0 = constant {value = 0} : i32
  %c1 = constant {value = 1} : i32
  %sa = smem_index %buf, %c0 : !smem<16x16xf32, #nvmma<64>>
  %sb = smem_index %buf, %c1 : !smem<16x16xf32, #nvmma<64>>
  async_copy %sa, %pa
  async_copy %sb, %pb
  async_commit
  WAIT
  %acc = constant {value = 0.0} : <16x16xf32>
  %d = dot %sa, %sb, %acc {input_precision = "ieee"} : <16x16xf32> loc("mm.cpp":25:3)
  %ys = splat %y : <16x16xptr<f32>>
  %py = addptr %ys, %idx : <16x16xptr<f32>>
  store %py, %d
  return
}
)";
  std::vector<float> x(512), y(256, -1.f);
  for (std::size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(static_cast<int>(k * 5 % 7) - 3);  // exact sums
  auto run = [&](const std::string& wait) {
    std::string t = text;
    t.replace(t.find("WAIT"), 4, wait);
    auto m = ir::parse_module(t, "mm.tir");
    ir::verify(*m);
    const std::vector<ArgValue> args{ArgValue::pointer(x.data(), DType::F32, x.size() * 4),
                                     ArgValue::pointer(y.data(), DType::F32, y.size() * 4)};
    interp::run(*m, {1, 1, 1}, args);
  };
  run("async_wait {pending = 0}");
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) {
      float want = 0.f;
      for (int k = 0; k < 16; ++k) want += x[i * 16 + k] * x[256 + k * 16 + j];
      INFO("element " << i << ", " << j);
      CHECK(y[i * 16 + j] == want);
    }
  // Without the wait the dot reads stages still in flight.
  CHECK_THROWS_WITH(run("fence_async_shared"), Contains("dot at mm.cpp:25:3 reads shared memory that the async_copy"));
}
