// The random tile-program generator (random_program.hpp).
//
// Values live in a pool of scopes (the kernel body, then one per open region), so that an operand
// is always visible where it is used. Each value carries an Info: what the generator knows about
// its elements (a magnitude bound, whether they are exact multiples of 2^-q, whether the GPU
// computes them bit for bit like the interpreter, and if not, how far apart the two may be). Wide
// mode ignores Info; Gpu mode uses it to stay inside the domains of math ops, away from overflow,
// and to decide which float sums are order-independent.
#include "random_program.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

#include "jit/ir/printer.hpp"
#include "jit/ir/verifier.hpp"
#include "tessera/error.hpp"

namespace tessera::random_program {
namespace {

using ir::OpKind;
using ir::Type;
using ir::Value;
using Shape = std::vector<std::int64_t>;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::int64_t kMaxElements = 4096;  // the largest tile a program builds

std::int64_t numel(const Shape& s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

// --- number formats --------------------------------------------------------------------------

int mantissa_bits(DType d) {
  switch (d) {
    case DType::F16: return 11;
    case DType::BF16: return 8;
    case DType::F64: return 53;
    default: return 24;
  }
}
double max_finite(DType d) {
  switch (d) {
    case DType::F16: return 65504.0;
    case DType::BF16: return 3.3895313892515355e38;
    case DType::F64: return std::numeric_limits<double>::max();
    default: return static_cast<double>(std::numeric_limits<float>::max());
  }
}
int max_quantum(DType d) {  // the quantum of the smallest subnormal
  switch (d) {
    case DType::F16: return 24;
    case DType::BF16: return 133;
    case DType::F64: return 1074;
    default: return 149;
  }
}
double roundoff(DType d) { return ir::is_float(d) ? std::ldexp(1.0, -mantissa_bits(d)) : 0.0; }
// Every multiple of 2^-q of magnitude at most `bound` is exactly representable in d.
bool fits_exactly(DType d, double bound, int q) {
  return q >= 0 && q <= max_quantum(d) && bound <= max_finite(d) && std::ldexp(bound, q) <= std::ldexp(1.0, mantissa_bits(d));
}
// The largest magnitude an integer type holds.
double int_max(DType d) {
  switch (d) {
    case DType::I1: return 1;
    case DType::I8: return 128;
    case DType::I16: return 32768;
    case DType::I32: return 2147483648.0;
    case DType::U8: return 255;
    case DType::U16: return 65535;
    case DType::U32: return 4294967295.0;
    case DType::U64: return 18446744073709551615.0;
    default: return 9223372036854775808.0;
  }
}
std::int64_t int_min_value(DType d) {
  if (ir::is_unsigned(d)) return 0;
  return -static_cast<std::int64_t>(int_max(d) >= 9.2e18 ? std::numeric_limits<std::int64_t>::max() : int_max(d));
}
std::int64_t int_max_value(DType d) {
  if (d == DType::I64) return std::numeric_limits<std::int64_t>::max();
  if (d == DType::U64) return -1;  // all ones: a u64 constant is held as its bits
  return static_cast<std::int64_t>(ir::is_unsigned(d) ? int_max(d) : int_max(d) - 1);
}
// Gpu mode keeps float magnitudes below this, so that error bounds stay meaningful.
double soft_limit(DType d) {
  switch (d) {
    case DType::F16: return 4096;
    case DType::BF16: return 65536;
    case DType::F32: return 16777216;
    case DType::F64: return 1099511627776.0;
    default: return int_max(d);
  }
}

// --- what the generator knows about a value ----------------------------------------------------

struct Info {
  double bound = kInf;  // every element's magnitude is at most this
  int quantum = -1;     // floats: every element is an exactly representable multiple of 2^-quantum
  bool det = true;      // the GPU computes the same bits as the interpreter
  double err = 0;       // when !det: how far apart the GPU and the interpreter may be
};

Info normalized(DType d, Info i) {
  if (ir::is_float(d)) {
    if (i.quantum >= 0 && !fits_exactly(d, i.bound, i.quantum)) i.quantum = -1;
  } else {
    i.quantum = 0;
    i.bound = std::min(i.bound, int_max(d));
  }
  if (i.det) i.err = 0;
  return i;
}

Info hull(const Info& a, const Info& b) {
  Info r;
  r.bound = std::max(a.bound, b.bound);
  r.quantum = a.quantum >= 0 && b.quantum >= 0 ? std::max(a.quantum, b.quantum) : -1;
  r.det = a.det && b.det;
  r.err = std::max(a.err, b.err);
  return r;
}

// The smallest q with v a multiple of 2^-q (up to 40), or -1.
int quantum_of(double v) {
  if (!std::isfinite(v)) return -1;
  for (int q = 0; q <= 40; ++q)
    if (std::ldexp(v, q) == std::floor(std::ldexp(v, q))) return q;
  return -1;
}

// Info of an elementwise binary op on elements of type d.
Info binary_info(OpKind k, DType d, const Info& a, const Info& b) {
  const double u = roundoff(d);
  const bool q2 = a.quantum >= 0 && b.quantum >= 0;
  Info r;
  r.det = a.det && b.det;
  switch (k) {
    case OpKind::Add:
    case OpKind::Sub:
      r.bound = a.bound + b.bound;
      r.quantum = q2 ? std::max(a.quantum, b.quantum) : -1;
      r.err = a.err + b.err + 2 * u * r.bound;
      break;
    case OpKind::Mul:
      r.bound = a.bound * b.bound;
      r.quantum = q2 ? a.quantum + b.quantum : -1;
      r.err = a.bound * b.err + b.bound * a.err + a.err * b.err + 2 * u * r.bound;
      break;
    case OpKind::Min:
    case OpKind::Max:
      r = hull(a, b);
      break;
    case OpKind::Div:
      if (ir::is_float(d)) {  // Gpu mode divides by |y| + 1 >= 1; f32 division is div.full (2 ulp)
        r.bound = a.bound;
        r.det = false;
        r.err = a.err + a.bound * b.err + (4 * std::ldexp(1.0, -24) + 2 * u) * r.bound;
      } else {
        r.bound = a.bound;
      }
      break;
    case OpKind::Rem:
      r.bound = std::min(a.bound, b.bound);
      r.err = a.err + b.err;
      break;
    case OpKind::Shr:
      r.bound = a.bound;
      break;
    case OpKind::Pow:
      r.bound = kInf;
      r.det = false;
      r.err = kInf;
      break;
    default:  // and or xor shl: anything in the type
      r.bound = kInf;
      break;
  }
  return normalized(d, r);
}

// --- the generator -----------------------------------------------------------------------------

struct Val {
  Value* v = nullptr;
  Info info;
  const Type& type() const { return v->type; }
  DType dtype() const { return v->type.dtype; }
  const Shape& shape() const { return v->type.shape; }
};

// splitmix64: the generator's only source of randomness, so that a seed means the same program
// with every standard library.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  int uniform(int lo, int hi) { return lo + static_cast<int>(next() % static_cast<std::uint64_t>(hi - lo + 1)); }
  double real() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  bool chance(double p) { return real() < p; }
  // An index into weights, drawn in proportion to them.
  int weighted(std::initializer_list<double> weights) {
    double total = 0;
    for (double w : weights) total += w;
    double x = real() * total;
    int i = 0;
    for (double w : weights) {
      if (x < w) return i;
      x -= w;
      ++i;
    }
    return i - 1;
  }
  template <class T>
  T pick(std::initializer_list<T> xs) {
    return *(xs.begin() + uniform(0, static_cast<int>(xs.size()) - 1));
  }

 private:
  std::uint64_t s_;
};

enum class ShapePath { Same, Splat, ExpandBroadcast, Broadcast, Trans, Reshape, None };

ShapePath shape_path(const Shape& from, const Shape& to) {
  if (from == to) return ShapePath::Same;
  if (from.empty()) return ShapePath::Splat;
  if (to.empty()) return ShapePath::None;
  if (from.size() + 1 == to.size()) {
    for (std::size_t a = 0; a < to.size(); ++a) {
      Shape s = to;
      s.erase(s.begin() + static_cast<std::ptrdiff_t>(a));
      if (s == from) return ShapePath::ExpandBroadcast;
    }
  }
  if (from.size() == to.size()) {
    bool ok = true;
    for (std::size_t d = 0; d < to.size(); ++d) ok = ok && (from[d] == to[d] || from[d] == 1);
    if (ok) return ShapePath::Broadcast;
    if (from.size() == 2 && from[0] == to[1] && from[1] == to[0]) return ShapePath::Trans;
  }
  if (numel(from) == numel(to)) return ShapePath::Reshape;
  return ShapePath::None;
}

const DType kFloatTypes[] = {DType::F32, DType::F16, DType::BF16, DType::F64};
const DType kIntTypes[] = {DType::I32, DType::I64, DType::I8, DType::I16, DType::U8, DType::U32, DType::U16, DType::U64};

class Generator {
 public:
  Generator(std::uint64_t seed, Mode mode, Program& p) : rng_(seed * 0x2545f4914f6cdd1dULL + 17), gpu_(mode == Mode::Gpu), p_(p) {}

  void run() {
    p_.module = std::make_unique<ir::Module>();
    m_ = p_.module.get();
    m_->name = "random_" + std::to_string(p_.seed);
    m_->num_warps = rng_.pick({1, 2, 4, 4, 8});
    // At most 64 elements per thread: beyond that LLVM's NVPTX code generation can take most of a
    // minute (StraightLineStrengthReduce is quadratic in straight-line code: seed 27 of the first
    // version, 16x256 tiles on one warp, took 45 s), which the CI budget cannot afford.
    max_elements_ = std::min<std::int64_t>(kMaxElements, 64 * 32 * m_->num_warps);
    b_.set_block(&m_->entry());
    scopes_.emplace_back();
    prologue();
    const int steps = rng_.uniform(3, gpu_ ? 12 : 16);
    for (int i = 0; i < steps; ++i) action();
    epilogue();
    b_.set_loc(loc());
    b_.create(OpKind::Return, {}, {});
    facts();
    p_.summary = fmt::format("{} mode, {}, grid {}x{}, num_warps {}, num_stages {}, {} args, {} buffers", mode_name(p_.mode),
                             domain_text_, p_.grid[0], p_.grid[1], m_->num_warps, m_->num_stages, p_.args.size(), p_.buffers.size());
  }

 private:
  Rng rng_;
  bool gpu_;
  Program& p_;
  ir::Module* m_ = nullptr;
  ir::Builder b_{nullptr};
  std::vector<std::vector<Val>> scopes_;
  int depth_ = 0;
  int line_ = 0;
  std::int64_t max_elements_ = kMaxElements;

