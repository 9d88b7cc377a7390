#include "random_harness.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>

#include "jit/analysis/layouts.hpp"
#include "jit/interp/half.hpp"
#include "jit/interp/interpreter.hpp"
#include "jit/ir/parser.hpp"
#include "jit/ir/printer.hpp"
#include "jit/ir/verifier.hpp"
#include "jit/transforms/assign_layouts.hpp"
#include "jit/transforms/passes.hpp"
#include "tessera/error.hpp"

namespace tessera::random_program {
namespace {

// splitmix64, as the generator uses.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::int64_t uniform(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  double real() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t s_;
};

int elem_bytes(DType d) { return ir::dtype_bytes(d); }

// An element of dtype d at p as a double (integers exactly up to 2^53).
double read_element(DType d, const std::byte* p) {
  switch (d) {
    case DType::I1:
    case DType::U8: return static_cast<double>(*reinterpret_cast<const std::uint8_t*>(p));
    case DType::I8: return static_cast<double>(*reinterpret_cast<const std::int8_t*>(p));
    case DType::I16: { std::int16_t v; std::memcpy(&v, p, 2); return v; }
    case DType::U16: { std::uint16_t v; std::memcpy(&v, p, 2); return v; }
    case DType::U64: { std::uint64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case DType::I32: { std::int32_t v; std::memcpy(&v, p, 4); return v; }
    case DType::U32: { std::uint32_t v; std::memcpy(&v, p, 4); return v; }
    case DType::I64: { std::int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case DType::F16: { std::uint16_t v; std::memcpy(&v, p, 2); return interp::f16_to_float(v); }
    case DType::BF16: { std::uint16_t v; std::memcpy(&v, p, 2); return interp::bf16_to_float(v); }
    case DType::F32: { float v; std::memcpy(&v, p, 4); return v; }
    case DType::F64: { double v; std::memcpy(&v, p, 8); return v; }
    default: return 0;
  }
}

void write_float(DType d, std::byte* p, double x) {
  switch (d) {
    case DType::F16: { std::uint16_t v = interp::f16_from_double(x); std::memcpy(p, &v, 2); return; }
    case DType::BF16: { std::uint16_t v = interp::bf16_from_double(x); std::memcpy(p, &v, 2); return; }
    case DType::F32: { float v = static_cast<float>(x); std::memcpy(p, &v, 4); return; }
    default: std::memcpy(p, &x, 8); return;
  }
}

void write_int(DType d, std::byte* p, std::int64_t x) {
  std::memcpy(p, &x, static_cast<std::size_t>(elem_bytes(d)));  // little-endian: the low bytes
  if (d == DType::I1) *reinterpret_cast<std::uint8_t*>(p) &= 1;
}

// A float for Wide-mode inputs: mostly ordinary values, sometimes the ones folding gets wrong.
double wide_float(Rng& r) {
  const std::uint64_t k = r.next() % 20;
  if (k < 11) return std::ldexp(r.real() * 2 - 1, static_cast<int>(r.uniform(-3, 5)));
  if (k < 14) return static_cast<double>(r.uniform(-8, 8)) / 4;
  switch (k) {
    case 14: return (r.next() & 1) ? 0.0 : -0.0;
    case 15: return (r.next() & 1) ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
    case 16: return std::numeric_limits<double>::quiet_NaN();
    case 17: return std::ldexp(r.real(), -static_cast<int>(r.uniform(126, 150)));  // subnormal in f32
    case 18: return std::ldexp(r.real() * 2 - 1, static_cast<int>(r.uniform(10, 127)));
    default: return static_cast<double>(r.uniform(-70000, 70000));
  }
}

std::int64_t wide_int(Rng& r) {
  const std::uint64_t k = r.next() % 10;
  if (k < 6) return r.uniform(-100, 100);
  if (k < 8) return static_cast<std::int64_t>(r.next());
  return (r.next() & 1) ? std::numeric_limits<std::int64_t>::min() : -1;
}

std::string buffer_name(const Program& p, std::size_t b) {
  for (std::size_t a = 0; a < p.args.size(); ++a)
    if (p.args[a].kind == ArgSpec::Kind::Buffer && p.args[a].buffer == static_cast<int>(b)) {
      const auto& name = p.module->entry().args[a]->name_hint;
      return fmt::format("argument {} '{}'", a, name);
    }
  return fmt::format("buffer {}", b);
}

bool is_nan(double x) { return std::isnan(x); }

using Judge = std::function<bool(DType d, const BufferSpec& spec, double want, double got)>;

std::string compare(const Program& p, const Memory& want, const Memory& got, const Judge& same) {
  std::string report;
  int shown = 0, total = 0;
  for (std::size_t b = 0; b < p.buffers.size(); ++b) {
    const BufferSpec& spec = p.buffers[b];
    const int eb = elem_bytes(spec.dtype);
    for (std::int64_t i = 0; i < spec.elements; ++i) {
      const std::byte* w = want.data(b) + i * eb;
      const std::byte* g = got.data(b) + i * eb;
      if (std::memcmp(w, g, static_cast<std::size_t>(eb)) == 0) continue;
      const double wv = read_element(spec.dtype, w), gv = read_element(spec.dtype, g);
      if (same(spec.dtype, spec, wv, gv)) continue;
      ++total;
      if (shown++ < 8)
        report += fmt::format("{} ({}{}, {} elements) element {}: expected {} got {}\n", buffer_name(p, b),
                              ir::dtype_name(spec.dtype), spec.output ? " output" : " input", spec.elements, i, wv, gv);
    }
  }
  if (total > shown) report += fmt::format("... {} differing elements in all\n", total);
  return report;
}

}  // namespace

void Memory::Free::operator()(std::byte* p) const { std::free(p); }

Memory::Memory(const Program& p, std::uint64_t seed) {
  Rng r(seed);
  for (const BufferSpec& s : p.buffers) {
    Buffer buf;
    buf.bytes = static_cast<std::size_t>(s.elements) * static_cast<std::size_t>(elem_bytes(s.dtype));
    const std::size_t alloc = (std::max<std::size_t>(buf.bytes, 1) + 63) / 64 * 64;
    buf.data.reset(static_cast<std::byte*>(std::aligned_alloc(64, alloc)));
    if (!buf.data) throw std::bad_alloc();
    std::memset(buf.data.get(), kPoison, alloc);
    if (!s.output) {
      const int eb = elem_bytes(s.dtype);
      for (std::int64_t i = 0; i < s.elements; ++i) {
        std::byte* e = buf.data.get() + i * eb;
        if (ir::is_float(s.dtype)) {
          const double grid = std::ldexp(1.0, -s.quantum);
          const auto steps = static_cast<std::int64_t>(s.bound / grid);
          write_float(s.dtype, e, p.mode == Mode::Gpu ? static_cast<double>(r.uniform(-steps, steps)) * grid : wide_float(r));
        } else {
          const auto b = static_cast<std::int64_t>(s.bound);
          const std::int64_t v = p.mode == Mode::Gpu ? r.uniform(ir::is_unsigned(s.dtype) ? 0 : -b, b) : wide_int(r);
          write_int(s.dtype, e, v);
        }
      }
    }
    buffers_.push_back(std::move(buf));
  }
}

Memory::Memory(const Memory& o) {
  for (const Buffer& b : o.buffers_) {
    Buffer c;
    c.bytes = b.bytes;
    const std::size_t alloc = (std::max<std::size_t>(b.bytes, 1) + 63) / 64 * 64;
    c.data.reset(static_cast<std::byte*>(std::aligned_alloc(64, alloc)));
    if (!c.data) throw std::bad_alloc();
    std::memcpy(c.data.get(), b.data.get(), alloc);
    buffers_.push_back(std::move(c));
  }
}

std::vector<ArgValue> Memory::arguments(const Program& p) const {
  std::vector<ArgValue> args;
  for (const ArgSpec& a : p.args) {
    switch (a.kind) {
      case ArgSpec::Kind::Buffer:
        args.push_back(ArgValue::pointer(data(static_cast<std::size_t>(a.buffer)), a.dtype,
                                         bytes(static_cast<std::size_t>(a.buffer))));
        break;
      case ArgSpec::Kind::Int: args.push_back(ArgValue::integer(a.int_value, a.dtype)); break;
      case ArgSpec::Kind::Float: args.push_back(ArgValue::floating(a.float_value, a.dtype)); break;
    }
  }
  return args;
}

std::uint64_t data_seed(const Program& p) { return p.seed * 0x9e3779b97f4a7c15ULL + 0x5eed; }

Memory run_interpreter(const Program& p, const ir::Module& m, const Memory& initial) {
  Memory mem(initial);
  const auto args = mem.arguments(p);
  interp::run(m, p.grid, args);
  return mem;
}

std::string compare_exact(const Program& p, const Memory& want, const Memory& got) {
  return compare(p, want, got, [](DType d, const BufferSpec&, double w, double g) {
    return ir::is_float(d) && is_nan(w) && is_nan(g);
  });
}

KernelParams kernel_params(const Program& p, const std::function<std::uint64_t(std::size_t buffer)>& address) {
  KernelParams k;
  k.slots.assign(p.args.size(), 0);
  for (std::size_t i = 0; i < p.args.size(); ++i) {
    const ArgSpec& a = p.args[i];
    if (a.kind == ArgSpec::Kind::Buffer) {
      k.slots[i] = address(static_cast<std::size_t>(a.buffer));
    } else if (a.kind == ArgSpec::Kind::Int) {
      const auto v = static_cast<std::int32_t>(a.int_value);
      std::memcpy(&k.slots[i], &v, sizeof v);
    } else {
      const auto v = static_cast<float>(a.float_value);
      std::memcpy(&k.slots[i], &v, sizeof v);
    }
    k.pointers.push_back(&k.slots[i]);
  }
  return k;
}

std::string compare_close(const Program& p, const Memory& want, const Memory& got) {
  return compare(p, want, got, [](DType d, const BufferSpec& spec, double w, double g) {
    if (!ir::is_float(d)) return false;
    if (is_nan(w) || is_nan(g)) return is_nan(w) && is_nan(g);
    if (std::isinf(w) || std::isinf(g)) return w == g;
    const double rel = d == DType::F32 ? 1e-5 : d == DType::F64 ? 1e-12 : 1e-2;
    return std::abs(g - w) <= spec.tolerance + rel * std::abs(w) + rel;
  });
}

// --- constructs ------------------------------------------------------------------------------

std::map<std::string, std::int64_t> count_constructs(const ir::Module& m) {
  std::map<std::string, std::int64_t> c;
  // A constant, or a splat or broadcast of one: what canonicalize folds.
  auto is_const = [](const ir::Value* v) {
    while (v->def && (v->def->kind == ir::OpKind::Splat || v->def->kind == ir::OpKind::Broadcast)) v = v->def->operands[0];
    return v->def && v->def->kind == ir::OpKind::Constant;
  };
  std::function<void(const ir::Block&, int, bool)> visit = [&](const ir::Block& b, int depth, bool in_loop) {
    for (const auto& op : b.ops) {
      const ir::Op& o = *op;
      ++c[fmt::format("op:{}", o.name())];
      for (const auto& r : o.results) {
        ++c[fmt::format("dtype:{}", ir::dtype_name(r->type.is_ptr() ? r->type.pointee : r->type.dtype))];
        if (r->type.rank() >= 2) ++c[fmt::format("tile:{}d", r->type.rank())];
      }
      const auto cat = o.info().category;
      if ((cat == ir::OpCategory::Binary || cat == ir::OpCategory::Compare || cat == ir::OpCategory::Unary) &&
          std::all_of(o.operands.begin(), o.operands.end(), is_const))
        ++c[fmt::format("fold:{}", cat == ir::OpCategory::Binary ? "binary" : cat == ir::OpCategory::Compare ? "compare" : "unary")];
      if (o.kind == ir::OpKind::If && is_const(o.operands[0])) ++c["if:constant"];
      switch (o.kind) {
        case ir::OpKind::Reduce:
        case ir::OpKind::Scan: {
          const char* what = o.kind == ir::OpKind::Reduce ? "reduce" : "scan";
          const ir::Block& body = *o.regions[0]->block;
          if (o.operands.size() == 2) ++c[fmt::format("{}:argmax", what)];
          else if (body.ops.size() == 2) ++c[fmt::format("{}:{}", what, body.ops[0]->name())];
          if (o.int_attr("axis") > 0) ++c[fmt::format("{}:axis{}", what, o.int_attr("axis"))];
          if (o.operands[0]->type.rank() >= 2) ++c[fmt::format("{}:2d", what)];
          if (o.has_attr("reverse") && o.int_attr("reverse") != 0) ++c["scan:reverse"];
          break;
        }
        case ir::OpKind::Dot:
          ++c[fmt::format("dot:{}", ir::dtype_name(o.operands[0]->type.dtype))];
          if (in_loop && m.num_stages > 1) ++c["dot:pipelined"];
          if (!in_loop) ++c["dot:chained"];  // the generator's only dots outside loops take a product
          if (o.operands[0]->def->kind != ir::OpKind::Load || o.operands[1]->def->kind != ir::OpKind::Load)
            ++c["dot:operand_not_loaded"];
          break;
        case ir::OpKind::Load:
          if (o.operands.size() >= 2) ++c["load:masked"];
          if (o.operands.size() == 3) ++c["load:other"];
          if (in_loop) ++c["for:load"];
          if (o.operands[0]->def && o.operands[0]->def->kind == ir::OpKind::AddPtr &&
              o.operands[0]->def->operands[1]->def && o.operands[0]->def->operands[1]->def->kind == ir::OpKind::Min)
            ++c["gather"];
          break;
        case ir::OpKind::Store:
          if (o.operands.size() == 3) ++c["store:masked"];
          if (!o.operands[0]->type.is_tile()) ++c["store:scalar"];
          if (in_loop) ++c["for:store"];
          break;
        case ir::OpKind::AddPtr:
          if (o.operands[1]->type.dtype == DType::I64) ++c["addptr:i64"];
          break;
        case ir::OpKind::For:
          if (o.operands.size() > 3) ++c["for:carried"];
          if (o.operands[0]->def == nullptr || o.operands[1]->def == nullptr || o.operands[1]->def->kind != ir::OpKind::Constant)
            ++c["for:dynamic_bound"];
          if (o.operands[2]->def && o.operands[2]->def->kind == ir::OpKind::Constant &&
              std::holds_alternative<std::int64_t>(o.operands[2]->def->attrs.at("value")) &&
              std::get<std::int64_t>(o.operands[2]->def->attrs.at("value")) < 0)
            ++c["for:negative_step"];
          break;
        case ir::OpKind::If:
          if (!o.results.empty()) ++c["if:results"];
          break;
        case ir::OpKind::Cast:
          ++c[fmt::format("cast:{}_to_{}", ir::is_float(o.operands[0]->type.dtype) ? "float" : "int",
                          ir::is_float(o.results[0]->type.dtype) ? "float" : "int")];
          break;
        default: break;
      }
      if (depth >= 1 && !o.regions.empty() && (o.kind == ir::OpKind::For || o.kind == ir::OpKind::If)) ++c["region:nested"];
      const bool loop = in_loop || o.kind == ir::OpKind::For;
      for (const auto& r : o.regions) visit(*r->block, depth + (o.kind == ir::OpKind::For || o.kind == ir::OpKind::If), loop);
    }
  };
  visit(m.entry(), 0, false);
  return c;
}

std::vector<std::string> required_constructs(Mode mode) {
  std::vector<std::string> r = {
      "op:constant", "op:program_id", "op:num_programs", "op:arange", "op:splat", "op:broadcast", "op:expand_dims",
      "op:add", "op:sub", "op:mul", "op:div", "op:rem", "op:and", "op:or", "op:xor", "op:shl", "op:shr", "op:min",
      "op:max", "op:cmp_eq", "op:cmp_ne", "op:cmp_lt", "op:cmp_le", "op:cmp_gt", "op:cmp_ge", "op:neg", "op:not",
      "op:exp", "op:log", "op:sqrt", "op:abs", "op:cast", "op:exp2", "op:log2", "op:rsqrt", "op:sin", "op:cos",
      "op:tanh", "op:sigmoid", "op:erf", "op:floor", "op:ceil", "op:pow", "op:fma", "op:reduce", "op:scan",
      "op:atomic_rmw", "op:reshape", "op:trans", "op:join", "op:split", "op:select", "op:addptr", "op:load",
      "op:store", "op:for", "op:if", "op:yield", "op:return",
      "reduce:add", "reduce:max", "reduce:min", "reduce:argmax", "reduce:axis1", "reduce:2d", "scan:add", "scan:max",
      "scan:min", "scan:reverse", "scan:axis1", "load:masked", "load:other", "store:masked", "store:scalar", "gather",
      "addptr:i64", "for:carried", "for:load", "for:store", "for:dynamic_bound", "for:negative_step", "if:results", "if:constant",
      "region:nested", "cast:float_to_int", "cast:int_to_float", "cast:float_to_float", "cast:int_to_int",
      "dtype:f32", "dtype:f16", "dtype:bf16", "dtype:f64", "dtype:i32", "dtype:i64", "dtype:i8", "dtype:i16",
      "dtype:u8", "dtype:u16", "dtype:u32", "dtype:u64", "dtype:i1", "tile:2d", "tile:3d",
      "op:dot", "dot:f16", "dot:bf16", "dot:f32", "dot:i8", "dot:pipelined", "dot:chained", "dot:operand_not_loaded"};
  if (mode == Mode::Wide)
    r.insert(r.end(), {"reduce:mul", "scan:mul", "op:atomic_cas", "fold:binary", "fold:compare", "fold:unary"});
  return r;
}

bool mutation_detected(const Program& p) {
  auto m = p.module->clone();
  ir::Block& entry = m->entry();
  ir::Op* store = nullptr;
  for (auto& op : entry.ops)
    if (op->kind == ir::OpKind::Store) store = op.get();
  if (store == nullptr) return false;
  ir::Builder b(&entry);
  const ir::Type t = store->operands[1]->type;
  ir::Value* c = t.dtype == DType::I1       ? b.create1(ir::OpKind::Not, {store->operands[1]}, t)
                 : ir::is_float(t.dtype) ? b.float_constant(t.dtype, 42.5, t.shape)
                                         : b.int_constant(t.dtype, 42, t.shape);
  auto at = std::find_if(entry.ops.begin(), entry.ops.end(), [&](const auto& op) { return op.get() == store; });
  std::rotate(at, entry.ops.end() - 1, entry.ops.end());  // the new op, appended last, goes before the store
  store->operands[1] = c;
  ir::verify(*m);
  const Memory initial(p, data_seed(p));
  return !compare_exact(p, run_interpreter(p, *p.module, initial), run_interpreter(p, *m, initial)).empty();
}

std::int64_t max_slots_per_thread(const ir::Module& m) {
  std::int64_t most = 0;
  auto see = [&](const ir::Value& v) {
    if (v.type.is_tile() && !v.type.layout.is_none()) most = std::max(most, analysis::distribute(v.type).num_slots());
  };
  std::function<void(const ir::Block&)> visit = [&](const ir::Block& b) {
    for (const auto& a : b.args) see(*a);
    for (const auto& op : b.ops) {
      for (const auto& r : op->results) see(*r);
      for (const auto& r : op->regions) visit(*r->block);
    }
  };
  visit(m.entry());
  return most;
}

// --- the pass check ----------------------------------------------------------------------------

std::optional<Failure> check_passes(const Program& p) {
  const Memory initial(p, data_seed(p));
  const std::string generated = ir::print(*p.module, {.locations = false});
  std::optional<Memory> want;
  try {
    want.emplace(run_interpreter(p, *p.module, initial));
  } catch (const std::exception& e) {
    return Failure{"interpreter, generated module", e.what(), generated, ""};
  }

  // Runs `t` on `m` (verifying after it; `t` may replace the module), interprets the result and
  // compares with `want`.
  using Transform = std::function<void(std::unique_ptr<ir::Module>&)>;
  auto check = [&](const std::string& stage, std::unique_ptr<ir::Module>& m, const Transform& t) -> std::optional<Failure> {
    const std::string before = ir::print(*m, {.locations = false});
    try {
      t(m);
      ir::verify(*m);
    } catch (const std::exception& e) {
      return Failure{stage, std::string("the transform failed: ") + e.what(), before, ir::print(*m, {.locations = false})};
    }
    const std::string after = ir::print(*m, {.locations = false});
    try {
      const Memory got = run_interpreter(p, *m, initial);
      const std::string diff = compare_exact(p, *want, got);
      if (!diff.empty()) return Failure{stage, "memory differs after the transform:\n" + diff, before, after};
    } catch (const std::exception& e) {
      return Failure{stage, std::string("the interpreter failed after the transform: ") + e.what(), before, after};
    }
    return std::nullopt;
  };
  auto pass = [](const std::string& name) -> Transform {
    return [name](std::unique_ptr<ir::Module>& m) { transforms::run_pass_pipeline(*m, std::vector<std::string>{name}); };
  };
  auto layouts = [](int warp) -> Transform {
    return [warp](std::unique_ptr<ir::Module>& m) { transforms::assign_layouts(*m, {.warp_size = warp}); };
  };
  const Transform round_trip = [](std::unique_ptr<ir::Module>& m) {
    const std::string text = ir::print(*m);
    auto parsed = ir::parse_module(text, "random");
    const std::string again = ir::print(*parsed);
    if (again != text) throw InternalError("print(parse(print(m))) differs from print(m):\n" + again);
    m = std::move(parsed);
  };

  // Every pass alone on the generated module.
  for (const std::string& name : transforms::pass_names()) {
    auto m = p.module->clone();
    if (auto f = check("pass " + name + " on the generated module", m, pass(name))) return f;
  }
  {
    auto m = p.module->clone();
    if (auto f = check("assign_layouts(warp 64) on the generated module", m, layouts(64))) return f;
  }
  {
    auto m = p.module->clone();
    if (auto f = check("print/parse round trip of the generated module", m, round_trip)) return f;
  }
  // The compile pipeline one pass at a time, then layouts for warp 32, sink, expand-conversions and
  // place-barriers (the NVIDIA build), whose result also goes through the printer and parser; and
  // for warp 64 on the optimized module.
  auto m = p.module->clone();
  for (const std::string& name : transforms::default_pipeline())
    if (auto f = check("pass " + name + " in the default pipeline", m, pass(name))) return f;
  auto optimized = m->clone();
  if (auto f = check("assign_layouts(warp 32) after the default pipeline", m, layouts(32))) return f;
  if (auto f = check("pass sink after the layouts (as a build runs it)", m, pass("sink"))) return f;
  if (auto f = check("pass expand-conversions after sink", m, pass("expand-conversions"))) return f;
  if (auto f = check("pass place-barriers after expand-conversions", m, pass("place-barriers"))) return f;
  if (auto f = check("print/parse round trip of the module with layouts", m, round_trip)) return f;
  if (auto f = check("assign_layouts(warp 64) after the default pipeline", optimized, layouts(64))) return f;
  return std::nullopt;
}

std::string failure_report(const Program& p, const Failure& f, const std::string& rerun) {
  std::string s = fmt::format("FAILED: seed {} ({} mode; {})\n  rerun: {}\n  stage: {}\n  {}\n", p.seed, mode_name(p.mode),
                              p.summary, rerun, f.stage, f.message);
  s += "--- generated module:\n" + ir::print(*p.module, {.locations = false});
  if (!f.before.empty() && f.before != ir::print(*p.module, {.locations = false})) s += "--- module before the stage:\n" + f.before;
  if (!f.after.empty()) s += "--- module after the stage:\n" + f.after;
  return s;
}

}  // namespace tessera::random_program
