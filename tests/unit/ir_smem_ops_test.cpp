// The shared-memory ops of ops.def ("Shared memory") in the IR text: every encoding prints and
// parses back, and the verifier names what is wrong with a malformed use.
#include <catch2/catch.hpp>

#include "jit/ir/parser.hpp"
#include "jit/ir/printer.hpp"
#include "jit/ir/verifier.hpp"
#include "jit/transforms/passes.hpp"
#include "tessera/error.hpp"

using namespace tessera::ir;

namespace {

const std::string kHeader = "kernel @k(%p: ptr<bf16> {divisibility = 16}, %n: i32) num_warps = 4 {\n";

void rejects(const std::string& body, const std::string& problem) {
  INFO(body);
  auto m = parse_module(kHeader + body + "  return\n}\n", "bad.tir");
  REQUIRE_THROWS_AS(verify(*m), tessera::ProgramError);
  REQUIRE_THROWS_WITH(verify(*m), Catch::Contains(problem));
}

// Declares %buf (3 stages of 64 x 32 bf16, 64-byte swizzle), %view (stage %n), %ptrs to 64 x 32
// elements of %p and %mask.
const std::string kSetup = R"(  %buf = local_alloc : !smem<3x64x32xbf16, #nvmma<64>>
  %view = smem_index %buf, %n : !smem<64x32xbf16, #nvmma<64>>
  %zero = constant {value = 0} : <64x32xi32>
  %ps = splat %p : <64x32xptr<bf16>>
  %ptrs = addptr %ps, %zero : <64x32xptr<bf16>>
  %mask = constant {value = 1} : <64x32xi1>
)";

}  // namespace

TEST_CASE("shared memory ops: print and parse back, every encoding", "[ir][printer][shared]") {
  const std::string text = kHeader + R"(  %0 = local_alloc : !smem<3x64x32xbf16, #nvmma<64>>
  %1 = smem_index %0, %n : !smem<64x32xbf16, #nvmma<64>>
  %2 = constant {value = 0} : <64x32xi32>
  %3 = splat %p : <64x32xptr<bf16>>
  %4 = addptr %3, %2 : <64x32xptr<bf16>>
  %5 = constant {value = 1} : <64x32xi1>
  async_copy %1, %4, %5
  async_copy %1, %4
  async_commit
  async_wait {pending = 2}
  %6 = local_load %1 : <64x32xbf16>
  %7 = local_alloc : !smem<32x64xbf16, #nvmma<128, transposed>>
  %8 = local_alloc : !smem<64x32xbf16, #padded<16>>
  %9 = local_alloc : !smem<2x16xf32>
  %10 = local_alloc : !smem<64x32xbf16, #nvmma<32>>
  local_store %8, %6
  fence_async_shared
  %11 = local_alloc : !smem<32x16xbf16, #nvmma<32>>
  %12 = constant {value = 0.0} : <64x16xf32>
  %13 = dot %1, %11, %12 : <64x16xf32>
  %14 = smem_trans %1 : !smem<32x64xbf16, #nvmma<64, transposed>>
  %15 = smem_trans %10 : !smem<32x64xbf16, #nvmma<32, transposed>>
  %16 = local_alloc : !smem<16x32xbf16, #padded<16, transposed>>
  %17 = local_alloc : !smem<16x32xbf16, #transposed>
  %18 = local_load %14 : <32x64xbf16>
  return
}
)";
  auto m = parse_module(text);
  verify(*m);
  const std::string printed = print(*m, {.locations = false});
  CHECK(printed == text);
  CHECK(print(*parse_module(printed), {.locations = false}) == printed);
}

