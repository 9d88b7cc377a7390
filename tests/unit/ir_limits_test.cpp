// Triton's limits, enforced where IR enters: at most 2^20 elements per tile and power-of-two dims
// (the parser with the text position, the verifier with the op's location and printed form),
// element counts that cannot wrap, layouts the layout math can divide by, and a bound on how
// deeply regions nest (the parser, verifier, printer and passes recurse once per level).
#include <catch2/catch.hpp>

#include <string>

#include "jit/ir/parser.hpp"
#include "jit/ir/printer.hpp"
#include "jit/ir/verifier.hpp"
#include "jit/transforms/passes.hpp"
#include "tessera/error.hpp"

using namespace tessera::ir;
using Catch::Contains;

namespace {

std::unique_ptr<Module> parse(const std::string& body, const std::string& args = "%p: ptr<f32>, %n: i32") {
  return parse_module("kernel @k(" + args + ") num_warps = 4 {\n" + body + "}\n", "lim.tir");
}

void parse_rejects(const std::string& body, const std::string& message) {
  INFO(body);
  REQUIRE_THROWS_AS(parse(body), tessera::ProgramError);
  REQUIRE_THROWS_WITH(parse(body), Contains(message));
}

void verify_rejects(const Module& m, const std::string& message) {
  REQUIRE_THROWS_AS(verify(m), tessera::ProgramError);
  REQUIRE_THROWS_WITH(verify(m), Contains(message));
}

// A kernel whose body is one constant of `shape` made through the Builder, as the tracer makes IR
// (no parser in the way), at user.cpp:7:3.
std::unique_ptr<Module> built_constant(std::vector<std::int64_t> shape) {
  auto m = std::make_unique<Module>();
  m->name = "k";
  Builder b(&m->entry());
  b.set_loc({"user.cpp", 7, 3});
  b.int_constant(DType::I32, 1, std::move(shape));
  b.create(OpKind::Return, {}, {});
  return m;
}

}  // namespace

TEST_CASE("limits: the parser refuses non-power-of-two and oversized tiles at the type's text", "[ir][limits]") {
  parse_rejects("  %0 = constant {value = 1} : <3xi32>\n  return\n",
                "lim.tir:2:31: dim 0 of <3xi32> is 3, not a power of two");
  parse_rejects("  %0 = constant {value = 1} : <4x6xf32>\n  return\n", "dim 1 of <4x6xf32> is 6, not a power of two");
  parse_rejects("  %0 = constant {value = 1} : <1048576x2xf32>\n  return\n",
                "lim.tir:2:31: <1048576x2xf32> has 2097152 elements, more than the limit of 1048576 (2^20) elements per tile");
  parse_rejects("  %0 = constant {value = 1} : <4294967296x4294967296x4294967296xi32>\n  return\n",
                "has 2^63 or more elements, more than the limit of 1048576");
  parse_rejects("  %0 = constant {value = 1} : <0xi32>\n  return\n", "dim 0 of <0xi32> is 0, not positive");
  // In a kernel argument, a block argument and a region's result as well.
  REQUIRE_THROWS_WITH(parse("  return\n", "%t: <12xi32>"), Contains("lim.tir:1:15: dim 0 of <12xi32> is 12"));
  // Exactly the limit is fine.
  REQUIRE_NOTHROW(verify(*parse("  %0 = constant {value = 1} : <1024x1024xi8>\n  return\n")));
  REQUIRE_NOTHROW(verify(*parse("  %0 = constant {value = 1.0} : <1x1x1048576xf64>\n  return\n")));
}

TEST_CASE("limits: the verifier refuses what the tracer or a pass could build, naming the op and its loc", "[ir][limits]") {
  verify_rejects(*built_constant({3}),
                 "user.cpp:7:3: invalid IR: result #0: dim 0 of <3xi32> is 3, not a power of two\n"
                 "  in: %0 = constant {value = 1} : <3xi32>");
  verify_rejects(*built_constant({2048, 1024}),
                 "user.cpp:7:3: invalid IR: result #0: <2048x1024xi32> has 2097152 elements, more than the limit of "
                 "1048576 (2^20) elements per tile");
  // 2^32 * 2^32 wraps to 0 in 64 bits; the check must not be fooled by it.
  verify_rejects(*built_constant({std::int64_t{1} << 32, std::int64_t{1} << 32}), "has 2^63 or more elements");
  verify_rejects(*built_constant({-4}), "dim 0 of <-4xi32> is -4, not positive");
}

