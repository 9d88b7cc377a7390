// The verifier names the specific problem, the op's location and its printed form.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "jit/ir/parser.hpp"
#include "jit/ir/printer.hpp"
#include "jit/ir/verifier.hpp"
#include "tessera/error.hpp"

using namespace tessera::ir;

namespace {

void rejects(const std::string& body, const std::string& problem, const std::string& args = "%p: ptr<f32>, %n: i32") {
  auto m = parse_module("kernel @k(" + args + ") num_warps = 4 {\n" + body + "}\n", "bad.tir");
  INFO(body);
  REQUIRE_THROWS_AS(verify(*m), tessera::ProgramError);
  REQUIRE_THROWS_WITH(verify(*m), Catch::Contains(problem));
}

}  // namespace

TEST_CASE("verifier: accepts a well-formed kernel with control flow", "[ir][verifier]") {
  auto m = parse_module(R"(kernel @k(%p: ptr<f32>, %n: i32) num_warps = 4 {
  %0 = constant {value = 0} : i32
  %1 = constant {value = 1} : i32
  %2 = constant {value = 0.0} : f32
  %3 = for %0, %n, %1, %2 : f32 {
  ^bb(%4: i32, %5: f32):
    %6 = cmp_lt %4, %1 : i1
    %7 = if %6 : f32 {
      %8 = addptr %p, %4 : ptr<f32>
      %9 = load %8 : f32
      yield %9
    } else {
      yield %5
    }
    yield %7
  }
  store %p, %3
  return
}
)");
  REQUIRE_NOTHROW(verify(*m));
}

TEST_CASE("verifier: reports the location and the printed op", "[ir][verifier]") {
  rejects("  %0 = constant {value = 1} : i32\n  %1 = constant {value = 1.0} : f32\n"
          "  %2 = add %0, %1 : i32  loc(\"user.cpp\":12:5)\n  return\n",
          "user.cpp:12:5: invalid IR: operand types differ: i32 vs f32\n  in: %2 = add %0, %1 : i32");
}

TEST_CASE("verifier: operand counts come from ops.def", "[ir][verifier]") {
  rejects("  %0 = constant {value = 1} : i32\n  %1 = add %0 : i32\n  return\n", "'add' expects 2 operand(s), got 1");
  rejects("  %0 = load %p, %n, %n, %n : f32\n  return\n", "'load' expects 1 to 3 operand(s), got 4");
  rejects("  %0 = store %p, %n : i32\n  return\n", "'store' must have 0 results, got 1");
}

TEST_CASE("verifier: type rules", "[ir][verifier]") {
  rejects("  %0 = arange {end = 100, start = 0} : <128xi32>\n  return\n",
          "arange size end - start = 100 must be a positive power of two");
  rejects("  %0 = constant {value = 1} : i32\n  %1 = cmp_lt %0, %0 : i32\n  return\n", "compare result must be i1, got i32");
  rejects("  %0 = splat %p : <64xptr<f32>>\n  %1 = constant {value = 1} : <32xi1>\n  %2 = load %0, %1 : <64xf32>\n  return\n",
          "mask must be i1 of the pointer's shape, got <32xi1> for <64xptr<f32>>");
  rejects("  %0 = load %p : f16\n  return\n", "'load' value f16 does not match the pointee of ptr<f32>");
  rejects("  %0 = constant {value = 1.0} : f32\n  store %p, %0, %n\n  return\n", "mask must be i1");
  rejects("  %0 = constant {value = 1} : <4x1xi32>\n  %1 = broadcast %0 : <4x8x1xi32>\n  return\n",
          "broadcast needs a tile of the result's rank");
  rejects("  %0 = constant {value = 1} : <4x2xi32>\n  %1 = broadcast %0 : <4x8xi32>\n  return\n",
          "cannot broadcast dim 1 of size 2 to 8");
  rejects("  %0 = constant {value = 1} : <4xi32>\n  %1 = expand_dims %0 {axis = 1} : <1x4xi32>\n  return\n",
          "expand_dims result shape must be [4x1], got <1x4xi32>");
  rejects("  %0 = constant {value = 1} : <4xi1>\n  %1 = constant {value = 1.0} : <4xf32>\n"
          "  %2 = select %0, %1, %0 : <4xf32>\n  return\n", "select operand types differ");
  rejects("  %0 = constant {value = 256} : u8\n  return\n", "constant 256 does not fit in u8");
  rejects("  %0 = constant {value = 1.0} : f32\n  %1 = xor %0, %0 : f32\n  return\n", "'xor' needs integer operands");
  rejects("  %0 = addptr %p, %p : ptr<f32>\n  return\n", "addptr offset must be an integer");
  rejects("  %0 = program_id {axis = 3} : i32\n  return\n", "axis must be 0, 1 or 2, got 3");
  rejects("  %0 = constant {value = 1.0} : <4x8xf32>\n  %1 = constant {value = 0} : <8x4xi32>\n"
          "  %2 = gather %0, %1 {axis = 1} : <8x4xf32>\n  return\n", "differs from src <4x8xf32> in dim 0");
  rejects("  %0 = constant {value = 1.0} : <4x8xf32>\n  %1 = constant {value = 0.0} : <4x2xf32>\n"
          "  %2 = gather %0, %1 {axis = 1} : <4x2xf32>\n  return\n", "gather index must be an integer tile of rank 2");
}