TEST_CASE("shared memory ops: the verifier names a malformed use", "[ir][verifier][shared]") {
  rejects(kSetup + "  %v = local_load %view : <64x32xf16>\n", "must be a tile of !smem<64x32xbf16, #nvmma<64>>'s shape and element type");
  rejects(kSetup + "  %v = local_load %view : <32x64xbf16>\n", "'local_load' result must be a tile");
  rejects(kSetup + "  %t = constant {value = 0.0} : <64x64xbf16>\n  local_store %view, %t\n", "'local_store' value must be a tile");
  rejects(kSetup + "  %v = local_load %ptrs : <64x32xbf16>\n", "operand #0 must be a shared buffer");
  rejects(kSetup + "  %s = smem_index %view, %n : !smem<64xbf16, #nvmma<64>>\n", "smem_index of !smem<64x32xbf16, #nvmma<64>> must give");
  rejects(kSetup + "  %c = constant {value = 0} : i64\n  %s = smem_index %buf, %c : !smem<64x32xbf16, #nvmma<64>>\n",
          "smem_index slot must be an i32 scalar");
  rejects(kSetup + "  %s = smem_index %buf, %n : !smem<64x32xbf16, #padded<16>>\n", "must give !smem<64x32xbf16, #nvmma<64>>");
  rejects(kSetup + "  %q = splat %p : <32x64xptr<bf16>>\n  async_copy %view, %q\n", "async_copy pointers must be a tile of ptr<bf16>");
  rejects(kSetup + "  %m = constant {value = 1} : <64x32xi32>\n  async_copy %view, %ptrs, %m\n", "mask must be i1 of the pointer's shape");
  rejects(kSetup + "  async_wait\n", "async_wait needs {pending = N}");
  // Holes a buffer could slip through: a slot or a mask that is itself a buffer.
  rejects(kSetup + "  %s = local_alloc : !smem<1xi32>\n  %v2 = smem_index %buf, %s : !smem<64x32xbf16, #nvmma<64>>\n",
          "smem_index slot must be an i32 scalar");
  rejects(kSetup + "  %m = local_alloc : !smem<64x32xi1>\n  async_copy %view, %ptrs, %m\n", "mask must be i1 of the pointer's shape");
  // One buffer per program: never allocated inside a loop or a branch.
  rejects(kSetup + "  %c0 = constant {value = 0} : i32\n  %c1 = constant {value = 1} : i32\n"
                   "  for %c0, %n, %c1 {\n  ^bb(%i: i32):\n    %b = local_alloc : !smem<16xf32>\n    yield\n  }\n",
          "local_alloc must be at the kernel's top level");
  // A dot reads each operand from a view or a tile (one of each verifies), each shaped as a tile,
  // and K must agree whichever it is.
  verify(*parse_module(kHeader + kSetup + "  %b = constant {value = 0.0} : <32x16xbf16>\n  %c = constant {value = 0.0} : <64x16xf32>\n"
                                          "  %d = dot %view, %b, %c : <64x16xf32>\n  return\n}\n"));
  rejects(kSetup + "  %b = constant {value = 0.0} : <16x16xbf16>\n  %c = constant {value = 0.0} : <64x16xf32>\n"
                   "  %d = dot %view, %b, %c : <64x16xf32>\n",
          "'dot' needs a's columns to match b's rows (K)");
  rejects(kSetup + "  %a = local_alloc : !smem<16x24xf16>\n  %b = local_alloc : !smem<24x16xf16>\n"
                   "  %c = constant {value = 0.0} : <16x16xf32>\n  %d = dot %a, %b, %c : <16x16xf32>\n",
          "dim 1 of !smem<16x24xf16> is 24, not a power of two");
  rejects(kSetup + "  %b = local_alloc : !smem<32x16xbf16>\n  %c = local_alloc : !smem<64x16xf32>\n"
                   "  %d = dot %view, %b, %c : <64x16xf32>\n",
          "operand #2 is a shared buffer");
  rejects(kSetup + "  async_wait {pending = -1}\n", "async_wait needs {pending = N}");
  // smem_trans: a 2-D view read the other way round, its shape and encoding's `transposed` flipped;
  // nothing writes through it.
  rejects(kSetup + "  %t = smem_trans %view : !smem<32x64xbf16, #nvmma<64>>\n", "smem_trans of !smem<64x32xbf16, #nvmma<64>> must give !smem<32x64xbf16, #nvmma<64, transposed>>");
  rejects(kSetup + "  %t = smem_trans %buf : !smem<64x32xbf16, #nvmma<64>>\n", "smem_trans needs a 2-D view");
  rejects(kSetup + "  %t = smem_trans %view : !smem<32x64xbf16, #nvmma<64, transposed>>\n  async_copy %t, %ptrs\n",
          "'async_copy' takes a view smem_trans made");
  rejects(kSetup + "  %t = smem_trans %view : !smem<32x64xbf16, #nvmma<64, transposed>>\n"
                   "  %v = constant {value = 0.0} : <32x64xbf16>\n  local_store %t, %v\n",
          "'local_store' takes a view smem_trans made");
  // No other op takes or makes a shared buffer, nor does a loop carry one.
  rejects(kSetup + "  %s = add %view, %view : !smem<64x32xbf16, #nvmma<64>>\n", "only the shared-memory ops");
  rejects(kSetup + "  %c0 = constant {value = 0} : i32\n  %c1 = constant {value = 1} : i32\n"
                   "  %r = for %c0, %n, %c1, %view : !smem<64x32xbf16, #nvmma<64>> {\n"
                   "  ^bb(%i: i32, %v: !smem<64x32xbf16, #nvmma<64>>):\n    yield %v\n  }\n",
          "shared buffer");
}