  // The domain: the tile every program covers of the input buffers.
  Shape shape_;
  std::int64_t n_ = 0, rows_ = 0, cols_ = 0;  // 1-D: n elements; 2-D: R x C
  bool col_major_ = false;
  std::string domain_text_;
  Val n_arg_, rows_arg_, cols_arg_;
  Val idx_;               // 1-D: element index of each lane
  Val r2_, c2_;           // 2-D: row and column of each lane (broadcast to the domain)
  Val offs_, mask_;       // element offset and in-bounds mask of each lane
  bool exact_cover_ = false;  // the grid covers the buffers exactly: masks are all true
  Val program_;           // linear program id (scalar i32)
  std::vector<int> inputs_;   // argument indices of the input buffers
  struct DomainStore { Value* ptr_arg; DType dtype; Val mask; bool masked; };
  std::vector<DomainStore> domain_stores_;

  ir::SourceLoc loc() { return ir::SourceLoc{"random", ++line_, 1}; }

  // --- kernel arguments and buffers ---

  Val add_buffer_arg(const BufferSpec& spec, const std::string& name) {
    p_.buffers.push_back(spec);
    ArgSpec a;
    a.kind = ArgSpec::Kind::Buffer;
    a.dtype = spec.dtype;
    a.buffer = static_cast<int>(p_.buffers.size()) - 1;
    p_.args.push_back(a);
    return Val{m_->entry().add_arg(Type::pointer(spec.dtype), name), Info{}};
  }
  Val add_int_arg(std::int64_t value, const std::string& name) {
    ArgSpec a;
    a.kind = ArgSpec::Kind::Int;
    a.dtype = DType::I32;
    a.int_value = value;
    p_.args.push_back(a);
    return Val{m_->entry().add_arg(Type::scalar(DType::I32), name), Info{static_cast<double>(std::abs(value)), 0, true, 0}};
  }
  Val add_float_arg(double value, const std::string& name) {
    ArgSpec a;
    a.kind = ArgSpec::Kind::Float;
    a.dtype = DType::F32;
    a.float_value = value;
    p_.args.push_back(a);
    Info i{std::abs(value), quantum_of(value), true, 0};
    return Val{m_->entry().add_arg(Type::scalar(DType::F32), name), normalized(DType::F32, i)};
  }
  std::int64_t total_programs() const { return static_cast<std::int64_t>(p_.grid[0]) * p_.grid[1]; }
  std::int64_t domain_elements() const { return shape_.size() == 1 ? n_ : rows_ * cols_; }

  void facts() {
    m_->arg_facts.assign(p_.args.size(), ir::ArgFacts{});
    for (std::size_t i = 0; i < p_.args.size(); ++i) {
      const ArgSpec& a = p_.args[i];
      if (a.kind == ArgSpec::Kind::Buffer) {
        if (rng_.chance(0.8)) m_->arg_facts[i].divisibility = 16;  // the harness aligns buffers to 64 bytes
      } else if (a.kind == ArgSpec::Kind::Int) {
        if (a.int_value % 16 == 0 && rng_.chance(0.8)) m_->arg_facts[i].divisibility = 16;
        if (a.int_value == 1 && rng_.chance(0.8)) m_->arg_facts[i].equal_to_one = true;
      }
    }
  }

  // --- the pool ---

  void push(const Val& v) { scopes_.back().push_back(v); }

  // A visible value satisfying `pred`, biased towards recent ones (deep chains); nullopt if none.
  std::optional<Val> find(const std::function<bool(const Val&)>& pred) {
    std::vector<const Val*> c;
    for (const auto& s : scopes_)
      for (const auto& v : s)
        if (pred(v)) c.push_back(&v);
    if (c.empty()) return std::nullopt;
    if (rng_.chance(0.5)) return *c[c.size() - 1 - static_cast<std::size_t>(rng_.uniform(0, std::min<int>(3, static_cast<int>(c.size()) - 1)))];
    return *c[static_cast<std::size_t>(rng_.uniform(0, static_cast<int>(c.size()) - 1))];
  }

  // --- emitting ops ---

  Val emit(OpKind k, std::vector<Val> ops, Type t, Info info, std::map<std::string, ir::Attr> attrs = {}) {
    b_.set_loc(loc());
    std::vector<Value*> vs;
    for (auto& o : ops) vs.push_back(o.v);
    Value* r = b_.create1(k, vs, std::move(t), std::move(attrs));
    return Val{r, normalized(r->type.dtype, info)};
  }

  static Type tile_type(DType d, const Shape& s) { return Type::scalar(d).with_shape(s); }

  Val iconst(DType d, std::int64_t v, const Shape& shape = {}) {
    b_.set_loc(loc());
    return Val{b_.int_constant(d, v, shape), normalized(d, Info{std::fabs(static_cast<double>(v)), 0, true, 0})};
  }
  Val fconst(DType d, double v, const Shape& shape = {}) {
    b_.set_loc(loc());
    return Val{b_.float_constant(d, v, shape), normalized(d, Info{std::abs(v), quantum_of(v), true, 0})};
  }
  // A constant of type t: a tile constant, or a scalar one splat (both forms occur in traced IR).
  Val constant(DType d, const Shape& shape) {
    const bool as_tile = !shape.empty() && rng_.chance(0.5);
    const Shape s = as_tile ? shape : Shape{};
    Val c;
    if (ir::is_float(d)) {
      c = fconst(d, random_float(), s);
    } else {
      c = iconst(d, random_int(d), s);
    }
    return shape.empty() || as_tile ? c : splat(c, shape);
  }
  double random_float() {
    if (gpu_) return rng_.uniform(-16, 16) / 4.0;
    switch (rng_.weighted({6, 2, 1, 1, 1, 1, 1})) {
      case 0: return rng_.uniform(-16, 16) / 4.0;
      case 1: return (rng_.real() - 0.5) * std::ldexp(1.0, rng_.uniform(-30, 30));
      case 2: return rng_.pick({0.0, -0.0});
      case 3: return rng_.pick({kInf, -kInf});
      case 4: return std::numeric_limits<double>::quiet_NaN();
      case 5: return rng_.pick({65504.0, 65520.0, 3.0e38, 1.0e-40, 5.9604644775390625e-08, 1.0e300});
      default: return rng_.pick({0.1, 1.0 / 3.0, 1.0 + std::ldexp(1.0, -11), 2.5});
    }
  }
  std::int64_t random_int(DType d) {
    if (d == DType::I1) return rng_.uniform(0, 1);
    std::int64_t v;
    if (gpu_) {
      v = rng_.uniform(-20, 20);
    } else {
      switch (rng_.weighted({6, 1, 1, 1})) {
        case 0: v = rng_.uniform(-20, 20); break;
        case 1: v = int_min_value(d); break;
        case 2: v = int_max_value(d); break;
        default: v = static_cast<std::int64_t>(rng_.next()); break;
      }
    }
    // Into the type's range (wrapping as a cast would).
    if (ir::dtype_bits(d) == 64) return v;  // u64: the bits
    const int bits = ir::dtype_bits(d);
    const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
    std::uint64_t u = static_cast<std::uint64_t>(v) & mask;
    if (ir::is_unsigned(d)) return static_cast<std::int64_t>(u);
    if (u >> (bits - 1)) return static_cast<std::int64_t>(u) - static_cast<std::int64_t>(std::uint64_t{1} << bits);
    return static_cast<std::int64_t>(u);
  }

  Val splat(const Val& s, const Shape& shape) {
    return emit(OpKind::Splat, {s}, s.type().with_shape(shape), s.info);
  }
  Val expand_dims(const Val& x, int axis) {
    Shape s = x.shape();
    s.insert(s.begin() + axis, 1);
    // The layout pass refuses expand_dims of an expand_dims result ("not supported yet", a
    // ProgramError), and also an expand_dims to rank 3 of any tile whose layout is decided by one
    // (even through a load whose addresses came from expand_dims + broadcast: BUG-1 in the
    // report, tests/random/README.md): those values get their extra dim from a reshape instead.
    if ((x.v->def && x.v->def->kind == OpKind::ExpandDims) || s.size() >= 3) return reshape(x, s);
    return emit(OpKind::ExpandDims, {x}, x.type().with_shape(s), x.info, {{"axis", std::int64_t{axis}}});
  }
  Val broadcast(const Val& x, const Shape& shape) {
    if (x.shape() == shape) return x;
    return emit(OpKind::Broadcast, {x}, x.type().with_shape(shape), x.info);
  }
  Val reshape(const Val& x, const Shape& shape) {
    return emit(OpKind::Reshape, {x}, x.type().with_shape(shape), x.info);
  }
  Val trans(const Val& x, const std::vector<std::int64_t>& order) {
    Shape s;
    for (auto d : order) s.push_back(x.shape()[static_cast<std::size_t>(d)]);
    return emit(OpKind::Trans, {x}, x.type().with_shape(s), x.info, {{"order", order}});
  }
  Val binary(OpKind k, const Val& a, const Val& b) {
    return emit(k, {a, b}, a.type(), binary_info(k, a.dtype(), a.info, b.info));
  }
  Val compare(OpKind k, const Val& a, const Val& b) {
    Info i{1, 0, a.info.det && b.info.det, 0};
    return emit(k, {a, b}, a.type().with_dtype(DType::I1), i);
  }
  Val select(const Val& c, const Val& a, const Val& b) {
    Info i = hull(a.info, b.info);
    i.det = i.det && c.info.det;
    return emit(OpKind::Select, {c, a, b}, a.type(), i);
  }
  Val unary(OpKind k, const Val& x, Info info) { return emit(k, {x}, x.type(), info); }
  Val arange(std::int64_t n) {
    return emit(OpKind::Arange, {}, tile_type(DType::I32, {n}), Info{static_cast<double>(n), 0, true, 0},
                {{"start", std::int64_t{0}}, {"end", n}});
  }

  // Whether x is a constant (or a splat of one) equal to v.
  static bool is_constant(const Val& x, std::int64_t v) {
    const ir::Op* d = x.v->def;
    if (d && d->kind == OpKind::Splat) d = d->operands[0]->def;
    if (!d || d->kind != OpKind::Constant) return false;
    const auto* i = std::get_if<std::int64_t>(&d->attrs.at("value"));
    return i && *i == v;
  }

  // Clamps x into [-limit, limit] (a power of two at most `limit`), keeping it exact.
  Val tame(const Val& x, double limit) {
    if (x.info.bound <= limit || x.dtype() == DType::I1) return x;
    const double c = std::ldexp(1.0, static_cast<int>(std::floor(std::log2(std::max(limit, 1.0)))));
    Val y = x;
    if (ir::is_float(x.dtype())) {
      y = binary(OpKind::Min, y, splat_const(x, c));
      y = binary(OpKind::Max, y, splat_const(x, -c));
    } else {
      y = binary(OpKind::Min, y, splat_const(x, c));
      if (!ir::is_unsigned(x.dtype())) y = binary(OpKind::Max, y, splat_const(x, -c));
    }
    y.info.bound = std::min(y.info.bound, c);
    y.info = normalized(y.dtype(), y.info);
    return y;
  }
  // A constant of x's type (scalar or tile) with value v.
  Val splat_const(const Val& x, double v) {
    const bool tile = x.type().is_tile();
    const bool as_tile = tile && rng_.chance(0.5);
    Val c = ir::is_float(x.dtype()) ? fconst(x.dtype(), v, as_tile ? x.shape() : Shape{})
                                    : iconst(x.dtype(), static_cast<std::int64_t>(v), as_tile ? x.shape() : Shape{});
    return tile && !as_tile ? splat(c, x.shape()) : c;
  }