TEST_CASE("verifier: bitcast keeps the width, and pointers stay pointers", "[ir][verifier]") {
  auto m = parse_module(R"(kernel @k(%p: ptr<f32>, %n: i32) num_warps = 4 {
  %0 = bitcast %p : ptr<i16>
  %1 = bitcast %n : f32
  %2 = bitcast %1 : u32
  %3 = constant {value = 1} : <4xi16>
  %4 = bitcast %3 : <4xbf16>
  return
}
)", "ok.tir");
  CHECK_NOTHROW(verify(*m));
  rejects("  %0 = bitcast %n : f64\n  return\n", "bitcast between 32 bits and 64 bits");
  rejects("  %0 = bitcast %p : i64\n  return\n", "a pointer bitcasts to another pointer only");
  rejects("  %0 = constant {value = 1} : i1\n  %1 = bitcast %0 : u8\n  return\n", "a mask has no bit width");
  rejects("  %0 = constant {value = 1} : <4xi32>\n  %1 = bitcast %0 : <2xi32>\n  return\n", "bitcast changes the shape");
}

TEST_CASE("verifier: assume states runs of ints or pointers, one entry per dim", "[ir][verifier]") {
  auto m = parse_module(R"(kernel @k(%p: ptr<f32>, %n: i32) num_warps = 4 {
  %0 = arange {start = 0, end = 64} : <64xi32>
  %1 = assume %0 {contiguity = [16], divisibility = [16]} : <64xi32>
  %2 = assume %n {divisibility = [8]} : i32
  %3 = splat %p : <64xptr<f32>>
  %4 = addptr %3, %1 : <64xptr<f32>>
  %5 = assume %4 {divisibility = [16]} : <64xptr<f32>>
  return
}
)", "ok.tir");
  CHECK_NOTHROW(verify(*m));
  const std::string range = "  %0 = arange {start = 0, end = 64} : <64xi32>\n";
  rejects(range + "  %1 = assume %0 : <64xi32>\n  return\n", "assume needs a contiguity or a divisibility");
  rejects(range + "  %1 = assume %0 {contiguity = [24]} : <64xi32>\n  return\n", "a power of two dividing the dim");
  rejects(range + "  %1 = assume %0 {contiguity = [128]} : <64xi32>\n  return\n", "a power of two dividing the dim");
  rejects(range + "  %1 = assume %0 {divisibility = [0]} : <64xi32>\n  return\n", "it must be at least 1");
  rejects(range + "  %1 = assume %0 {divisibility = [16, 1]} : <64xi32>\n  return\n", "has 2 entries");
  rejects(range + "  %1 = assume %0 {divisibility = 16} : <64xi32>\n  return\n", "integer-list attributes");
  rejects(range + "  %1 = assume %0 {divisibility = [16]} : <64xi64>\n  return\n", "differs from operand type");
  rejects("  %0 = constant {value = 1.0} : f32\n  %1 = assume %0 {divisibility = [2]} : f32\n  return\n",
          "applies to integers and pointers");
}