TEST_CASE("limits: Type::numel refuses to wrap", "[ir][limits]") {
  Type ok = Type::scalar(DType::F32).with_shape({1024, 1024});
  CHECK(ok.numel() == 1048576);
  CHECK(Type::scalar(DType::F32).numel() == 1);
  Type huge = Type::scalar(DType::F32).with_shape({std::int64_t{1} << 32, std::int64_t{1} << 32});
  REQUIRE_THROWS_AS(huge.numel(), tessera::ProgramError);
  REQUIRE_THROWS_WITH(huge.numel(), "the element count of <4294967296x4294967296xf32> overflows 64 bits");
  CHECK(tile_shape_problem(std::vector<std::int64_t>{1024, 1024}, "t").empty());
  CHECK(tile_shape_problem(std::vector<std::int64_t>{1 << 20, 2}, "t") ==
        "t has 2097152 elements, more than the limit of 1048576 (2^20) elements per tile");
  CHECK(kMaxTileElements == 1048576);
}

TEST_CASE("limits: arange bounds are i32 and its size cannot overflow", "[ir][limits]") {
  verify_rejects(*parse("  %0 = arange {end = 9223372036854775807, start = -9223372036854775808} : <4xi32>\n  return\n"),
                 "arange start = -9223372036854775808 is out of the range of i32");
  verify_rejects(*parse("  %0 = arange {end = 4294967300, start = 4294967296} : <4xi32>\n  return\n"),
                 "arange start = 4294967296 is out of the range of i32");
  REQUIRE_NOTHROW(verify(*parse("  %0 = arange {end = 2147483647, start = 2147483639} : <8xi32>\n  return\n")));
}

TEST_CASE("limits: layouts the layout math can use", "[ir][limits]") {
  auto with_layout = [](const std::string& layout) {
    return parse("  %0 = constant {value = 1} : <64x64xi32, " + layout + ">\n  return\n");
  };
  REQUIRE_NOTHROW(verify(*with_layout("#blocked<[1,4], [2,16], [4,1], [1,0]>")));
  verify_rejects(*with_layout("#blocked<[1,0], [2,16], [4,1], [1,0]>"),
                 "<unknown location>: invalid IR: result #0: layout of <64x64xi32, #blocked<[1,0], [2,16], [4,1], [1,0]>>: "
                 "size_per_thread [1] is 0, not a power of two from 1 to 1048576");
  verify_rejects(*with_layout("#blocked<[1,4], [2,8], [4,1], [1,0]>"),
                 "threads_per_warp multiply to 16, not a warp (32 or 64 lanes)");
  verify_rejects(*with_layout("#blocked<[1,4], [3,16], [4,1], [1,0]>"), "threads_per_warp [0] is 3, not a power of two");
  verify_rejects(*with_layout("#blocked<[1,4], [2,16], [8,1], [1,0]>"),
                 "warps_per_cta multiply to 8, but the kernel has num_warps = 4");
  verify_rejects(*with_layout("#blocked<[1,4], [2,16], [4,1], [1,1]>"), "order is not a permutation of its dims");
  // lane_repeat (wgmma's accumulator): printed as it was written, powers of two, one per dim.
  const std::string wgmma = "#blocked<[1,2], [8,4], [4,1], [1,0], lane_repeat = [2,1]>";
  auto repeated = with_layout(wgmma);
  REQUIRE_NOTHROW(verify(*repeated));
  REQUIRE(to_string(repeated->entry().ops.at(0)->result()->type) == "<64x64xi32, " + wgmma + ">");
  auto ones = with_layout("#blocked<[1,2], [8,4], [4,1], [1,0], lane_repeat = [1,1]>");
  REQUIRE(to_string(ones->entry().ops.at(0)->result()->type) == "<64x64xi32, #blocked<[1,2], [8,4], [4,1], [1,0]>>");
  verify_rejects(*with_layout("#blocked<[1,2], [8,4], [4,1], [1,0], lane_repeat = [3,1]>"), "lane_repeat [0] is 3, not a power of two");
  verify_rejects(*with_layout("#blocked<[1,2], [8,4], [4,1], [1,0], lane_repeat = [2]>"), "has lists of different lengths");
  // Layout entries are ints: a larger number is refused where it stands, not truncated.
  parse_rejects("  %0 = constant {value = 1} : <64x64xi32, #blocked<[1,4294967297], [2,16], [4,1], [1,0]>>\n  return\n",
                "lim.tir:2:55: a layout entry 4294967297 is out of the range of int");
}