TEST_CASE("shared memory ops: a malformed buffer type is refused at its text", "[ir][parser][shared]") {
  auto parse_fails = [](const std::string& type, const std::string& problem) {
    INFO(type);
    REQUIRE_THROWS_WITH(parse_module(kHeader + "  %b = local_alloc : " + type + "\n  return\n}\n"), Catch::Contains(problem));
  };
  parse_fails("!smem<64x32xbf16, #nvmma<48>>", "the swizzle is 32, 64 or 128 bytes");
  parse_fails("!smem<64x32xbf16, #padded<6>>", "a positive multiple of 4 bytes");
  parse_fails("!smem<64xbf16, #nvmma<128, transposed>>", "a transposed encoding needs 2 dims or more");
  parse_fails("!smem<64xbf16, #padded<16, transposed>>", "a transposed encoding needs 2 dims or more");
  parse_fails("!smem<0x32xbf16>", "not positive");
  parse_fails("!smem<2x2x2x2x2xf32>", "1 to 4 dims");
  parse_fails("!smem<64xptr<f32>>", "numbers, not pointers: !smem<64xptr<f32>>");
  parse_fails("!smem<4096x4096xf32>", "more than 2^22 elements");
  parse_fails("!smem<xf32>", "needs at least one dimension");
  parse_fails("!tile<4xf32>", "smem");
}

TEST_CASE("shared memory ops: every pass keeps a dot over fp8 views valid", "[ir][passes][shared]") {
  // legalize-fp8 widens fp8 values that are computed on; a view is read in place, never cast.
  const std::string text = R"(kernel @k(%c: ptr<f32>) num_warps = 4 {
  %0 = local_alloc : !smem<2x16x16xf8e4m3, #padded<16>>
  %1 = constant {value = 0} : i32
  %2 = constant {value = 1} : i32
  %3 = smem_index %0, %1 : !smem<16x16xf8e4m3, #padded<16>>
  %4 = smem_index %0, %2 : !smem<16x16xf8e4m3, #padded<16>>
  %5 = constant {value = 0.0} : <16x16xf32>
  %6 = dot %3, %4, %5 : <16x16xf32>
  %7 = splat %c : <16x16xptr<f32>>
  store %7, %6
  return
}
)";
  for (const std::string& pass : tessera::transforms::pass_names()) {
    INFO(pass);
    auto m = parse_module(text);
    verify(*m);
    tessera::transforms::run_pass_pipeline(*m, std::vector<std::string>{pass});  // verifies after the pass
    CHECK_THAT(print(*m, {.locations = false}), Catch::Contains("dot %"));
  }
}