TEST_CASE("verifier: loads and stores take PTX's cache modifiers or eviction policies, one of them", "[ir][verifier]") {
  auto m = parse_module(R"(kernel @k(%p: ptr<f32>, %n: i32) num_warps = 4 {
  %0 = load %p {cache = "cg"} : f32
  %1 = load %p {eviction = "evict_last"} : f32
  store %p, %0 {cache = "cs"}
  store %p, %1 {eviction = "evict_first"}
  return
}
)", "ok.tir");
  CHECK_NOTHROW(verify(*m));
  rejects("  %0 = load %p {cache = \"cs\"} : f32\n  return\n", "a load has no cache modifier 'cs' (known: ca, cg, cv)");
  rejects("  %0 = load %p : f32\n  store %p, %0 {cache = \"cv\"}\n  return\n",
          "a store has no cache modifier 'cv' (known: wb, cg, cs, wt)");
  rejects("  %0 = load %p {eviction = \"evict_soon\"} : f32\n  return\n", "no eviction policy 'evict_soon'");
  rejects("  %0 = load %p {cache = \"cg\", eviction = \"evict_last\"} : f32\n  return\n", "not both");
  rejects("  %0 = load %p {cache = 1} : f32\n  return\n", "'load' cache must be a string");
}

TEST_CASE("verifier: print takes a printable prefix and values of up to 4 dims", "[ir][verifier][print]") {
  auto m = parse_module(R"(kernel @k(%p: ptr<f32>, %n: i32) num_warps = 4 {
  %0 = arange {start = 0, end = 64} : <64xi32>
  %1 = reshape %0 : <4x16xi32>
  print {prefix = " hello"}
  print %n {prefix = " n: "}
  print %1, %p {prefix = " 100%: "}
  return
}
)", "ok.tir");
  CHECK_NOTHROW(verify(*m));
  const std::string text = print(*m);
  CHECK(text.find("print %1, %p {prefix = \" 100%: \"}") != std::string::npos);
  CHECK(print(*parse_module(text, "again.tir")) == text);
  rejects("  print %n\n  return\n", "print needs a string attribute 'prefix'");
  rejects("  print %n {prefix = 3}\n  return\n", "print needs a string attribute 'prefix'");
  rejects("  print %n {prefix = \"a\\tb\"}\n  return\n", "printable ASCII");
  rejects("  %0 = arange {start = 0, end = 32} : <32xi32>\n  %1 = reshape %0 : <2x2x2x2x2xi32>\n"
          "  print %1 {prefix = \"\"}\n  return\n",
          "tiles of more than 4 dims cannot be printed");
}

TEST_CASE("verifier: assert takes an i1 condition of up to 4 dims and a printable message", "[ir][verifier][assert]") {
  auto m = parse_module(R"ir(kernel @k(%p: ptr<f32>, %n: i32) num_warps = 4 {
  %0 = arange {start = 0, end = 64} : <64xi32>
  %1 = splat %n : <64xi32>
  %2 = cmp_lt %0, %1 : <64xi1>
  assert %2 {message = "offs < n (100%)"}
  %3 = constant {value = 1} : i1
  assert %3 {message = ""}
  return
}
)ir", "ok.tir");
  CHECK_NOTHROW(verify(*m));
  const std::string text = print(*m);
  CHECK(text.find("assert %2 {message = \"offs < n (100%)\"}") != std::string::npos);
  CHECK(print(*parse_module(text, "again.tir")) == text);
  rejects("  assert %n {message = \"m\"}\n  return\n", "assert needs an i1 condition, got i32");
  rejects("  %0 = constant {value = 1} : i1\n  assert %0\n  return\n", "assert needs a string attribute 'message'");
  rejects("  %0 = constant {value = 1} : i1\n  assert %0 {message = \"a\\nb\"}\n  return\n", "printable ASCII");
  rejects("  assert {message = \"m\"}\n  return\n", "'assert' expects 1 operand(s), got 0");
  rejects("  %0 = arange {start = 0, end = 32} : <32xi32>\n  %1 = reshape %0 : <2x2x2x2x2xi32>\n"
          "  %2 = cmp_lt %1, %1 : <2x2x2x2x2xi1>\n  assert %2 {message = \"m\"}\n  return\n",
          "conditions of more than 4 dims cannot be checked");
}

TEST_CASE("verifier: a cast rounds toward zero only as a float downcast", "[ir][verifier][rounding]") {
  auto m = parse_module("kernel @k(%p: ptr<f32>, %n: i32) num_warps = 4 {\n  %0 = constant {value = 1.5} : f64\n"
                        "  %1 = cast %0 {rounding = \"rtz\"} : bf16\n  return\n}\n",
                        "ok.tir");
  CHECK_NOTHROW(verify(*m));
  rejects("  %0 = cast %n {rounding = \"rtz\"} : f16\n  return\n", "applies to float downcasts, not i32 to f16");
  rejects("  %0 = constant {value = 1.5} : f16\n  %1 = cast %0 {rounding = \"rtz\"} : f32\n  return\n",
          "applies to float downcasts, not f16 to f32");
  rejects("  %0 = constant {value = 1.5} : f32\n  %1 = cast %0 {rounding = \"rd\"} : f16\n  return\n",
          "cast's 'rounding' attribute is \"rtz\"");
}

