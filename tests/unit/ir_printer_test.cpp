// Printer and parser: print(parse(print(m))) == print(m) on hand-built modules, exact float
// attributes, value naming, and parse errors with positions.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <limits>

#include "jit/ir/parser.hpp"
#include "jit/ir/printer.hpp"
#include "jit/ir/verifier.hpp"
#include "tessera/error.hpp"

using namespace tessera::ir;

namespace {

std::string round_trip(const Module& m) {
  std::string text = print(m);
  auto parsed = parse_module(text, "roundtrip.tir");
  std::string again = print(*parsed);
  REQUIRE(again == text);
  return text;
}

// The vector-add kernel as the tracer builds it, with locations and argument facts.
std::unique_ptr<Module> add_kernel() {
  auto m = std::make_unique<Module>();
  m->name = "add";
  Block& e = m->entry();
  Value* x = e.add_arg(Type::pointer(DType::F32), "x");
  Value* out = e.add_arg(Type::pointer(DType::F32), "out");
  Value* n = e.add_arg(Type::scalar(DType::I32), "n");
  m->arg_facts = {{16, false}, {16, false}, {1, true}};
  Builder b(&e);
  b.set_loc({"add.cpp", 7, 3});
  Value* pid = b.create1(OpKind::ProgramId, {}, Type::scalar(DType::I32), {{"axis", std::int64_t{0}}});
  Value* block = b.int_constant(DType::I32, 1024);
  Value* base = b.create1(OpKind::Mul, {pid, block}, Type::scalar(DType::I32));
  Type idx = Type::scalar(DType::I32).with_shape({1024});
  Value* ar = b.create1(OpKind::Arange, {}, idx, {{"start", std::int64_t{0}}, {"end", std::int64_t{1024}}});
  Value* offs = b.create1(OpKind::Add, {b.create1(OpKind::Splat, {base}, idx), ar}, idx);
  Value* mask = b.create1(OpKind::CmpLt, {offs, b.create1(OpKind::Splat, {n}, idx)}, idx.with_dtype(DType::I1));
  Type ptrs = Type::pointer(DType::F32).with_shape({1024});
  Value* px = b.create1(OpKind::AddPtr, {b.create1(OpKind::Splat, {x}, ptrs), offs}, ptrs);
  Value* v = b.create1(OpKind::Load, {px, mask}, Type::scalar(DType::F32).with_shape({1024}));
  Value* po = b.create1(OpKind::AddPtr, {b.create1(OpKind::Splat, {out}, ptrs), offs}, ptrs);
  b.create(OpKind::Store, {po, v, mask}, {});
  b.set_loc({});
  b.create(OpKind::Return, {}, {});
  return m;
}

Layout blocked2d() {
  Layout l;
  l.kind = Layout::Kind::Blocked;
  l.size_per_thread = {1, 4};
  l.threads_per_warp = {4, 8};
  l.warps_per_cta = {4, 1};
  l.order = {1, 0};
  return l;
}

}  // namespace

TEST_CASE("printer: the add kernel prints in the documented form and round-trips", "[ir][printer]") {
  auto m = add_kernel();
  std::string text = round_trip(*m);
  CHECK(text.rfind("kernel @add(%x: ptr<f32> {divisibility = 16}, %out: ptr<f32> {divisibility = 16}, "
                   "%n: i32 {equal_to_one}) num_warps = 4 {\n", 0) == 0);
  CHECK(text.find("  %0 = program_id {axis = 0} : i32  loc(\"add.cpp\":7:3)\n") != std::string::npos);
  CHECK(text.find("%3 = arange {end = 1024, start = 0} : <1024xi32>") != std::string::npos);
  CHECK(text.find("  return\n}\n") != std::string::npos);
  CHECK(print(*m, {.locations = false}).find("loc(") == std::string::npos);
  REQUIRE_NOTHROW(verify(*parse_module(text)));
}