  // --- casts and coercion ---

  bool cast_allowed(const Val& x, DType to) const {
    if (!gpu_) return true;
    if (ir::is_float(x.dtype()) && !ir::is_float(to)) return x.info.det;
    return true;
  }
  Val cast(const Val& x_in, DType to) {
    if (x_in.dtype() == to) return x_in;
    Val x = x_in;
    if (gpu_ && ir::is_float(to) && x.dtype() != DType::I1) x = tame(x, soft_limit(to));
    Info i = x.info;
    const DType from = x.dtype();
    if (to == DType::I1) {
      i = Info{1, 0, x.info.det, 0};
    } else if (ir::is_float(to)) {
      if (!ir::is_float(from)) i.quantum = 0;
      if (!i.det) {
        i.err += 2 * roundoff(to) * i.bound;
      } else if (from == DType::F64 && (to == DType::F16 || to == DType::BF16) &&
                 !(i.quantum >= 0 && fits_exactly(DType::F32, i.bound, i.quantum))) {
        // The device may round f64 -> f16 through f32 (twice); the interpreter rounds once.
        i.det = false;
        i.err = 2 * roundoff(to) * i.bound;
      }
    } else if (ir::is_float(from)) {  // float -> int: truncates and saturates
      i = Info{std::min(std::floor(i.bound), int_max(to)), 0, i.det, 0};
    } else {
      const bool keeps = !ir::is_unsigned(to) ? i.bound < int_max(to) : (ir::is_unsigned(from) && i.bound <= int_max(to));
      if (!keeps) i.bound = int_max(to);
    }
    return emit(OpKind::Cast, {x}, x.type().with_dtype(to), i);
  }

  // Reduces x along `axis` with max (keeps the Info), for coercion.
  Val reduce_max(const Val& x, int axis) { return reduce_op(x, axis, OpKind::Max); }

  // x in shape `to` (same dtype), or nullopt when no cheap path exists.
  std::optional<Val> reshape_to(const Val& x, const Shape& to) {
    switch (shape_path(x.shape(), to)) {
      case ShapePath::Same: return x;
      case ShapePath::Splat: return splat(x, to);
      case ShapePath::ExpandBroadcast: {
        std::vector<int> axes;
        for (std::size_t a = 0; a < to.size(); ++a) {
          Shape s = to;
          s.erase(s.begin() + static_cast<std::ptrdiff_t>(a));
          if (s == x.shape()) axes.push_back(static_cast<int>(a));
        }
        const int axis = axes[static_cast<std::size_t>(rng_.uniform(0, static_cast<int>(axes.size()) - 1))];
        return broadcast(expand_dims(x, axis), to);
      }
      case ShapePath::Broadcast: return broadcast(x, to);
      case ShapePath::Trans: return trans(x, {1, 0});
      case ShapePath::Reshape: return reshape(x, to);
      case ShapePath::None: break;
    }
    if (to.empty()) {  // a tile to a scalar: reduce every axis
      Val y = x;
      while (y.type().is_tile()) y = reduce_max(y, y.type().rank() - 1);
      return y;
    }
    return std::nullopt;
  }

  bool coercible(const Val& x, const Type& t) const {
    if (x.type().is_ptr() || t.is_ptr()) return false;
    if (!cast_allowed(x, t.dtype)) return false;
    return shape_path(x.shape(), t.shape) != ShapePath::None;
  }
  Val coerce(const Val& x, const Type& t) {
    // Cast first when it shrinks the work (a scalar), else after the shape change.
    Val y = x;
    if (!y.type().is_tile()) y = cast(y, t.dtype);
    auto s = reshape_to(y, t.shape);
    if (!s) throw InternalError("random program generator: coerce without a path");
    return cast(*s, t.dtype);
  }
  // An operand of type t: a visible value made to fit, or a constant.
  Val operand(const Type& t, double p_value = 0.85) {
    if (rng_.chance(p_value)) {
      auto x = find([&](const Val& v) { return coercible(v, t); });
      if (x) return coerce(*x, t);
    }
    return constant(t.dtype, t.shape);
  }
  // Any visible non-pointer value (a tile more often than a scalar).
  std::optional<Val> any_value(const std::function<bool(const Val&)>& extra = nullptr) {
    const bool want_tile = rng_.chance(0.85);
    auto ok = [&](const Val& v) { return !v.type().is_ptr() && (!extra || extra(v)); };
    auto x = find([&](const Val& v) { return ok(v) && v.type().is_tile() == want_tile; });
    return x ? x : find(ok);
  }

  // --- prologue: domain, offsets, masks, loads ---

  void prologue() {
    p_.mode = gpu_ ? Mode::Gpu : Mode::Wide;
    const bool two_d = rng_.chance(0.45);
    if (!two_d) {
      const std::int64_t B = std::min(max_elements_, std::int64_t{1} << rng_.weighted({1, 1, 1, 1, 3, 3, 4, 4, 4, 3, 2, 1, 1}));
      shape_ = {B};
      const int P = rng_.weighted({0, 4, 3, 2, 1});
      exact_cover_ = rng_.chance(0.3);
      n_ = exact_cover_ ? P * B : (P - 1) * B + rng_.uniform(1, static_cast<int>(B));
      exact_cover_ = n_ == P * B;
      p_.grid = {static_cast<std::uint32_t>(P), 1, 1};
      domain_text_ = fmt::format("1-D tile <{}> over n = {}", B, n_);
    } else {
      std::int64_t M, N;
      do {
        M = std::int64_t{1} << rng_.weighted({1, 1, 2, 3, 3, 3, 2, 1, 1});
        N = std::int64_t{1} << rng_.weighted({1, 1, 2, 3, 3, 3, 2, 1, 1});
      } while (M * N > (rng_.chance(0.2) ? max_elements_ : 1024));
      shape_ = {M, N};
      const int gx = rng_.uniform(1, 2), gy = rng_.uniform(1, 2);
      exact_cover_ = rng_.chance(0.3);
      rows_ = exact_cover_ ? gx * M : (gx - 1) * M + rng_.uniform(1, static_cast<int>(M));
      cols_ = exact_cover_ ? gy * N : (gy - 1) * N + rng_.uniform(1, static_cast<int>(N));
      exact_cover_ = rows_ == gx * M && cols_ == gy * N;
      col_major_ = rng_.chance(0.3);
      p_.grid = {static_cast<std::uint32_t>(gx), static_cast<std::uint32_t>(gy), 1};
      domain_text_ = fmt::format("2-D tile <{}x{}> over {}x{} {}", M, N, rows_, cols_, col_major_ ? "column-major" : "row-major");
    }

    // Input buffers (1 to 3), then the size arguments and an optional scalar.
    const int n_inputs = rng_.weighted({0, 3, 4, 2});
    for (int i = 0; i < n_inputs; ++i) {
      BufferSpec s;
      s.dtype = random_dtype(false);
      s.elements = domain_elements();
      s.bound = ir::is_float(s.dtype) ? 4 : (ir::is_unsigned(s.dtype) ? 60 : 50);
      s.quantum = ir::is_float(s.dtype) ? 2 : 0;
      inputs_.push_back(static_cast<int>(p_.args.size()));
      add_buffer_arg(s, "in" + std::to_string(i));
    }
    const auto pid0 = emit(OpKind::ProgramId, {}, Type::scalar(DType::I32),
                           Info{static_cast<double>(p_.grid[0]), 0, true, 0}, {{"axis", std::int64_t{0}}});
    push(pid0);
    if (shape_.size() == 1) {
      n_arg_ = add_int_arg(n_, "n");
      push(n_arg_);
      // offs = pid * B + arange(B): scalar multiply then splat, or splat then tile multiply.
      const std::int64_t B = shape_[0];
      Val base = rng_.chance(0.5) ? splat(binary(OpKind::Mul, pid0, iconst(DType::I32, B)), shape_)
                                  : binary(OpKind::Mul, splat(pid0, shape_), iconst(DType::I32, B, shape_));
      idx_ = binary(OpKind::Add, base, arange(B));
      offs_ = idx_;
      mask_ = compare(OpKind::CmpLt, idx_, splat(n_arg_, shape_));
      program_ = pid0;
    } else {
      const auto pid1 = emit(OpKind::ProgramId, {}, Type::scalar(DType::I32),
                             Info{static_cast<double>(p_.grid[1]), 0, true, 0}, {{"axis", std::int64_t{1}}});
      push(pid1);
      rows_arg_ = add_int_arg(rows_, "rows");
      cols_arg_ = add_int_arg(cols_, "cols");
      push(rows_arg_);
      push(cols_arg_);
      const std::int64_t M = shape_[0], N = shape_[1];
      Val rows = binary(OpKind::Add, splat(binary(OpKind::Mul, pid0, iconst(DType::I32, M)), {M}), arange(M));
      Val cols = binary(OpKind::Add, splat(binary(OpKind::Mul, pid1, iconst(DType::I32, N)), {N}), arange(N));
      r2_ = broadcast(expand_dims(rows, 1), shape_);
      c2_ = broadcast(expand_dims(cols, 0), shape_);
      offs_ = domain_offsets(r2_, c2_);
      mask_ = binary(OpKind::And, compare(OpKind::CmpLt, r2_, splat(rows_arg_, shape_)),
                     compare(OpKind::CmpLt, c2_, splat(cols_arg_, shape_)));
      // The linear program id: pid0 + pid1 * num_programs(0).
      Val np = emit(OpKind::NumPrograms, {}, Type::scalar(DType::I32), Info{static_cast<double>(p_.grid[0]), 0, true, 0},
                    {{"axis", std::int64_t{0}}});
      program_ = binary(OpKind::Add, pid0, binary(OpKind::Mul, pid1, np));
    }
    push(mask_);
    if (rng_.chance(0.5)) push(offs_);
    if (rng_.chance(0.3)) push(add_float_arg(rng_.uniform(-16, 16) / 4.0, "alpha"));
    for (int a : inputs_) load_domain(a, offs_, mask_, exact_cover_ && rng_.chance(0.5));
  }

  // Row-major r*C + c or column-major r + c*R, with the stride an argument or a constant.
  Val domain_offsets(const Val& r2, const Val& c2) {
    const bool const_stride = rng_.chance(0.4);
    if (!col_major_) {
      Val stride = const_stride ? iconst(DType::I32, cols_, shape_) : splat(cols_arg_, shape_);
      return binary(OpKind::Add, binary(OpKind::Mul, r2, stride), c2);
    }
    Val stride = const_stride ? iconst(DType::I32, rows_, shape_) : splat(rows_arg_, shape_);
    return binary(OpKind::Add, r2, binary(OpKind::Mul, c2, stride));
  }