TEST_CASE("verifier: a div is approximate and an exp or exp2 flushes subnormals only in f32", "[ir][verifier][rounding]") {
  auto m = parse_module("kernel @k(%p: ptr<f32>, %n: i32) num_warps = 4 {\n  %0 = constant {value = 1.5} : f32\n"
                        "  %1 = div %0, %0 {rounding = \"approx\"} : f32\n  %2 = exp %1 {ftz = 1} : f32\n  %3 = exp2 %2 {ftz = 1} : f32\n"
                        "  return\n}\n",
                        "ok.tir");
  CHECK_NOTHROW(verify(*m));
  rejects("  %0 = constant {value = 1.5} : f64\n  %1 = div %0, %0 {rounding = \"approx\"} : f64\n  return\n",
          "div {rounding = \"approx\"} needs f32 operands, got f64");
  rejects("  %0 = constant {value = 1.5} : f32\n  %1 = mul %0, %0 {rounding = \"approx\"} : f32\n  return\n",
          "'mul' takes no 'rounding' attribute");
  rejects("  %0 = constant {value = 1.5} : f32\n  %1 = log %0 {ftz = 1} : f32\n  return\n",
          "'ftz' applies to exp and exp2 of f32 only, not 'log' of f32");
  rejects("  %0 = constant {value = 1.5} : f16\n  %1 = exp %0 {ftz = 1} : f16\n  return\n",
          "'ftz' applies to exp and exp2 of f32 only, not 'exp' of f16");
  rejects("  %0 = constant {value = 1.5} : bf16\n  %1 = exp2 %0 {ftz = 1} : bf16\n  return\n",
          "'ftz' applies to exp and exp2 of f32 only, not 'exp2' of bf16");
}

TEST_CASE("verifier: do_while yields its condition, then the carried values", "[ir][verifier]") {
  const std::string ok = R"(kernel @k(%p: ptr<f32>, %n: i32) num_warps = 4 {
  %0 = constant {value = 0} : i32
  %1 = do_while %0 : i32 {
  ^bb(%2: i32):
    %3 = constant {value = 1} : i32
    %4 = add %2, %3 : i32
    %5 = cmp_lt %4, %n : i1
    yield %5, %4
  }
  return
}
)";
  auto m = parse_module(ok, "ok.tir");
  CHECK_NOTHROW(verify(*m));
  CHECK(print(*m, {.locations = false}) == ok);  // the printer writes what the parser reads
  rejects("  %0 = constant {value = 0} : i32\n  %1 = do_while %0 : i32 {\n  ^bb(%2: i32):\n    yield %2, %2\n  }\n  return\n",
          "region #0 yields i32 at position 0, expected i1");
  rejects("  %0 = constant {value = 0} : i32\n  %1 = do_while %0 : i32 {\n  ^bb(%2: i32):\n    %3 = cmp_lt %2, %n : i1\n"
          "    yield %3\n  }\n  return\n", "region #0 yields 1 value(s), expected 2");
  rejects("  %0 = constant {value = 0} : i32\n  %1 = do_while %0 : i32 {\n    %3 = cmp_lt %0, %n : i1\n"
          "    yield %3, %0\n  }\n  return\n", "do_while body must have 1 block argument(s)");
}

TEST_CASE("verifier: for and if arities and types", "[ir][verifier]") {
  rejects("  %0 = constant {value = 0} : i32\n  %1 = constant {value = 0.0} : f32\n"
          "  %2 = for %0, %n, %0, %1 : f32 {\n  ^bb(%3: i32, %4: f32):\n    yield %3\n  }\n  return\n",
          "region #0 yields i32 at position 0, expected f32");
  rejects("  %0 = constant {value = 0} : i32\n  %1 = for %0, %n, %0, %0 : i32 {\n  ^bb(%2: i32):\n    yield %2\n  }\n  return\n",
          "for body must have 2 block arguments (iv, carried...), got 1");
  rejects("  %0 = constant {value = 0} : i32\n  %1 = for %0, %n, %0 : i32 {\n  ^bb(%2: i32):\n    yield\n  }\n  return\n",
          "for carries 0 value(s) but has 1 result(s)");
  rejects("  if %n {\n    yield\n  } else {\n    yield\n  }\n  return\n", "if condition must be a scalar i1, got i32");
  rejects("  %0 = constant {value = 1} : i1\n  %1 = if %0 : i32 {\n    yield %n\n  } else {\n    yield\n  }\n  return\n",
          "region #1 yields 0 value(s), expected 1");
  for (const char* stages : {"0", "9", "2.0"})
    rejects(fmt::format("  %0 = constant {{value = 1}} : i32\n  for %0, %n, %0 {{num_stages = {}}} {{\n  ^bb(%1: i32):\n    yield\n  }}\n"
                        "  return\n",
                        stages),
            "for's num_stages must be an integer from 1 to 8");
}