TEST_CASE("printer: for, if, layouts and every dtype round-trip", "[ir][printer]") {
  Module m;
  m.name = "all";
  Block& e = m.entry();
  for (int d = 0; d <= static_cast<int>(DType::F64); ++d) {
    e.add_arg(Type::scalar(static_cast<DType>(d)));
    e.add_arg(Type::pointer(static_cast<DType>(d)));
  }
  Builder b(&e);
  for (int d = 0; d <= static_cast<int>(DType::F64); ++d) {
    auto dt = static_cast<DType>(d);
    if (is_float(dt)) b.float_constant(dt, 1.5, {2, 4});
    else b.int_constant(dt, 1, {8});
  }
  Type tile = Type::scalar(DType::F32).with_shape({128, 64});
  tile.layout = blocked2d();
  Type row = Type::scalar(DType::F32).with_shape({128});
  row.layout = blocked2d();
  row.layout.kind = Layout::Kind::Slice;
  row.layout.slice_dim = 1;
  Value* t = b.float_constant(DType::F32, 0.0, {128, 64});
  t->type = tile;
  Value* r = b.float_constant(DType::F32, 2.0, {128});
  r->type = row;
  Value* lb = b.int_constant(DType::I32, 0);
  Value* ub = b.int_constant(DType::I32, 10);
  Value* st = b.int_constant(DType::I32, 1);
  Op* loop = b.create(OpKind::For, {lb, ub, st, t, r}, {tile, row}, {}, 1);
  Block& body = *loop->regions[0]->block;
  Value* iv = body.add_arg(Type::scalar(DType::I32));
  Value* c0 = body.add_arg(tile);
  Value* c1 = body.add_arg(row);
  Builder inner(&body);
  Value* cond = inner.create1(OpKind::CmpLt, {iv, ub}, Type::scalar(DType::I1));
  Op* branch = inner.create(OpKind::If, {cond}, {tile}, {}, 2);
  Builder then_b(branch->regions[0]->block.get());
  then_b.create(OpKind::Yield, {then_b.create1(OpKind::Add, {c0, c0}, tile)}, {});
  Builder else_b(branch->regions[1]->block.get());
  else_b.create(OpKind::Yield, {c0}, {});
  inner.create(OpKind::Yield, {branch->result(), c1}, {});
  b.create(OpKind::Return, {}, {});

  std::string text = round_trip(m);
  CHECK(text.find("<128x64xf32, #blocked<[1,4], [4,8], [4,1], [1,0]>>") != std::string::npos);
  CHECK(text.find("<128xf32, #slice<1, blocked<[1,4], [4,8], [4,1], [1,0]>>>") != std::string::npos);
  CHECK(text.find("^bb(") != std::string::npos);
  CHECK(text.find("} else {") != std::string::npos);
  for (auto name : {"i1", "i8", "i16", "i32", "i64", "u8", "u32", "f16", "bf16", "f32", "f64"})
    CHECK(text.find(std::string("ptr<") + name + ">") != std::string::npos);
  REQUIRE_NOTHROW(verify(m));
  REQUIRE_NOTHROW(verify(*parse_module(text)));
}

TEST_CASE("printer: float attributes reparse to identical bits", "[ir][printer]") {
  const double values[] = {0.1, -0.0, 0.0, 1.0, -2.5, 1e300, 5e-324, 1e16, 123456789.125,
                           std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::max(), std::numeric_limits<double>::min()};
  Module m;
  m.name = "floats";
  Builder b(&m.entry());
  for (double v : values) b.float_constant(DType::F64, v);
  b.float_constant(DType::F64, std::numeric_limits<double>::quiet_NaN());
  b.create(OpKind::Return, {}, {});
  std::string text = round_trip(m);
  CHECK(text.find("{value = 0.1}") != std::string::npos);
  CHECK(text.find("{value = -0.0}") != std::string::npos);
  CHECK(text.find("{value = 1.0}") != std::string::npos);
  CHECK(text.find("{value = inf}") != std::string::npos);
  CHECK(text.find("{value = -inf}") != std::string::npos);
  CHECK(text.find("{value = nan}") != std::string::npos);
  auto parsed = parse_module(text);
  for (std::size_t i = 0; i < std::size(values); ++i) {
    double got = parsed->entry().ops[i]->float_attr("value");
    CHECK(std::bit_cast<std::uint64_t>(got) == std::bit_cast<std::uint64_t>(values[i]));
  }
  CHECK(std::isnan(parsed->entry().ops[std::size(values)]->float_attr("value")));
}