  // Loads input argument `arg` at `offs` under `mask` (or none), with `other` sometimes.
  void load_domain(int arg, const Val& offs, const Val& mask, bool unmasked) {
    const BufferSpec& spec = p_.buffers[static_cast<std::size_t>(p_.args[static_cast<std::size_t>(arg)].buffer)];
    Val ptr = Val{m_->entry().args[static_cast<std::size_t>(arg)].get(), Info{}};
    Val ptrs = emit(OpKind::AddPtr, {splat(ptr, offs.shape()), offs}, Type::pointer(spec.dtype).with_shape(offs.shape()), Info{});
    Info in{spec.bound, spec.quantum, true, 0};
    if (!gpu_) in = Info{kInf, -1, true, 0};
    std::vector<Val> ops{ptrs};
    if (!unmasked) {
      ops.push_back(mask);
      if (rng_.chance(0.5)) {
        Val other = constant(spec.dtype, offs.shape());
        in = hull(in, other.info);
        ops.push_back(other);
      }
    }
    push(emit(OpKind::Load, ops, tile_type(spec.dtype, offs.shape()), in));
  }

  DType random_dtype(bool allow_i1) {
    switch (rng_.weighted({8, 3, 4, 1.5, 1, 1.5, allow_i1 ? 1.0 : 0.0})) {
      case 0: return DType::F32;
      case 1: return DType::F16;
      case 2: return DType::I32;
      case 3: return kFloatTypes[rng_.uniform(2, 3)];
      case 4: return kIntTypes[rng_.uniform(1, 7)];
      case 5: return kIntTypes[rng_.uniform(0, 1)];
      default: return DType::I1;
    }
  }

  // --- actions ---

  void action() {
    const double region = depth_ < 2 ? 1.0 : 0.0;
    switch (rng_.weighted({10, 5, 6, 3, 4, 3, 4, 2 * region, 1.5 * region, 2, 2, 2, gpu_ ? 0.0 : 1.0, 1, gpu_ ? 0.5 : 1.5,
                           gpu_ ? 0.0 : 2.0, 1.2 * region})) {
      case 0: return act_binary();
      case 1: return act_compare_select();
      case 2: return act_unary();
      case 3: return act_cast();
      case 4: return act_reduce();
      case 5: return act_scan();
      case 6: return act_shape();
      case 7: return act_for();
      case 8: return act_if();
      case 9: return act_load_shifted();
      case 10: return act_gather();
      case 11: return act_store();
      case 12: return act_reload();
      case 13: return act_atomic();
      case 14: return act_constant();
      case 15: return act_fold();
      default: return act_dot_loop();
    }
  }

  // Wide mode: an op on constants only, which canonicalize folds (fold.cpp) and the interpreter
  // computes: the two must agree on NaN, inf, -0, f16/bf16 rounding, wrapping, shifts, division by
  // zero and casts that saturate.
  void act_fold() {
    const DType d = random_dtype(true);
    const Shape s = rng_.chance(0.5) ? Shape{} : shape_;
    const Val a = constant(d, s), b = constant(d, s);
    switch (rng_.uniform(0, 3)) {
      case 0:
      case 1: {
        OpKind k = d == DType::I1 ? rng_.pick({OpKind::And, OpKind::Or, OpKind::Xor})
                 : ir::is_float(d) ? rng_.pick({OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Rem, OpKind::Min, OpKind::Max})
                                   : rng_.pick({OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Rem, OpKind::And,
                                                OpKind::Or, OpKind::Xor, OpKind::Shl, OpKind::Shr, OpKind::Min, OpKind::Max});
        return push(binary(k, a, b));
      }
      case 2:
        return push(compare(rng_.pick({OpKind::CmpEq, OpKind::CmpNe, OpKind::CmpLt, OpKind::CmpLe, OpKind::CmpGt, OpKind::CmpGe}), a, b));
      default: {
        if (rng_.chance(0.5)) return push(cast(a, random_dtype(true)));
        if (ir::is_float(d)) return push(unary(rng_.pick({OpKind::Neg, OpKind::Abs, OpKind::Floor, OpKind::Ceil}), a, a.info));
        return push(unary(d == DType::I1 ? OpKind::Not : rng_.pick({OpKind::Neg, OpKind::Abs, OpKind::Not}), a, a.info));
      }
    }
  }

  // A constant in the pool: ops on two constants are what canonicalize folds (with NaN, inf, -0,
  // wrapping and division by zero in Wide mode), and constants of 0 and 1 hit its identities.
  void act_constant() {
    const DType d = random_dtype(true);
    Shape s;
    if (rng_.chance(0.6)) {
      auto x = any_value([](const Val& v) { return v.type().is_tile(); });
      s = x ? x->shape() : shape_;
    }
    push(constant(d, s));
  }

  void act_binary() {
    auto a0 = any_value();
    if (!a0) return;
    Val a = *a0;
    const DType d = a.dtype();
    OpKind k;
    if (d == DType::I1) {
      k = rng_.pick({OpKind::And, OpKind::Or, OpKind::Xor});
    } else if (ir::is_float(d)) {
      k = rng_.pick({OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Min, OpKind::Max, OpKind::Add,
                     OpKind::Mul, gpu_ ? OpKind::Sub : OpKind::Rem});
    } else {
      k = rng_.pick({OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Rem, OpKind::And, OpKind::Or,
                     OpKind::Xor, OpKind::Shl, OpKind::Shr, OpKind::Min, OpKind::Max});
    }
    Val b = operand(a.type());
    if (gpu_ && !ir::is_float(d) && k == OpKind::Mul && is_constant(b, -1)) b = splat_const(b, 3);  // BUG-4
    if (gpu_ && ir::is_float(d)) {
      // Keep results inside the soft limit, so that error bounds mean something.
      const double lim = soft_limit(d);
      if (k == OpKind::Mul) {
        a = tame(a, std::sqrt(lim));
        b = tame(b, std::sqrt(lim));
      } else if (k == OpKind::Add || k == OpKind::Sub) {
        a = tame(a, lim / 2);
        b = tame(b, lim / 2);
      } else if (k == OpKind::Div) {
        b = binary(OpKind::Add, unary(OpKind::Abs, b, b.info), splat_const(b, 1.0));  // |b| + 1 >= 1
      }
    }
    if (gpu_ && !ir::is_float(d) && (k == OpKind::Div || k == OpKind::Rem)) {
      // Divisors (b & 7) | 1: never 0 (nor -1).
      b = binary(OpKind::Or, binary(OpKind::And, b, splat_const(b, 7)), splat_const(b, 1));
      b.info.bound = 7;
    }
    push(binary(k, a, b));
  }

  void act_compare_select() {
    auto a0 = any_value([&](const Val& v) { return !gpu_ || v.info.det; });
    if (!a0) return;
    Val a = *a0;
    Val b = operand(a.type());
    if (gpu_ && !b.info.det) return;
    OpKind k = rng_.pick({OpKind::CmpEq, OpKind::CmpNe, OpKind::CmpLt, OpKind::CmpLe, OpKind::CmpGt, OpKind::CmpGe});
    Val m = compare(k, a, b);
    if (rng_.chance(0.3)) m = binary(rng_.pick({OpKind::And, OpKind::Or, OpKind::Xor}), m, operand(m.type()));
    if (rng_.chance(0.15)) m = unary(OpKind::Not, m, m.info);
    push(m);
    if (!rng_.chance(0.75)) return;
    auto x0 = any_value([&](const Val& v) { return shape_path(v.shape(), m.shape()) != ShapePath::None && v.dtype() != DType::I1; });
    if (!x0) return;
    Val x = coerce(*x0, x0->type().with_shape(m.shape()));
    Val y = operand(x.type());
    push(select(m, x, y));
  }

  void act_unary() {
    auto x0 = any_value([](const Val& v) { return v.dtype() != DType::I1; });
    if (!x0) return;
    Val x = *x0;
    const DType d = x.dtype();
    if (!ir::is_float(d)) {
      // BUG-4 (tests/random/README.md): ptxas 13.0 at -O1 and above drops the negation of one
      // operand when it fuses min(min(-a, -b), -c) of integers into VIMNMX3 (sm_90a), so Gpu mode
      // makes no integer neg (nor a multiply by -1, which LLVM turns into one).
      OpKind k = gpu_ ? rng_.pick({OpKind::Abs, OpKind::Not}) : rng_.pick({OpKind::Neg, OpKind::Abs, OpKind::Not});
      Info i = x.info;
      if (k == OpKind::Not) i.bound = kInf;
      push(unary(k, x, i));
      return;
    }
    // f64 transcendentals need CUDA's libdevice on NVIDIA (tessera's own math raises a
    // ProgramError), which a machine without CUDA lacks: f64 gets the ops that always compile.
    const bool f64 = d == DType::F64;
    const int choice = f64 ? rng_.pick({0, 1, 7, 8, 9, 10, 14})
                           : rng_.weighted({2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1});
    switch (choice) {
      case 0: push(unary(OpKind::Neg, x, x.info)); return;
      case 1: push(unary(OpKind::Abs, x, x.info)); return;
      case 2: return math1(OpKind::Exp, x);
      case 3: return math1(OpKind::Exp2, x);
      case 4: return math1(OpKind::Log, x);
      case 5: return math1(OpKind::Log2, x);
      case 6: return math1(OpKind::Sin, x);
      case 7: return math1(OpKind::Sqrt, x);
      case 8: return math1(OpKind::Rsqrt, x);
      case 9: return math1(OpKind::Floor, x);
      case 10: return math1(OpKind::Ceil, x);
      case 11: return math1(OpKind::Cos, x);
      case 12: return math1(OpKind::Tanh, x);
      case 13: return math1(OpKind::Sigmoid, x);
      case 14: return act_fma(x);
      case 15: return math1(OpKind::Erf, x);
      default: return act_pow(x);
    }
  }