TEST_CASE("verifier: terminators and placement", "[ir][verifier]") {
  rejects("  %0 = constant {value = 1} : i32\n", "the body of kernel @k must end in return, found %0 = constant");
  rejects("  %0 = constant {value = 1} : i1\n  if %0 {\n    %1 = constant {value = 1} : i32\n  } else {\n    yield\n  }\n  return\n",
          "region #0 of 'if' must end in yield");
  rejects("  %0 = constant {value = 1} : i1\n  if %0 {\n    yield\n    yield\n  } else {\n    yield\n  }\n  return\n",
          "yield must be the last op of its region");
  rejects("  return\n  return\n", "return must be the last op of the kernel body");
}

TEST_CASE("verifier: uses must be dominated by their definitions", "[ir][verifier]") {
  // The parser cannot express these (it resolves names by scope), so build them directly.
  Module m;
  m.name = "k";
  Block& e = m.entry();
  Builder b(&e);
  Value* one = b.int_constant(DType::I32, 1);
  Value* later = nullptr;
  Op* add = b.create(OpKind::Add, {one, one}, {Type::scalar(DType::I32)});
  later = b.int_constant(DType::I32, 2);
  add->operands[1] = later;  // used before it is defined
  b.create(OpKind::Return, {}, {});
  REQUIRE_THROWS_WITH(verify(m), Catch::Contains("operand #1 (i32) is not defined before this use") &&
                                     Catch::Contains("in: %1 = add %0, %2 : i32"));

  Module r;
  r.name = "k";
  Builder rb(&r.entry());
  Value* c = rb.int_constant(DType::I1, 1);
  Op* branch = rb.create(OpKind::If, {c}, {}, {}, 2);
  Builder inner(branch->regions[0]->block.get());
  Value* hidden = inner.int_constant(DType::I32, 3);
  inner.create(OpKind::Yield, {}, {});
  Builder(branch->regions[1]->block.get()).create(OpKind::Yield, {}, {});
  rb.create(OpKind::Add, {hidden, hidden}, {Type::scalar(DType::I32)});  // escapes its region
  rb.create(OpKind::Return, {}, {});
  REQUIRE_THROWS_WITH(verify(r), Catch::Contains("not visible in this region"));
}

TEST_CASE("verifier: module header", "[ir][verifier]") {
  auto m = parse_module("kernel @k(%n: i32) num_warps = 3 {\n  return\n}\n");
  REQUIRE_THROWS_WITH(verify(*m), Catch::Contains("num_warps must be a power of two from 1 to 32, got 3"));
}