TEST_CASE("limits: num_warps as the launch allows it", "[ir][limits]") {
  auto m = parse_module("kernel @k() num_warps = 64 {\n  return\n}\n");
  verify_rejects(*m, "invalid IR: kernel @k: num_warps must be a power of two from 1 to 32, got 64");
  REQUIRE_THROWS_WITH(parse_module("kernel @k() num_warps = 4294967300 {\n  return\n}\n", "w.tir"),
                      "w.tir:1:25: num_warps 4294967300 is out of the range of int");
}

namespace {

// `depth` nested ifs (or for loops) around a store.
std::string nested(int depth, bool loops) {
  std::string text = "kernel @deep(%p: ptr<i32>, %c: i1, %n: i32) num_warps = 4 {\n";
  for (int i = 0; i < depth; ++i) text += loops ? "for %n, %n, %n {\n^bb(%i" + std::to_string(i) + ": i32):\n" : "if %c {\n";
  text += "store %p, %n\n";
  for (int i = 0; i < depth; ++i) text += loops ? "yield\n}\n" : "yield\n} else {\nyield\n}\n";
  return text + "return\n}\n";
}

}  // namespace

TEST_CASE("limits: deep nesting is a parse error, not a stack overflow", "[ir][limits]") {
  static_assert(kMaxRegionDepth == 512);
  for (bool loops : {false, true}) {
    INFO((loops ? "for" : "if"));
    // 20,000 levels crashed tessera-opt by stack overflow.
    REQUIRE_THROWS_AS(parse_module(nested(20000, loops), "deep.tir"), tessera::ProgramError);
    REQUIRE_THROWS_WITH(parse_module(nested(20000, loops), "deep.tir"),
                        Contains(loops ? "deep.tir:1026:1: regions nested more than 512 deep"
                                       : "deep.tir:514:1: regions nested more than 512 deep"));
    REQUIRE_THROWS_WITH(parse_module(nested(kMaxRegionDepth + 1, loops)), Contains("regions nested more than 512 deep"));
    // The bound itself parses, verifies, prints back and goes through every pass.
    auto m = parse_module(nested(kMaxRegionDepth, loops));
    REQUIRE_NOTHROW(verify(*m));
    CHECK(print(*parse_module(print(*m))) == print(*m));
    std::vector<std::string> all = tessera::transforms::pass_names();
    REQUIRE_NOTHROW(tessera::transforms::run_pass_pipeline(*m, all));
  }
}

TEST_CASE("limits: the verifier bounds the depth of IR built without the parser", "[ir][limits]") {
  auto m = std::make_unique<Module>();
  m->name = "k";
  Value* c = m->entry().add_arg(Type::scalar(DType::I1), "c");
  m->arg_facts.assign(1, {});
  Block* block = &m->entry();
  for (int i = 0; i <= kMaxRegionDepth; ++i) {
    Builder b(block);
    b.set_loc({"user.cpp", 10 + i, 1});
    Op* op = b.create(OpKind::If, {c}, {}, {}, 2);
    b.create(i == 0 ? OpKind::Return : OpKind::Yield, {}, {});  // after the nested if
    Builder(op->regions[1]->block.get()).create(OpKind::Yield, {}, {});
    block = op->regions[0]->block.get();
  }
  Builder(block).create(OpKind::Yield, {}, {});
  verify_rejects(*m, "user.cpp:522:1: invalid IR: regions nested more than 512 deep\n  in: if %c {...");
}