  // A unary math op; in Gpu mode its input is first brought into the op's domain, and the result's
  // Info carries the op's error bound (README's table: ulps plus absolute terms).
  void math1(OpKind k, Val x) {
    const DType d = x.dtype();
    if (!gpu_) {
      push(unary(k, x, Info{kInf, -1, false, kInf}));
      return;
    }
    const double ulp = std::ldexp(1.0, -23);  // one f32 ulp, relative
    const double f16_round = d == DType::F16 || d == DType::BF16 ? 2 * roundoff(d) : 0;
    Info i;
    double lip = 1, rel = 2 * ulp, abs_err = 0;
    switch (k) {
      case OpKind::Floor:
      case OpKind::Ceil:
        if (!x.info.det) return;
        push(unary(k, x, Info{std::ceil(x.info.bound), 0, true, 0}));
        return;
      case OpKind::Exp:
      case OpKind::Exp2:
      case OpKind::Sigmoid: {
        const double c = d == DType::F16 ? 8 : 16;
        x = tame(x, c);
        const double xb = x.info.bound;
        i.bound = k == OpKind::Exp ? std::exp(xb) : k == OpKind::Exp2 ? std::exp2(xb) : 1;
        lip = k == OpKind::Sigmoid ? 0.25 : i.bound;
        rel = (k == OpKind::Sigmoid ? 3 : 2) * ulp + (k == OpKind::Exp2 ? 0 : xb * 1.4427 * std::ldexp(1.0, -24));
        break;
      }
      case OpKind::Sin:
      case OpKind::Cos:
        x = tame(x, 64);
        i.bound = 1;
        abs_err = std::ldexp(1.0, -22);
        break;
      case OpKind::Tanh:
      case OpKind::Erf:
        x = tame(x, 16);
        i.bound = 1;
        lip = 1.2;
        rel = 4 * ulp;
        abs_err = std::ldexp(1.0, -24);
        break;
      case OpKind::Log:
      case OpKind::Log2:
      case OpKind::Sqrt:
      case OpKind::Rsqrt: {
        // log/rsqrt of |x| + 1 >= 1; sqrt of |x| when x is exact (its slope is unbounded at 0).
        Val ax = unary(OpKind::Abs, x, x.info);
        const bool plus_one = k != OpKind::Sqrt || !x.info.det || rng_.chance(0.5);
        x = plus_one ? binary(OpKind::Add, tame(ax, soft_limit(d) / 2), splat_const(x, 1.0)) : ax;
        const double xb = x.info.bound;
        i.bound = k == OpKind::Log ? std::log(xb + 1) : k == OpKind::Log2 ? std::log2(xb + 1)
                : k == OpKind::Sqrt ? std::sqrt(xb) : 1;
        lip = k == OpKind::Log2 ? 1.5 : 1;
        abs_err = k == OpKind::Log || k == OpKind::Log2 ? std::ldexp(1.0, -20) : 0;
        if (d == DType::F64) rel = 4 * std::ldexp(1.0, -52);
        break;
      }
      default: break;
    }
    i.det = false;
    i.err = x.info.err * lip + (rel + f16_round) * i.bound + abs_err;
    i.quantum = -1;
    push(unary(k, x, i));
  }

  void act_fma(const Val& a0) {
    Val a = a0, b = operand(a0.type()), c = operand(a0.type());
    if (gpu_) {
      const double lim = soft_limit(a.dtype());
      a = tame(a, std::sqrt(lim) / 2);
      b = tame(b, std::sqrt(lim) / 2);
      c = tame(c, lim / 2);
    }
    Info i = binary_info(OpKind::Add, a.dtype(), binary_info(OpKind::Mul, a.dtype(), a.info, b.info), c.info);
    // fma rounds once: the same bits wherever it is computed exactly (f32/f64 fma.rn); f16/bf16
    // round twice (through f32) in both, so only an exact result is certain to match.
    if ((a.dtype() == DType::F16 || a.dtype() == DType::BF16) && i.quantum < 0 && i.det) {
      i.det = false;
      i.err = 2 * roundoff(a.dtype()) * i.bound;
    }
    push(emit(OpKind::Fma, {a, b, c}, a.type(), i));
  }

  void act_pow(const Val& x0) {
    Val a = x0, b = operand(x0.type());
    Info i{kInf, -1, false, kInf};
    if (gpu_) {
      if (!a.info.det || !b.info.det) return;
      a = binary(OpKind::Add, tame(unary(OpKind::Abs, a, a.info), 16), splat_const(a, 1.0));  // in [1, 17]
      b = tame(b, 2);                                                                       // in [-2, 2]
      i.bound = 17.0 * 17.0;
      i.err = (4 * std::ldexp(1.0, -23) + 2 * std::ldexp(1.0, -21) + 2 * roundoff(a.dtype())) * i.bound;
    }
    push(emit(OpKind::Pow, {a, b}, a.type(), i));
  }

  void act_cast() {
    auto x0 = any_value();
    if (!x0) return;
    DType to = random_dtype(true);
    if (to == x0->dtype() || !cast_allowed(*x0, to)) return;
    push(cast(*x0, to));
  }

  // --- reductions and scans ---

  // The combine region of a reduce/scan over one operand: lhs `k` rhs.
  void combine_region(ir::Op* op, const std::vector<Type>& elems, const std::function<std::vector<Value*>(
                                                                      const std::vector<Value*>&, const std::vector<Value*>&)>& body) {
    ir::Block* blk = op->regions[0]->block.get();
    std::vector<Value*> lhs, rhs;
    for (const auto& t : elems) lhs.push_back(blk->add_arg(t));
    for (const auto& t : elems) rhs.push_back(blk->add_arg(t));
    ir::Block* saved = b_.block();
    b_.set_block(blk);
    std::vector<Value*> out = body(lhs, rhs);
    b_.set_loc(loc());
    b_.create(OpKind::Yield, out, {});
    b_.set_block(saved);
  }

  Value* raw_binary(OpKind k, Value* a, Value* b) {
    b_.set_loc(loc());
    Type t = a->type;
    if (k >= OpKind::CmpEq && k <= OpKind::CmpGe) t.dtype = DType::I1;
    return b_.create1(k, {a, b}, t);
  }

  // reduce(x, axis) with a single binary combine op `k`.
  Val reduce_op(const Val& x, int axis, OpKind k, Info info) {
    Shape s = x.shape();
    s.erase(s.begin() + axis);
    b_.set_loc(loc());
    ir::Op* op = b_.create(OpKind::Reduce, {x.v}, {x.type().with_shape(s)}, {{"axis", std::int64_t{axis}}}, 1);
    combine_region(op, {x.type().element()}, [&](const auto& l, const auto& r) {
      return std::vector<Value*>{raw_binary(k, l[0], r[0])};
    });
    return Val{op->result(), normalized(x.dtype(), info)};
  }
  Val reduce_op(const Val& x, int axis, OpKind k) { return reduce_op(x, axis, k, x.info); }

  // The Info of summing `len` elements of `x` in an unknown order (a tree on the GPU).
  Info sum_info(const Val& x, std::int64_t len) const {
    const DType d = x.dtype();
    Info i = x.info;
    i.bound = x.info.bound * static_cast<double>(len);
    if (!ir::is_float(d)) return normalized(d, i);
    if (i.quantum >= 0 && fits_exactly(d, i.bound, i.quantum)) return normalized(d, i);  // exact in any order
    i.quantum = -1;
    // Two summation orders differ by at most 2 (len - 1) u sum|x_i| (f16/bf16 maybe accumulated in f32).
    i.det = false;
    i.err = static_cast<double>(len) * x.info.err + 2.0 * static_cast<double>(len) * roundoff(d) * i.bound;
    return normalized(d, i);
  }
  bool sum_ok(const Val& x, std::int64_t len) const {
    if (!gpu_ || !ir::is_float(x.dtype())) return true;
    Info i = sum_info(x, len);
    return i.bound <= soft_limit(x.dtype()) && (i.det || i.err <= 1e-3 * std::max(1.0, i.bound));
  }

  void act_reduce() {
    auto x0 = any_value([](const Val& v) { return v.type().is_tile() && v.dtype() != DType::I1; });
    if (!x0) return;
    const Val x = *x0;
    const int axis = rng_.uniform(0, x.type().rank() - 1);
    const std::int64_t len = x.shape()[static_cast<std::size_t>(axis)];
    const bool fl = ir::is_float(x.dtype());
    switch (rng_.weighted({4, 2, 2, 1.5, gpu_ ? 0.0 : 0.5, fl ? 0.0 : 1.0})) {
      case 0:
        if (sum_ok(x, len)) return push(reduce_op(x, axis, OpKind::Add, sum_info(x, len)));
        [[fallthrough]];
      case 1: return push(reduce_op(x, axis, OpKind::Max));
      case 2: return push(reduce_op(x, axis, OpKind::Min));
      case 3: return act_argreduce(x, axis);
      case 4: return push(reduce_op(x, axis, OpKind::Mul, Info{kInf, -1, false, kInf}));
      default: {
        Info i = x.info;
        i.bound = kInf;
        return push(reduce_op(x, axis, rng_.pick({OpKind::Xor, OpKind::And, OpKind::Or}), i));
      }
    }
  }

  // argmax/argmin as a two-operand reduce (value, index), as the DSL traces it.
  void act_argreduce(const Val& x, int axis) {
    if (gpu_ && !x.info.det) return;
    const std::int64_t len = x.shape()[static_cast<std::size_t>(axis)];
    Val idx = arange(len);
    for (int d = 0; d < x.type().rank(); ++d)
      if (d != axis) idx = expand_dims(idx, d < axis ? 0 : d);
    idx = broadcast(idx, x.shape());
    Shape s = x.shape();
    s.erase(s.begin() + axis);
    const bool is_max = rng_.chance(0.5);
    b_.set_loc(loc());
    ir::Op* op = b_.create(OpKind::Reduce, {x.v, idx.v}, {x.type().with_shape(s), idx.type().with_shape(s)},
                           {{"axis", std::int64_t{axis}}}, 1);
    combine_region(op, {x.type().element(), idx.type().element()}, [&](const auto& l, const auto& r) {
      Value* better = raw_binary(is_max ? OpKind::CmpGt : OpKind::CmpLt, r[0], l[0]);
      Value* equal = raw_binary(OpKind::CmpEq, r[0], l[0]);
      Value* smaller = raw_binary(OpKind::CmpLt, r[1], l[1]);
      Value* take_r = raw_binary(OpKind::Or, better, raw_binary(OpKind::And, equal, smaller));
      b_.set_loc(loc());
      Value* v = b_.create1(OpKind::Select, {take_r, r[0], l[0]}, r[0]->type);
      Value* i = b_.create1(OpKind::Select, {take_r, r[1], l[1]}, r[1]->type);
      return std::vector<Value*>{v, i};
    });
    push(Val{op->result(0), x.info});
    push(Val{op->result(1), Info{static_cast<double>(len), 0, true, 0}});
  }

  void act_scan() {
    auto x0 = any_value([](const Val& v) { return v.type().is_tile() && v.dtype() != DType::I1; });
    if (!x0) return;
    const Val x = *x0;
    const int axis = rng_.uniform(0, x.type().rank() - 1);
    const std::int64_t len = x.shape()[static_cast<std::size_t>(axis)];
    const bool reverse = rng_.chance(0.4);
    OpKind k = rng_.pick({OpKind::Add, OpKind::Add, OpKind::Max, OpKind::Min});
    Info info = x.info;
    if (k == OpKind::Add) {
      if (!sum_ok(x, len)) k = OpKind::Max;
      else info = sum_info(x, len);
    }
    if (!gpu_ && rng_.chance(0.1)) {
      k = ir::is_float(x.dtype()) ? OpKind::Mul : rng_.pick({OpKind::Mul, OpKind::Xor, OpKind::Or});
      info = Info{kInf, -1, false, kInf};
    }
    b_.set_loc(loc());
    ir::Op* op = b_.create(OpKind::Scan, {x.v}, {x.type().with_shape(x.shape())},
                           {{"axis", std::int64_t{axis}}, {"reverse", std::int64_t{reverse ? 1 : 0}}}, 1);
    combine_region(op, {x.type().element()}, [&](const auto& l, const auto& r) {
      return std::vector<Value*>{raw_binary(k, l[0], r[0])};
    });
    push(Val{op->result(), normalized(x.dtype(), info)});
  }

  // --- shape ops ---