TEST_CASE("verifier: dot shapes, element types and sizes", "[ir][verifier][dot]") {
  const std::string tiles = "  %0 = constant {value = 0.0} : <16x32xf16>\n"
                            "  %1 = constant {value = 0.0} : <32x16xf16>\n"
                            "  %2 = constant {value = 0.0} : <16x16xf32>\n";
  auto m = parse_module("kernel @k() num_warps = 4 {\n" + tiles + "  %3 = dot %0, %1, %2 : <16x16xf32>\n  return\n}\n", "ok.tir");
  CHECK_NOTHROW(verify(*m));
  rejects(tiles + "  %3 = dot %1, %1, %2 : <16x16xf32>\n  return\n", "'dot' needs a's columns to match b's rows (K)");
  rejects(tiles + "  %3 = dot %0, %1, %2 : <16x16xf16>\n  return\n", "dot result must be <16x16xf32>");
  rejects("  %0 = constant {value = 0} : <16x16xi32>\n  %1 = constant {value = 0} : <16x16xi32>\n"
          "  %2 = dot %0, %0, %1 : <16x16xi32>\n  return\n",
          "'dot' supports f8e4m3, f8e5m2, f16, bf16 or f32 operands with an f32 accumulator and i8 operands with an "
          "i32 accumulator");
  rejects("  %0 = constant {value = 0.0} : <8x16xf16>\n  %1 = constant {value = 0.0} : <16x16xf16>\n"
          "  %2 = constant {value = 0.0} : <8x16xf32>\n  %3 = dot %0, %1, %2 : <8x16xf32>\n  return\n",
          "'dot' needs M, N and K of at least 16");
  rejects(tiles + "  %3 = constant {value = 0.0} : <16x32xbf16>\n  %4 = dot %3, %1, %2 : <16x16xf32>\n  return\n",
          "'dot' needs operands of one element type");
  // input_precision: required on f32 operands (one of three), refused on any other.
  const std::string f32_tiles = "  %0 = constant {value = 0.0} : <16x16xf32>\n";
  for (const char* p : {"tf32", "tf32x3", "ieee"}) {
    auto ok = parse_module(fmt::format("kernel @k() num_warps = 4 {{\n{}  %1 = dot %0, %0, %0 {{input_precision = \"{}\"}} : "
                                       "<16x16xf32>\n  return\n}}\n", f32_tiles, p));
    CHECK_NOTHROW(verify(*ok));
  }
  rejects(f32_tiles + "  %1 = dot %0, %0, %0 : <16x16xf32>\n  return\n",
          "'dot' of f32 operands needs input_precision = \"tf32\", \"tf32x3\" or \"ieee\"");
  rejects(f32_tiles + "  %1 = dot %0, %0, %0 {input_precision = \"tf64\"} : <16x16xf32>\n  return\n",
          "'dot' of f32 operands needs input_precision");
  rejects(tiles + "  %3 = dot %0, %1, %2 {input_precision = \"tf32\"} : <16x16xf32>\n  return\n",
          "'dot' input_precision applies to f32 operands only, got f16 operands");
}

TEST_CASE("verifier: inline_asm takes numbers of one shape and one constraint per register", "[ir][verifier][inline_asm]") {
  auto m = parse_module(R"(kernel @k(%p: ptr<f32>, %n: i32) num_warps = 4 {
  %0 = arange {start = 0, end = 64} : <64xi32>
  %1 = cast %0 : <64xu8>
  %2 = inline_asm %1 {asm = "and.b32 $0, $1, 0x1F1F1F1F;", constraints = "=r,r", pack = 4, pure = 1} : <64xu8>
  %3, %4 = inline_asm %0, %1 {asm = "mov.b32 $0, $1;", constraints = "=r,=r,r,r,~{memory}", pack = 1, pure = 0} : <64xi32>, <64xf32>
  return
}
)", "ok.tir");
  CHECK_NOTHROW(verify(*m));
  const std::string text = print(*m);
  CHECK(print(*parse_module(text, "again.tir")) == text);
  const std::string tile = "  %0 = arange {start = 0, end = 64} : <64xi32>\n";
  rejects(tile + "  %1 = inline_asm %0 {asm = \"x\", constraints = \"=r,r,r\", pack = 1, pure = 1} : <64xi32>\n  return\n",
          "constraints \"=r,r,r\" name 3 registers; 1 results and 1 arguments at pack 1 need 2");
  rejects(tile + "  %1 = inline_asm %0 {asm = \"x\", constraints = \"=r,r\", pack = 3, pure = 1} : <64xi32>\n  return\n",
          "pack must be a power of two from 1 to 16, got 3");
  rejects(tile + "  %1 = inline_asm %0 {constraints = \"=r,r\", pack = 1, pure = 1} : <64xi32>\n  return\n",
          "inline_asm needs a string attribute 'asm'");
  rejects(tile + "  %1 = inline_asm %0 {asm = \"x\", constraints = \"=r,r\", pack = 1, pure = 1} : <32xi32>\n  return\n",
          "needs every argument and result of one shape");
  rejects("  %1 = inline_asm %p {asm = \"x\", constraints = \"=r,l\", pack = 1, pure = 1} : i32\n  return\n",
          "takes and gives numbers (not masks or pointers)");
  // 2 bytes per instance: one 16-bit register each way.
  rejects(tile + "  %1 = cast %0 : <64xi8>\n  %2 = inline_asm %1 {asm = \"x\", constraints = \"=r,r,r\", pack = 2, pure = 1} : <64xi8>\n  return\n",
          "name 3 registers; 1 results and 1 arguments at pack 2 need 2");
}