TEST_CASE("shared memory ops: the layout pass gives a dot's buffers their encoding, or names the dot that contradicts it",
          "[ir][passes][shared]") {
  auto text = [](const std::string& encoding) {
    return "kernel @k(%c: ptr<f32>) num_warps = 4 {\n"
           "  %0 = local_alloc : !smem<2x64x16xbf16" + encoding + ">\n"
           "  %1 = local_alloc : !smem<2x16x64xbf16" + encoding + ">\n"
           "  %2 = constant {value = 0} : i32\n"
           "  %3 = smem_index %0, %2 : !smem<64x16xbf16" + encoding + ">\n"
           "  %4 = smem_index %1, %2 : !smem<16x64xbf16" + encoding + ">\n"
           "  %5 = constant {value = 0.0} : <64x64xf32>\n"
           "  %6 = dot %3, %4, %5 : <64x64xf32> loc(\"k.cpp\":9:3)\n"
           "  %7 = splat %c : <64x64xptr<f32>>\n"
           "  store %7, %6\n"
           "  return\n}\n";
  };
  auto coalesce = [](const std::string& ir, const char* arch) {
    auto m = parse_module(ir);
    verify(*m);
    tessera::transforms::run_pass_pipeline(*m, std::vector<std::string>{"coalesce"}, tessera::transforms::pass_context(*m, arch));
    return print(*m, {.locations = false});
  };
  // mma.sync reads rows padded by 16 bytes; wgmma a swizzle as wide as the rows (32 and 128 bytes
  // here), and no fence: no local_store writes these buffers (a fence follows each one that does:
  // tests/ir/coalesce_sm90a_dot_invariant_operand.tir).
  const std::string sm80 = coalesce(text(""), "sm_80");
  CHECK_THAT(sm80, Catch::Contains("local_alloc : !smem<2x64x16xbf16, #padded<16>>"));
  CHECK_THAT(sm80, Catch::Contains("smem_index %1, %2 : !smem<16x64xbf16, #padded<16>>"));
  CHECK_THAT(sm80, !Catch::Contains("fence_async_shared"));
  const std::string sm90 = coalesce(text(""), "sm_90a");
  CHECK_THAT(sm90, Catch::Contains("local_alloc : !smem<2x64x16xbf16, #nvmma<32>>"));
  CHECK_THAT(sm90, Catch::Contains("local_alloc : !smem<2x16x64xbf16, #nvmma<128>>"));
  CHECK_THAT(sm90, !Catch::Contains("fence_async_shared"));
  CHECK_THROWS_WITH(coalesce(text(", #nvmma<32>"), "sm_80"),
                    Catch::Contains("dot at k.cpp:9:3 reads a shared buffer") && Catch::Contains("as #padded<16>"));
}

TEST_CASE("shared memory ops: a dot over views is neither merged nor moved past writes to them", "[ir][passes][shared]") {
  // Two dots of the same operands around a local_store read different contents: cse keeps both;
  // the first's result is used after a loop that stores into its view: sink leaves it above.
  const std::string text = R"(kernel @k(%c: ptr<f32>, %n: i32) num_warps = 4 {
  %0 = local_alloc : !smem<16x16xf16>
  %1 = local_alloc : !smem<16x16xf16>
  %2 = constant {value = 1.0} : <16x16xf16>
  %3 = constant {value = 2.0} : <16x16xf16>
  local_store %0, %2
  local_store %1, %2
  %4 = constant {value = 0.0} : <16x16xf32>
  %5 = dot %0, %1, %4 : <16x16xf32>
  local_store %0, %3
  %6 = dot %0, %1, %4 : <16x16xf32>
  %7 = constant {value = 0} : i32
  %8 = constant {value = 1} : i32
  for %7, %n, %8 {
  ^bb(%9: i32):
    local_store %0, %2
    yield
  }
  %10 = add %5, %6 : <16x16xf32>
  %11 = splat %c : <16x16xptr<f32>>
  store %11, %10
  return
}
)";
  auto m = parse_module(text);
  verify(*m);
  tessera::transforms::run_pass_pipeline(*m, std::vector<std::string>{"cse", "hoist-loads", "sink"});
  const std::string out = print(*m, {.locations = false});
  INFO(out);
  std::size_t dots = 0;
  for (std::size_t at = out.find("= dot "); at != std::string::npos; at = out.find("= dot ", at + 1)) ++dots;
  CHECK(dots == 2);
  CHECK(out.find("= dot ") < out.find("local_store %0, %3"));  // the first dot still reads 1.0
  CHECK(out.rfind("= dot ") < out.find("for "));                // both before the loop's stores
}