  // A random shape of `n` elements (powers of two), of rank 1 to 3.
  Shape random_shape(std::int64_t n) {
    const int rank = rng_.weighted({0, 3, 4, 1});
    Shape s(static_cast<std::size_t>(rank), 1);
    std::int64_t left = n;
    for (int d = 0; d < rank - 1; ++d) {
      const int bits = static_cast<int>(std::log2(static_cast<double>(left)));
      const std::int64_t v = std::int64_t{1} << rng_.uniform(0, bits);
      s[static_cast<std::size_t>(d)] = v;
      left /= v;
    }
    s.back() = left;
    return s;
  }

  void act_shape() {
    auto x0 = any_value([](const Val& v) { return v.type().is_tile(); });
    if (!x0) return;
    const Val x = *x0;
    const int rank = x.type().rank();
    switch (rng_.weighted({3, 3, 3, 2, 1})) {
      case 0: {  // trans
        if (rank < 2) return push(reshape(x, random_shape(numel(x.shape()))));
        std::vector<std::int64_t> order(static_cast<std::size_t>(rank));
        for (int i = 0; i < rank; ++i) order[static_cast<std::size_t>(i)] = i;
        while (true) {
          for (int i = rank - 1; i > 0; --i) std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(rng_.uniform(0, i))]);
          bool identity = true;
          for (int i = 0; i < rank; ++i) identity = identity && order[static_cast<std::size_t>(i)] == i;
          if (!identity) break;
        }
        return push(trans(x, order));
      }
      case 1:  // reshape
        return push(reshape(x, random_shape(numel(x.shape()))));
      case 2: {  // expand_dims, then broadcast the new dim
        if (rank >= 3) return push(reshape(x, random_shape(numel(x.shape()))));
        const int axis = rng_.uniform(0, rank);
        Val e = expand_dims(x, axis);
        push(e);
        const std::int64_t room = max_elements_ / numel(x.shape());
        if (room >= 2 && rng_.chance(0.8)) {
          Shape s = e.shape();
          s[static_cast<std::size_t>(axis)] = std::int64_t{1} << rng_.uniform(1, std::min(4, static_cast<int>(std::log2(static_cast<double>(room)))));
          push(broadcast(e, s));
        }
        return;
      }
      case 3: {  // join two values of one type into a new last dim of 2
        if (numel(x.shape()) * 2 > max_elements_ || rank >= 3) return;
        Val y = operand(x.type());
        Shape s = x.shape();
        s.push_back(2);
        Info i = hull(x.info, y.info);
        Val j = emit(OpKind::Join, {x, y}, x.type().with_shape(s), i);
        push(j);
        if (rng_.chance(0.5)) split(j);
        return;
      }
      default:
        if (x.shape().back() == 2) split(x);
        else if (rank == 1 && x.shape()[0] >= 2) split(reshape(x, {x.shape()[0] / 2, 2}));
        return;
    }
  }

  void split(const Val& x) {
    Shape s = x.shape();
    s.pop_back();
    b_.set_loc(loc());
    ir::Op* op = b_.create(OpKind::Split, {x.v}, {x.type().with_shape(s), x.type().with_shape(s)});
    push(Val{op->result(0), x.info});
    push(Val{op->result(1), x.info});
  }

  // --- control flow ---

  template <class F>
  void in_region(ir::Block* blk, F&& body) {
    ir::Block* saved = b_.block();
    b_.set_block(blk);
    scopes_.emplace_back();
    ++depth_;
    body();
    --depth_;
    scopes_.pop_back();
    b_.set_block(saved);
  }

  void act_for() {
    const int trips = rng_.weighted({0.5, 2, 3.5, 2.5, 1.5});
    const int step = rng_.pick({1, 1, 2, -1});
    const int lb = rng_.pick({0, 0, 1, 2});
    const DType ivt = rng_.chance(0.85) ? DType::I32 : DType::I64;
    Val lbv = iconst(ivt, lb), stv = iconst(ivt, step);
    Val ubv;
    // A trip count the compiler cannot see: lb + trips * step from an argument. BUG-5
    // (tests/random/README.md): ptxas 13.0 -O3 unrolls a count-down loop whose bound is the
    // negation of a parameter and runs too few iterations, so Gpu mode counts those up only.
    if (rng_.chance(0.3) && !(gpu_ && step < 0)) {
      Val t = add_int_arg(trips, "trips" + std::to_string(p_.args.size()));
      ubv = binary(OpKind::Add, lbv, binary(OpKind::Mul, cast(t, ivt), stv));
    } else {
      ubv = iconst(ivt, lb + trips * step);
    }
    const int n_carried = rng_.uniform(1, 2);
    std::vector<Val> inits;
    for (int i = 0; i < n_carried; ++i) {
      auto x = any_value([&](const Val& v) { return !gpu_ || v.dtype() != DType::I1; });
      inits.push_back(x ? *x : constant(DType::F32, shape_));
    }
    std::vector<Value*> operands{lbv.v, ubv.v, stv.v};
    std::vector<Type> types;
    for (auto& v : inits) {
      operands.push_back(v.v);
      types.push_back(v.type());
    }
    b_.set_loc(loc());
    ir::Op* op = b_.create(OpKind::For, operands, types, {}, 1);
    ir::Block* body = op->regions[0]->block.get();
    Value* iv = body->add_arg(Type::scalar(ivt));
    std::vector<Val> args;
    for (auto& t : types) args.push_back(Val{body->add_arg(t), Info{kInf, -1, false, kInf}});
    std::vector<Info> result_info;
    in_region(body, [&] {
      const double ivb = std::max(std::abs(lb), std::abs(lb + trips * step)) + std::abs(step);
      push(Val{iv, Info{ivb, 0, true, 0}});
      // In Gpu mode the carried values are read only by the final combine below, whose result
      // Info is known in closed form; in Wide mode the body may use them anywhere.
      if (!gpu_)
        for (auto& a : args) push(a);
      const int steps = rng_.uniform(1, 5);
      for (int i = 0; i < steps; ++i) action();
      if (rng_.chance(0.5)) load_at_iv(Val{iv, Info{ivb, 0, true, 0}});
      std::vector<Value*> yields;
      for (std::size_t i = 0; i < args.size(); ++i) {
        Val v = operand(types[i]);
        Val next = carry(args[i], inits[i], v, trips);
        yields.push_back(next.v);
        result_info.push_back(next.info);
      }
      b_.set_loc(loc());
      b_.create(OpKind::Yield, yields, {});
    });
    for (std::size_t i = 0; i < types.size(); ++i) push(Val{op->result(static_cast<int>(i)), result_info[i]});
  }

  // The tile x[r, c] (r: row indices, c: column indices) of a buffer with strides (sr, sc), masked
  // by rmask[r] & cmask[c] with `other` 0 when `masked`.
  Val load_tile(const Val& ptr, const BufferSpec& spec, const Val& r, const Val& c, const Val& sr, const Val& sc,
                const Val& rmask, const Val& cmask, bool masked) {
    const Shape shape{r.shape()[0], c.shape()[0]};
    Val r2 = broadcast(expand_dims(r, 1), shape), c2 = broadcast(expand_dims(c, 0), shape);
    Val offs = binary(OpKind::Add, binary(OpKind::Mul, r2, splat(sr, shape)), binary(OpKind::Mul, c2, splat(sc, shape)));
    Val ptrs = emit(OpKind::AddPtr, {splat(ptr, shape), offs}, Type::pointer(spec.dtype).with_shape(shape), Info{});
    Info info = gpu_ ? Info{spec.bound, spec.quantum, true, 0} : Info{kInf, -1, true, 0};
    if (!masked) return emit(OpKind::Load, {ptrs}, tile_type(spec.dtype, shape), info);
    Val mask = binary(OpKind::And, broadcast(expand_dims(rmask, 1), shape), broadcast(expand_dims(cmask, 0), shape));
    Val zero = ir::is_float(spec.dtype) ? fconst(spec.dtype, 0.0, shape) : iconst(spec.dtype, 0, shape);
    return emit(OpKind::Load, {ptrs, mask, zero}, tile_type(spec.dtype, shape), info);
  }

  // dot(a, b, acc) with its Info: exact (the same bits in any order of summation) when the
  // products of multiples of 2^-q below the bounds, summed K times onto acc, fit the mantissa.
  Val emit_dot(const Val& a, const Val& b, const Val& acc) {
    const DType acc_t = acc.dtype();
    std::map<std::string, ir::Attr> attrs;
    std::string precision;
    if (a.dtype() == DType::F32) attrs["input_precision"] = precision = rng_.pick({"tf32", "tf32", "tf32x3", "ieee"});
    // Operands the tensor cores take as tf32 are compared only where tf32 holds them exactly (11
    // significant bits): whether mma/wgmma drop the low bits as the interpreter's truncation does
    // is not what these programs test (the chained dot's f32 operand has up to 17 bits).
    auto tf32_exact = [&](const Info& x) {
      return precision.empty() || precision == "ieee" || (x.quantum >= 0 && std::ldexp(x.bound, x.quantum) <= 2048);
    };
    Info i;
    i.bound = acc.info.bound + static_cast<double>(a.shape()[1]) * a.info.bound * b.info.bound;
    i.quantum = a.info.quantum >= 0 && b.info.quantum >= 0 && acc.info.quantum >= 0
                    ? std::max(acc.info.quantum, a.info.quantum + b.info.quantum) : -1;
    i.det = !gpu_ || (a.info.det && b.info.det && acc.info.det && fits_exactly(acc_t, i.bound, i.quantum) &&
                      tf32_exact(a.info) && tf32_exact(b.info));
    i.err = i.det ? 0 : kInf;
    return emit(OpKind::Dot, {a, b, acc}, acc.type(), i, attrs);
  }