TEST_CASE("printer: strings, int lists and attributes sorted by name", "[ir][printer]") {
  Module m;
  m.name = "weird name";
  Builder b(&m.entry());
  b.create1(OpKind::Constant, {}, Type::scalar(DType::I64),
            {{"value", std::int64_t{-9223372036854775807 - 1}}, {"note", std::string("a \"q\"\\\n\x01")},
             {"list", std::vector<std::int64_t>{1, -2}}, {"empty", std::vector<std::int64_t>{}}});
  b.create(OpKind::Return, {}, {});
  std::string text = round_trip(m);
  CHECK(text.find("kernel @\"weird name\"()") != std::string::npos);
  CHECK(text.find("{empty = [], list = [1, -2], note = \"a \\\"q\\\"\\\\\\n\\x01\", value = -9223372036854775808}") !=
        std::string::npos);
}

TEST_CASE("printer: kernel arguments named by unique identifier hints, else argN", "[ir][printer]") {
  Module m;
  m.name = "k";
  Block& e = m.entry();
  e.add_arg(Type::scalar(DType::I32), "arg1");  // unique and valid: kept
  e.add_arg(Type::scalar(DType::I32), "");      // would be arg1: taken
  e.add_arg(Type::scalar(DType::I32), "dup");
  e.add_arg(Type::scalar(DType::I32), "dup");
  e.add_arg(Type::scalar(DType::I32), "not valid");
  Builder(&e).create(OpKind::Return, {}, {});
  std::string text = round_trip(m);
  CHECK(text.find("kernel @k(%arg1: i32, %arg1_: i32, %arg2: i32, %arg3: i32, %arg4: i32)") != std::string::npos);
}

TEST_CASE("print_op names values as the module print does", "[ir][printer]") {
  auto m = add_kernel();
  const Op& load = *m->entry().ops[10];
  REQUIRE(load.kind == OpKind::Load);
  CHECK(print_op(load) == "%10 = load %9, %7 : <1024xf32>");
}

TEST_CASE("parser: errors carry file:line:col", "[ir][parser]") {
  auto fails_with = [](const std::string& text, const std::string& what) {
    REQUIRE_THROWS_AS(parse_module(text, "t.tir"), tessera::ProgramError);
    REQUIRE_THROWS_WITH(parse_module(text, "t.tir"), Catch::Contains(what));
  };
  fails_with("kernel @k() {\n  %0 = bogus : i32\n}\n", "t.tir:2:8: unknown op 'bogus'");
  fails_with("kernel @k() {\n  %0 = add %1, %1 : i32\n}\n", "t.tir:2:12: use of undefined value %1");
  fails_with("kernel @k() {\n  %0 = constant {value = 1} : i33\n}\n", "t.tir:2:31: unknown type 'i33'");
  fails_with("kernel @k() {\n  %0 = constant {value = 1} : i32\n  %0 = constant {value = 1} : i32\n}\n",
             "t.tir:3:3: redefinition of value %0");
  fails_with("kernel @k() {\n  %0, %1 = constant {value = 1} : i32\n}\n", "names 2 result(s) but lists 1");
  fails_with("kernel @k() {\n  return\n", "missing '}'");
  fails_with("kernel @k() {\n  return\n}\nextra", "t.tir:4:1: expected end of input");
  fails_with("kernel @k() {\n  %0 = constant {value = 99999999999999999999} : i64\n}\n", "out of the range of int64");
  // A value defined in a region is not visible after it.
  fails_with("kernel @k(%c: i1) {\n  if %c {\n    %0 = constant {value = 1} : i32\n    yield\n  } else {\n"
             "    yield\n  }\n  %1 = add %0, %0 : i32\n  return\n}\n",
             "t.tir:8:12: use of undefined value %0");
}