  // A matmul loop as the DSL traces tl.dot's tutorial: acc (M x N) += A[rows, k0:k0+BK] . B[k0:k0+BK,
  // cols] for k0 in [0, K) step BK, with A (program-major rows: program P reads rows P*M.., the
  // last rows maybe masked off) and B (shared by all programs) new input buffers, each row- or
  // column-major, K not always a multiple of BK (the edge masked, `other` 0). Operands f16, bf16,
  // f32 (input_precision tf32, tf32x3 or ieee) or i8. The first such loop sets the module's
  // num_stages (1 to 5), so the pipeline pass turns its loads into shared-memory rings. In Gpu
  // mode the inputs are small multiples of 1/4 (or small integers) and K is short, so every
  // partial sum is exact and any order of summation (the tensor cores') gives the same bits.
  void act_dot_loop() {
    const DType in = rng_.pick({DType::F16, DType::BF16, DType::F16, DType::BF16, DType::F32, DType::I8});
    const DType acc_t = in == DType::I8 ? DType::I32 : DType::F32;
    std::int64_t M, N;
    if (shape_.size() == 2 && shape_[0] >= 16 && shape_[1] >= 16 && rng_.chance(0.6)) {
      M = shape_[0], N = shape_[1];  // the domain's tile: the product mixes with its values
    } else {
      do {
        M = rng_.pick<std::int64_t>({16, 32, 64});
        N = rng_.pick<std::int64_t>({16, 32, 64});
      } while (M * N > max_elements_);
    }
    std::int64_t BK = rng_.pick<std::int64_t>({16, 32, 64});
    while (BK > 16 && (M * BK > max_elements_ || BK * N > max_elements_)) BK /= 2;
    if (M * N > max_elements_ || M * BK > max_elements_ || BK * N > max_elements_) return;
    const int trips = rng_.weighted({0.3, 2, 2, 1.5, 1});
    const std::int64_t K = std::max<std::int64_t>(1, trips * BK - (rng_.chance(0.5) ? rng_.uniform(1, static_cast<int>(BK) - 1) : 0));
    const std::int64_t R = total_programs() * M - (rng_.chance(0.3) ? rng_.uniform(1, static_cast<int>(M) - 1) : 0);
    if (m_->num_stages == 1) m_->num_stages = rng_.pick({1, 2, 3, 3, 4, 5});

    // Inputs: A is R x K, B is K x N; each row-major (stride of a row: an argument or a constant)
    // or column-major.
    auto operand_buffer = [&](std::int64_t rows, std::int64_t cols, const std::string& name) {
      BufferSpec spec;
      spec.dtype = in;
      spec.elements = rows * cols;
      spec.bound = in == DType::I8 ? 50 : 4;
      spec.quantum = in == DType::I8 ? 0 : 2;
      return std::make_pair(add_buffer_arg(spec, name + std::to_string(p_.buffers.size())), spec);
    };
    auto strides = [&](std::int64_t rows, std::int64_t cols) {  // {row stride, column stride}
      const bool col_major = rng_.chance(0.35);
      const std::int64_t s = col_major ? rows : cols;
      Val stride = rng_.chance(0.4) ? add_int_arg(s, "ld" + std::to_string(p_.args.size())) : iconst(DType::I32, s);
      return col_major ? std::make_pair(iconst(DType::I32, 1), stride) : std::make_pair(stride, iconst(DType::I32, 1));
    };
    auto [a_ptr, a_spec] = operand_buffer(R, K, "a");
    auto [b_ptr, b_spec] = operand_buffer(K, N, "b");
    const auto [a_sr, a_sc] = strides(R, K);
    const auto [b_sr, b_sc] = strides(K, N);
    Val k_bound = rng_.chance(0.4) ? add_int_arg(K, "k" + std::to_string(p_.args.size())) : iconst(DType::I32, K);
    Val rows = binary(OpKind::Add, splat(binary(OpKind::Mul, program_, iconst(DType::I32, M)), {M}), arange(M));
    Val row_mask = compare(OpKind::CmpLt, rows, iconst(DType::I32, R, {M}));
    Val cols = arange(N);
    Val acc0 = acc_t == DType::I32 ? iconst(acc_t, 0, {M, N}) : fconst(acc_t, 0.0, {M, N});

    Val lbv = iconst(DType::I32, 0), stv = iconst(DType::I32, BK);
    Val ubv = rng_.chance(0.4) ? k_bound : iconst(DType::I32, K);
    b_.set_loc(loc());
    ir::Op* op = b_.create(OpKind::For, {lbv.v, ubv.v, stv.v, acc0.v}, {acc0.type()}, {}, 1);
    ir::Block* body = op->regions[0]->block.get();
    Value* iv = body->add_arg(Type::scalar(DType::I32));
    Value* acc = body->add_arg(acc0.type());
    // The accumulator's Info in any iteration: as after the last one (trips * BK >= K products).
    Info iteration_info = gpu_ ? Info{0, 0, true, 0} : Info{kInf, -1, true, 0};
    if (gpu_) {
      const double bound = static_cast<double>(K) * a_spec.bound * b_spec.bound;
      iteration_info = Info{bound, 2 * a_spec.quantum, true, 0};
    }
    Info result;
    in_region(body, [&] {
      Val ks = binary(OpKind::Add, splat(Val{iv, Info{static_cast<double>(K + BK), 0, true, 0}}, {BK}), arange(BK));
      Val k_mask = compare(OpKind::CmpLt, ks, splat(k_bound, {BK}));
      const bool k_edge = K % BK != 0 || rng_.chance(0.5);
      Val true_n = compare(OpKind::CmpGe, cols, iconst(DType::I32, 0, {N}));
      Val a = load_tile(a_ptr, a_spec, rows, ks, a_sr, a_sc, row_mask, k_mask, k_edge || R % M != 0);
      Val b = load_tile(b_ptr, b_spec, ks, cols, b_sr, b_sc, k_mask, true_n, k_edge);
      // Sometimes an operand is not the load itself (negated: exact): the pipeline pass then
      // carries it in registers, and the dot stages it in shared memory itself.
      if (rng_.chance(0.2)) a = unary(OpKind::Neg, a, a.info);
      if (rng_.chance(0.2)) b = unary(OpKind::Neg, b, b.info);
      Val next = emit_dot(a, b, Val{acc, iteration_info});
      result = next.info;
      b_.set_loc(loc());
      b_.create(OpKind::Yield, {next.v}, {});
    });
    Val product{op->result(0), normalized(acc_t, result)};
    push(product);
    // A chained dot, as attention's P.V: the product cast to the operand type is the next A.
    const std::int64_t N2 = rng_.pick<std::int64_t>({16, 32});
    if (!rng_.chance(0.3) || M * N2 > max_elements_ || N * N2 > max_elements_) return;
    Val x = cast(product, in);
    auto [c_ptr, c_spec] = operand_buffer(N, N2, "c");
    Val w = load_tile(c_ptr, c_spec, arange(N), arange(N2), iconst(DType::I32, N2), iconst(DType::I32, 1), Val{}, Val{}, false);
    Val zero = acc_t == DType::I32 ? iconst(acc_t, 0, {M, N2}) : fconst(acc_t, 0.0, {M, N2});
    push(emit_dot(x, w, zero));
  }

  // The next value of a loop-carried `arg` from the body's value v. Gpu mode: an accumulation
  // whose Info after `trips` iterations is known (sum, max, min, select); Wide: anything.
  Val carry(const Val& arg, const Val& init, Val v, int trips) {
    const DType d = arg.dtype();
    if (!gpu_) {
      switch (rng_.uniform(0, 3)) {
        case 0: return v;
        case 1: return select(operand(arg.type().with_dtype(DType::I1)), v, arg);
        default: {
          OpKind k = d == DType::I1 ? OpKind::Xor
                   : ir::is_float(d) ? rng_.pick({OpKind::Add, OpKind::Mul, OpKind::Max, OpKind::Sub})
                                     : rng_.pick({OpKind::Add, OpKind::Xor, OpKind::Mul, OpKind::Div, OpKind::Min});
          return binary(k, arg, v);
        }
      }
    }
    const double t = std::max(trips, 1);
    const bool fl = ir::is_float(d);
    int kind = rng_.uniform(0, 3);  // 0 sum, 1 max, 2 min, 3 select
    if (kind == 0 && fl) {
      const double room = (soft_limit(d) - init.info.bound) / t;
      if (room < 1) kind = 1;
      else v = tame(v, room);
    }
    Info i;
    Val next;
    switch (kind) {
      case 0: {
        next = binary(OpKind::Add, arg, v);
        i.bound = init.info.bound + t * v.info.bound;
        i.quantum = init.info.quantum >= 0 && v.info.quantum >= 0 ? std::max(init.info.quantum, v.info.quantum) : -1;
        i.det = init.info.det && v.info.det;  // the same additions in the same order
        i.err = init.info.err + t * (v.info.err + 2 * roundoff(d) * i.bound);
        break;
      }
      case 1:
      case 2:
        next = binary(kind == 1 ? OpKind::Max : OpKind::Min, arg, v);
        i = hull(init.info, v.info);
        break;
      default: {
        Val c = operand(arg.type().with_dtype(DType::I1));
        if (!c.info.det) c = constant(DType::I1, arg.shape());
        next = select(c, v, arg);
        i = hull(init.info, v.info);
        break;
      }
    }
    next.info = normalized(d, i);
    return next;
  }

  // A load that moves with the induction variable: the domain shifted by iv (masked in bounds).
  void load_at_iv(const Val& iv) {
    if (inputs_.empty()) return;
    Val s = iv.dtype() == DType::I32 ? iv : cast(iv, DType::I32);
    shifted_load(s);
  }

  void act_if() {
    auto s0 = find([&](const Val& v) { return !v.type().is_tile() && !v.type().is_ptr() && v.dtype() != DType::I1 && (!gpu_ || v.info.det); });
    if (!s0) return;
    // Sometimes a condition canonicalize can decide (the if is then inlined).
    Val c = rng_.chance(0.2) ? constant(DType::I1, {})
                             : compare(rng_.pick({OpKind::CmpEq, OpKind::CmpLt, OpKind::CmpGe, OpKind::CmpNe}), *s0,
                                       constant(s0->dtype(), {}));
    const int n_results = rng_.uniform(0, 2);
    std::vector<Type> types;
    for (int i = 0; i < n_results; ++i) {
      auto x = any_value();
      types.push_back(x ? x->type() : tile_type(DType::F32, shape_));
    }
    b_.set_loc(loc());
    ir::Op* op = b_.create(OpKind::If, {c.v}, types, {}, 2);
    std::vector<Info> infos(types.size());
    for (int r = 0; r < 2; ++r) {
      in_region(op->regions[static_cast<std::size_t>(r)]->block.get(), [&] {
        const int steps = rng_.uniform(0, 3);
        for (int i = 0; i < steps; ++i) action();
        std::vector<Value*> yields;
        for (std::size_t i = 0; i < types.size(); ++i) {
          Val v = operand(types[i]);
          yields.push_back(v.v);
          infos[i] = r == 0 ? v.info : hull(infos[i], v.info);
        }
        b_.set_loc(loc());
        b_.create(OpKind::Yield, yields, {});
      });
    }
    for (std::size_t i = 0; i < types.size(); ++i) push(Val{op->result(static_cast<int>(i)), infos[i]});
  }

  // --- memory ---

  // The domain shifted by scalar i32 s (rows in 2-D), loaded from a random input under the mask
  // of the shifted positions that lie inside the buffer.
  void shifted_load(const Val& s) {
    const int arg = inputs_[static_cast<std::size_t>(rng_.uniform(0, static_cast<int>(inputs_.size()) - 1))];
    Val offs, mask;
    if (shape_.size() == 1) {
      Val i2 = binary(OpKind::Add, idx_, splat(s, shape_));
      offs = i2;
      mask = binary(OpKind::And, compare(OpKind::CmpGe, i2, iconst(DType::I32, 0, shape_)),
                    compare(OpKind::CmpLt, i2, splat(n_arg_, shape_)));
    } else {
      const bool along_rows = rng_.chance(0.5);
      Val r = along_rows ? binary(OpKind::Add, r2_, splat(s, shape_)) : r2_;
      Val c = along_rows ? c2_ : binary(OpKind::Add, c2_, splat(s, shape_));
      offs = domain_offsets(r, c);
      Val shifted = along_rows ? r : c;
      Val limit = along_rows ? rows_arg_ : cols_arg_;
      mask = binary(OpKind::And, compare(OpKind::CmpGe, shifted, iconst(DType::I32, 0, shape_)),
                    compare(OpKind::CmpLt, shifted, splat(limit, shape_)));
      mask = binary(OpKind::And, mask, mask_);
    }
    load_domain(arg, offs, mask, false);
  }

  void act_load_shifted() {
    if (inputs_.empty()) return;
    auto s0 = find([&](const Val& v) { return !v.type().is_tile() && ir::is_int(v.dtype()) && v.dtype() != DType::I1 && (!gpu_ || v.info.det); });
    Val s = s0 ? *s0 : iconst(DType::I32, rng_.uniform(-3, 3));
    if (s.dtype() != DType::I32) s = cast(s, DType::I32);
    if (gpu_) s = tame(s, 1 << 20);  // keeps the shifted index from wrapping
    shifted_load(s);
  }

  // A load at computed indices, clamped into the buffer: a gather.
  void act_gather() {
    if (inputs_.empty()) return;
    auto x0 = any_value([&](const Val& v) { return v.type().is_tile() && v.dtype() != DType::I1 && cast_allowed(v, DType::I32); });
    if (!x0) return;
    const int arg = inputs_[static_cast<std::size_t>(rng_.uniform(0, static_cast<int>(inputs_.size()) - 1))];
    const BufferSpec& spec = p_.buffers[static_cast<std::size_t>(p_.args[static_cast<std::size_t>(arg)].buffer)];
    Val i = cast(*x0, DType::I32);
    i = binary(OpKind::Max, i, splat_const(i, 0));
    i = binary(OpKind::Min, i, splat_const(i, static_cast<double>(spec.elements - 1)));
    if (rng_.chance(0.3)) i = cast(i, DType::I64);
    Val ptr = Val{m_->entry().args[static_cast<std::size_t>(arg)].get(), Info{}};
    Val ptrs = emit(OpKind::AddPtr, {splat(ptr, i.shape()), i}, Type::pointer(spec.dtype).with_shape(i.shape()), Info{});
    std::vector<Val> ops{ptrs};
    Info in = gpu_ ? Info{spec.bound, spec.quantum, true, 0} : Info{kInf, -1, true, 0};
    if (rng_.chance(0.5)) {
      ops.push_back(operand(i.type().with_dtype(DType::I1), 0.7));
      if (gpu_ && !ops.back().info.det) return;
      if (rng_.chance(0.5)) {
        ops.push_back(constant(spec.dtype, i.shape()));
        in = hull(in, ops.back().info);
      }
    }
    push(emit(OpKind::Load, ops, tile_type(spec.dtype, i.shape()), in));
  }

  // Offsets of each element of a `shape` tile in row-major order.
  Val linear_index(const Shape& shape) {
    const int rank = static_cast<int>(shape.size());
    if (rank >= 2 && rng_.chance(0.4)) return reshape(arange(numel(shape)), shape);
    Val sum;
    std::int64_t stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      Val a = arange(shape[static_cast<std::size_t>(d)]);
      for (int e = 0; e < rank; ++e)
        if (e != d) a = expand_dims(a, e);
      a = broadcast(a, shape);
      if (stride != 1) a = binary(OpKind::Mul, a, iconst(DType::I32, stride, shape));
      sum = sum.v ? binary(OpKind::Add, sum, a) : a;
      stride *= shape[static_cast<std::size_t>(d)];
    }
    return sum;
  }

  Val new_output(DType d, std::int64_t elements, double tolerance) {
    BufferSpec s;
    s.dtype = d;
    s.elements = elements;
    s.output = true;
    s.tolerance = tolerance;
    return add_buffer_arg(s, "out" + std::to_string(p_.buffers.size()));
  }

  void store_value(Val v) {
    if (gpu_ && v.dtype() == DType::I1) v = cast(v, DType::I8);
    const double tol = v.info.det ? 0.0 : v.info.err;
    if (gpu_ && !(tol < kInf)) return;
    if (v.shape() == shape_ && rng_.chance(0.7)) {
      Val out = new_output(v.dtype(), domain_elements(), tol);
      Val ptrs = emit(OpKind::AddPtr, {splat(out, shape_), offs_}, Type::pointer(v.dtype()).with_shape(shape_), Info{});
      std::vector<Val> ops{ptrs, v};
      Val mask = mask_;
      bool masked = !(exact_cover_ && rng_.chance(0.4));
      if (masked && rng_.chance(0.3)) {
        Val extra = operand(mask_.type(), 0.9);
        if (!gpu_ || extra.info.det) mask = binary(OpKind::And, mask_, extra);
      }
      if (masked) ops.push_back(mask);
      b_.set_loc(loc());
      std::vector<Value*> vs;
      for (auto& o : ops) vs.push_back(o.v);
      b_.create(OpKind::Store, vs, {});
      domain_stores_.push_back(DomainStore{out.v, v.dtype(), mask, masked});
      return;
    }
    // Program-major: program P writes elements [P * k, (P + 1) * k).
    const std::int64_t k = numel(v.shape());
    Val out = new_output(v.dtype(), total_programs() * k, tol);
    Val base = binary(OpKind::Mul, program_, iconst(DType::I32, k));
    std::vector<Val> ops;
    if (!v.type().is_tile()) {
      ops.push_back(emit(OpKind::AddPtr, {out, base}, Type::pointer(v.dtype()), Info{}));
      ops.push_back(v);
    } else {
      Val offs = binary(OpKind::Add, splat(base, v.shape()), linear_index(v.shape()));
      ops.push_back(emit(OpKind::AddPtr, {splat(out, v.shape()), offs}, Type::pointer(v.dtype()).with_shape(v.shape()), Info{}));
      ops.push_back(v);
      if (rng_.chance(0.3)) {
        Val mask = operand(v.type().with_dtype(DType::I1), 0.9);
        if (!gpu_ || mask.info.det) ops.push_back(mask);
      }
    }
    b_.set_loc(loc());
    std::vector<Value*> vs;
    for (auto& o : ops) vs.push_back(o.v);
    b_.create(OpKind::Store, vs, {});
  }

  void act_store() {
    auto v = any_value();
    if (v) store_value(*v);
  }

  // Wide mode: read back what this program stored into the domain (hoist-loads must not move the
  // load above the store).
  void act_reload() {
    if (domain_stores_.empty()) return;
    const DomainStore& s = domain_stores_[static_cast<std::size_t>(rng_.uniform(0, static_cast<int>(domain_stores_.size()) - 1))];
    if (!visible(s.mask.v)) return;
    Val ptrs = emit(OpKind::AddPtr, {splat(Val{s.ptr_arg, Info{}}, shape_), offs_}, Type::pointer(s.dtype).with_shape(shape_), Info{});
    std::vector<Val> ops{ptrs};
    if (s.masked || !exact_cover_) ops.push_back(s.mask);
    push(emit(OpKind::Load, ops, tile_type(s.dtype, shape_), Info{kInf, -1, false, kInf}));
  }
  bool visible(const Value* v) const {
    for (const auto& s : scopes_)
      for (const auto& x : s)
        if (x.v == v) return true;
    return v == mask_.v || v == offs_.v;
  }

  // atomic_rmw on a program-major output: lanes of one program contend for k / 2^j addresses.
  void act_atomic() {
    auto x0 = any_value([&](const Val& v) { return v.type().is_tile() && (!gpu_ || v.info.det); });
    if (!x0) return;
    static constexpr std::string_view kOps[] = {"add", "max", "min", "and", "or", "xchg"};
    std::string op(kOps[rng_.uniform(0, gpu_ ? 4 : 5)]);
    DType d = rng_.pick({DType::I32, DType::I32, DType::U32, DType::I64, DType::F32, DType::F64});
    if (ir::is_float(d) && (gpu_ || op == "and" || op == "or")) d = DType::I32;
    if (!cast_allowed(*x0, d)) return;
    Val v = cast(*x0, d);
    const Shape shape = v.shape();
    const std::int64_t k = numel(shape);
    const std::int64_t w = std::max<std::int64_t>(1, k >> rng_.uniform(0, 3));
    Val out = new_output(d, total_programs() * w, 0);
    Val lin = binary(OpKind::And, linear_index(shape), iconst(DType::I32, w - 1, shape));
    Val offs = binary(OpKind::Add, splat(binary(OpKind::Mul, program_, iconst(DType::I32, w)), shape), lin);
    Val ptrs = emit(OpKind::AddPtr, {splat(out, shape), offs}, Type::pointer(d).with_shape(shape), Info{});
    std::vector<Val> ops{ptrs, v};
    if (rng_.chance(0.4)) {
      Val m = operand(v.type().with_dtype(DType::I1), 0.8);
      if (!gpu_ || m.info.det) ops.push_back(m);
    }
    const std::map<std::string, ir::Attr> attrs{{"op", op},
                                                {"sem", std::string(rng_.pick({"relaxed", "acq_rel", "acquire", "release"}))},
                                                {"scope", std::string(rng_.pick({"gpu", "cta", "sys"}))}};
    // The old values depend on the order of the lanes: only Wide mode (one order: the
    // interpreter's) reads them. atomic_cas leaves memory depending on that order too: Wide only.
    if (!gpu_ && op != "and" && op != "or" && rng_.chance(0.25)) {
      Val cmp = operand(v.type());
      std::map<std::string, ir::Attr> cas_attrs = attrs;
      cas_attrs.erase("op");
      push(emit(OpKind::AtomicCas, {ptrs, cmp, v}, v.type(), Info{kInf, -1, false, kInf}, cas_attrs));
      return;
    }
    Val old = emit(OpKind::AtomicRmw, ops, v.type(), Info{kInf, -1, false, kInf}, attrs);
    if (!gpu_) push(old);
  }

  // --- epilogue ---

  void epilogue() {
    std::map<const Value*, int> uses;
    ir::walk(m_->entry(), [&](ir::Op& op) {
      for (auto* v : op.operands) ++uses[v];
    });
    int stored = 0;
    const auto& top = scopes_.front();
    for (auto it = top.rbegin(); it != top.rend() && stored < 4; ++it) {
      if (it->type().is_ptr() || uses[it->v] > 0) continue;
      if (gpu_ && !it->info.det && !(it->info.err < kInf)) continue;
      store_value(*it);
      ++stored;
    }
    if (stored == 0 && p_.buffers.size() == inputs_.size()) store_value(top.back());
  }
};

}  // namespace

const char* mode_name(Mode m) { return m == Mode::Gpu ? "gpu" : "wide"; }

Mode default_mode(std::uint64_t seed) { return seed % 4 == 3 ? Mode::Gpu : Mode::Wide; }

Program generate(std::uint64_t seed, Mode mode) {
  Program p;
  p.seed = seed;
  p.mode = mode;
  Generator g(seed, mode, p);
  g.run();
  try {
    ir::verify(*p.module);
  } catch (const Error& e) {
    throw InternalError(fmt::format("random program generator: seed {} ({} mode) built IR that does not verify: {}\n{}",
                                    seed, mode_name(mode), e.what(), ir::print(*p.module, {.locations = false})));
  }
  return p;
}

}  // namespace tessera::random_program
