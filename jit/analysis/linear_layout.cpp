// The GF(2) algebra of linear layouts (see linear_layout.hpp): construction checks, apply,
// products, composition, (pseudo-)inversion and conversion plans. The text form is in
// linear_layout_text.cpp, the named constructors in linear_layout_encodings.cpp.
//
// Internally a layout is also a bit matrix: output coordinates pack into one uint64 (output dim
// j's bits at a fixed offset, in out_dims() order), one column per input bit. Tiles have at most
// 2^20 elements and a thread at most that many registers, so 64 bits hold any layout tessera
// makes; a layout that needs more is refused.
#include "jit/analysis/linear_layout.hpp"

#include <algorithm>
#include <bit>
#include <optional>

#include "tessera/error.hpp"

namespace tessera::analysis {
using I = std::int64_t;
using U = std::uint64_t;

namespace {

bool pow2(I v) { return v > 0 && (v & (v - 1)) == 0; }
int log2i(I v) { return std::countr_zero(static_cast<U>(v)); }

std::string basis_text(const LinearLayout::Basis& b) {
  std::string s = "[";
  for (std::size_t i = 0; i < b.size(); ++i) s += (i ? "," : "") + std::to_string(b[i]);
  return s + "]";
}

// "" when (ins, outs) form a valid layout, else the problem in words.
std::string layout_problem(const std::vector<LinearLayout::InDim>& ins, const std::vector<LinearLayout::OutDim>& outs) {
  int out_total = 0, in_total = 0;
  for (std::size_t j = 0; j < outs.size(); ++j) {
    if (outs[j].name.empty()) return "output dim " + std::to_string(j) + " has no name";
    for (std::size_t k = 0; k < j; ++k)
      if (outs[k].name == outs[j].name) return "output dim '" + outs[j].name + "' is listed twice";
    if (!pow2(outs[j].size))
      return "output dim '" + outs[j].name + "' has size " + std::to_string(outs[j].size) + ", not a power of two";
    out_total += log2i(outs[j].size);
  }
  for (std::size_t i = 0; i < ins.size(); ++i) {
    const auto& in = ins[i];
    if (in.name.empty()) return "input dim " + std::to_string(i) + " has no name";
    for (std::size_t k = 0; k < i; ++k)
      if (ins[k].name == in.name) return "input dim '" + in.name + "' is listed twice";
    in_total += static_cast<int>(in.bases.size());
    for (std::size_t b = 0; b < in.bases.size(); ++b) {
      const auto& basis = in.bases[b];
      if (basis.size() != outs.size())
        return "basis " + std::to_string(b) + " of input dim '" + in.name + "' has " + std::to_string(basis.size()) +
               " coordinates for " + std::to_string(outs.size()) + " output dims";
      for (std::size_t j = 0; j < outs.size(); ++j)
        if (basis[j] < 0 || basis[j] >= outs[j].size)
          return "basis " + std::to_string(b) + " of input dim '" + in.name + "' " + basis_text(basis) + " is outside [0, " +
                 std::to_string(outs[j].size) + ") along '" + outs[j].name + "'";
    }
  }
  if (in_total > 63 || out_total > 63)
    return "the layout has " + std::to_string(in_total) + " input and " + std::to_string(out_total) +
           " output bits; at most 63 of each are supported";
  return "";
}

// Output offsets of each out dim's bits in the packed form.
std::vector<int> out_offsets(const LinearLayout& l) {
  std::vector<int> off;
  int o = 0;
  for (const auto& d : l.out_dims()) {
    off.push_back(o);
    o += log2i(d.size);
  }
  return off;
}

U pack(const LinearLayout& l, const LinearLayout::Basis& b) {
  auto off = out_offsets(l);
  U v = 0;
  for (std::size_t j = 0; j < b.size(); ++j) v |= static_cast<U>(b[j]) << off[j];
  return v;
}

// Every input bit's image, in in_dims() order, lowest bit first.
std::vector<U> columns(const LinearLayout& l) {
  std::vector<U> cols;
  for (const auto& in : l.in_dims())
    for (const auto& b : in.bases) cols.push_back(pack(l, b));
  return cols;
}

// Gaussian elimination over GF(2) that remembers which columns make each row. Columns are taken
// in order and a column joins the basis only when it is independent of the earlier ones, so a
// solution uses the earliest independent columns: the preference pseudo_invert documents.
class Solver {
 public:
  explicit Solver(const std::vector<U>& cols) {
    for (std::size_t c = 0; c < cols.size(); ++c) {
      U v = cols[c], m = U{1} << c;
      reduce(v, m);
      if (v) rows_.push_back({v, m, std::countr_zero(v)});
    }
  }
  int rank() const { return static_cast<int>(rows_.size()); }
  // A mask of columns whose XOR is `target`, or nothing when none is.
  std::optional<U> solve(U target) const {
    U m = 0;
    reduce(target, m);
    if (target) return std::nullopt;
    return m;
  }

 private:
  struct Row {
    U v, m;
    int pivot;
  };
  // Row k has none of the pivots of rows before it, so one pass in order clears every pivot.
  void reduce(U& v, U& m) const {
    for (const auto& r : rows_)
      if (v >> r.pivot & 1) {
        v ^= r.v;
        m ^= r.m;
      }
  }
  std::vector<Row> rows_;
};

// A mask over `l`'s input bits (columns order) as a basis over its input dims.
LinearLayout::Basis unpack_inputs(const LinearLayout& l, U mask) {
  LinearLayout::Basis b;
  int bit = 0;
  for (const auto& in : l.in_dims()) {
    int n = static_cast<int>(in.bases.size());
    b.push_back(static_cast<I>((mask >> bit) & ((U{1} << n) - 1)));
    bit += n;
  }
  return b;
}

std::vector<LinearLayout::OutDim> ins_as_outs(const LinearLayout& l) {
  std::vector<LinearLayout::OutDim> outs;
  for (const auto& in : l.in_dims()) outs.push_back({in.name, I{1} << in.bases.size()});
  return outs;
}

// Reorders `b` (a basis of `from`) into `to`'s output order; both have the same output names.
LinearLayout::Basis reorder(const LinearLayout& from, const LinearLayout& to, const LinearLayout::Basis& b) {
  LinearLayout::Basis r(to.out_dims().size(), 0);
  for (std::size_t j = 0; j < b.size(); ++j) r[to.out_index(from.out_dims()[j].name)] = b[j];
  return r;
}

void require_same_outs(const LinearLayout& a, const LinearLayout& b, std::string_view what) {
  bool same = a.out_dims().size() == b.out_dims().size();
  for (const auto& d : b.out_dims()) same = same && a.has_out_dim(d.name) && a.out_size(d.name) == d.size;
  if (!same)
    throw InternalError(std::string(what) + ": the layouts have different output dims: " + to_string(a) + " and " + to_string(b));
}

}  // namespace

LinearLayout::LinearLayout(std::vector<InDim> ins, std::vector<OutDim> outs) : ins_(std::move(ins)), outs_(std::move(outs)) {
  if (auto p = layout_problem(ins_, outs_); !p.empty()) throw InternalError("linear layout: " + p);
}

LinearLayout LinearLayout::identity_1d(I size, const std::string& in, const std::string& out) {
  if (!pow2(size)) throw InternalError("identity_1d: size " + std::to_string(size) + " is not a power of two");
  InDim d{in, {}};
  for (I v = 1; v < size; v *= 2) d.bases.push_back({v});
  return LinearLayout({d}, {{out, size}});
}

LinearLayout LinearLayout::zeros_1d(I size, const std::string& in, const std::string& out) {
  if (!pow2(size)) throw InternalError("zeros_1d: size " + std::to_string(size) + " is not a power of two");
  return LinearLayout({InDim{in, std::vector<Basis>(log2i(size), Basis{0})}}, {{out, 1}});
}

int LinearLayout::in_index(std::string_view name) const {
  for (std::size_t i = 0; i < ins_.size(); ++i)
    if (ins_[i].name == name) return static_cast<int>(i);
  return -1;
}

int LinearLayout::out_index(std::string_view name) const {
  for (std::size_t i = 0; i < outs_.size(); ++i)
    if (outs_[i].name == name) return static_cast<int>(i);
  return -1;
}

int LinearLayout::in_bits(std::string_view name) const {
  int i = in_index(name);
  return i < 0 ? 0 : static_cast<int>(ins_[i].bases.size());
}

int LinearLayout::out_bits(std::string_view name) const {
  int i = out_index(name);
  return i < 0 ? 0 : log2i(outs_[i].size);
}

int LinearLayout::total_in_bits() const {
  int n = 0;
  for (const auto& d : ins_) n += static_cast<int>(d.bases.size());
  return n;
}

int LinearLayout::total_out_bits() const {
  int n = 0;
  for (const auto& d : outs_) n += log2i(d.size);
  return n;
}

const LinearLayout::Basis& LinearLayout::basis(std::string_view in, int bit) const {
  int i = in_index(in);
  if (i < 0 || bit < 0 || bit >= static_cast<int>(ins_[i].bases.size()))
    throw InternalError("linear layout: no basis " + std::to_string(bit) + " of input dim '" + std::string(in) + "' in " +
                        to_string(*this));
  return ins_[i].bases[bit];
}

std::vector<I> LinearLayout::apply(const Inputs& inputs) const {
  std::vector<I> out(outs_.size(), 0);
  for (const auto& [name, value] : inputs) {
    int i = in_index(name);
    if (i < 0 && value == 0) continue;  // a dim of size 1 the layout does not list
    if (i < 0) throw InternalError("linear layout apply: no input dim '" + name + "' in " + to_string(*this));
    const auto& bases = ins_[i].bases;
    if (value < 0 || value >= (I{1} << bases.size()))
      throw InternalError("linear layout apply: " + name + "=" + std::to_string(value) + " is outside [0, " +
                          std::to_string(I{1} << bases.size()) + ")");
    for (std::size_t b = 0; b < bases.size(); ++b)
      if (value >> b & 1)
        for (std::size_t j = 0; j < out.size(); ++j) out[j] ^= bases[b][j];
  }
  return out;
}

std::vector<I> LinearLayout::apply_rlw(I reg, I lane, I warp) const {
  return apply({{"register", reg}, {"lane", lane}, {"warp", warp}});
}

int LinearLayout::rank() const { return Solver(columns(*this)).rank(); }

int LinearLayout::free_bits(std::string_view in) const {
  int i = in_index(in);
  if (i < 0) return 0;
  return static_cast<int>(std::count_if(ins_[i].bases.begin(), ins_[i].bases.end(), [](const Basis& b) {
    return std::all_of(b.begin(), b.end(), [](I c) { return c == 0; });
  }));
}

LinearLayout LinearLayout::sublayout(const std::vector<std::string>& ins, const std::vector<std::string>& outs) const {
  std::vector<int> cols;
  std::vector<OutDim> new_outs;
  for (const auto& o : outs) {
    int j = out_index(o);
    if (j < 0) throw InternalError("sublayout: no output dim '" + o + "' in " + to_string(*this));
    cols.push_back(j);
    new_outs.push_back(outs_[j]);
  }
  std::vector<InDim> new_ins;
  for (const auto& n : ins) {
    int i = in_index(n);
    if (i < 0) throw InternalError("sublayout: no input dim '" + n + "' in " + to_string(*this));
    InDim d{n, {}};
    for (const auto& b : ins_[i].bases) {
      Basis p;
      for (int j : cols) p.push_back(b[j]);
      d.bases.push_back(p);
    }
    new_ins.push_back(d);
  }
  return LinearLayout(new_ins, new_outs);
}

LinearLayout LinearLayout::transpose_outs(const std::vector<std::string>& outs) const {
  if (outs.size() != outs_.size())
    throw InternalError("transpose_outs: " + std::to_string(outs.size()) + " names for " + std::to_string(outs_.size()) + " output dims");
  std::vector<std::string> all;
  for (const auto& d : ins_) all.push_back(d.name);
  return sublayout(all, outs);
}

LinearLayout LinearLayout::transpose_ins(const std::vector<std::string>& ins) const {
  if (ins.size() != ins_.size())
    throw InternalError("transpose_ins: " + std::to_string(ins.size()) + " names for " + std::to_string(ins_.size()) + " input dims");
  std::vector<std::string> all;
  for (const auto& d : outs_) all.push_back(d.name);
  return sublayout(ins, all);
}

LinearLayout LinearLayout::rename_outs(const std::vector<std::string>& names) const {
  if (names.size() != outs_.size())
    throw InternalError("rename_outs: " + std::to_string(names.size()) + " names for " + std::to_string(outs_.size()) + " output dims");
  auto outs = outs_;
  for (std::size_t j = 0; j < outs.size(); ++j) outs[j].name = names[j];
  return LinearLayout(ins_, outs);
}

LinearLayout operator*(const LinearLayout& a, const LinearLayout& b) {
  std::vector<LinearLayout::OutDim> outs = a.out_dims();
  for (const auto& d : b.out_dims()) {
    int j = a.out_index(d.name);
    if (j >= 0) outs[j].size *= d.size;
    else outs.push_back(d);
  }
  // A basis of `from` in the product's output space; `scale` by a's size where both have the dim.
  auto lift = [&](const LinearLayout& from, const LinearLayout::Basis& basis, bool scale) {
    LinearLayout::Basis r(outs.size(), 0);
    for (std::size_t j = 0; j < basis.size(); ++j) {
      const auto& name = from.out_dims()[j].name;
      int k = 0;
      while (outs[k].name != name) ++k;
      r[k] = scale ? basis[j] * a.out_size(name) : basis[j];
    }
    return r;
  };
  std::vector<LinearLayout::InDim> ins;
  for (const auto& d : a.in_dims()) ins.push_back({d.name, {}});
  for (const auto& d : b.in_dims())
    if (!a.has_in_dim(d.name)) ins.push_back({d.name, {}});
  for (auto& in : ins) {
    if (int i = a.in_index(in.name); i >= 0)
      for (const auto& basis : a.in_dims()[i].bases) in.bases.push_back(lift(a, basis, false));
    if (int i = b.in_index(in.name); i >= 0)
      for (const auto& basis : b.in_dims()[i].bases) in.bases.push_back(lift(b, basis, true));
  }
  return LinearLayout(ins, outs);
}

LinearLayout compose(const LinearLayout& outer, const LinearLayout& inner) {
  for (const auto& d : inner.out_dims())
    if (!outer.has_in_dim(d.name) ? d.size > 1 : d.size > outer.in_size(d.name))
      throw InternalError("compose: inner output dim '" + d.name + "' of size " + std::to_string(d.size) +
                          " does not fit an input dim of the outer layout " + to_string(outer));
  std::vector<LinearLayout::InDim> ins;
  for (const auto& in : inner.in_dims()) {
    LinearLayout::InDim d{in.name, {}};
    for (const auto& b : in.bases) {
      LinearLayout::Inputs x;
      for (std::size_t j = 0; j < b.size(); ++j) x.emplace_back(inner.out_dims()[j].name, b[j]);
      d.bases.push_back(outer.apply(x));
    }
    ins.push_back(d);
  }
  return LinearLayout(ins, outer.out_dims());
}

LinearLayout pseudo_invert(const LinearLayout& l) {
  Solver s(columns(l));
  auto off = out_offsets(l);
  std::vector<LinearLayout::InDim> ins;
  for (std::size_t j = 0; j < l.out_dims().size(); ++j) {
    const auto& od = l.out_dims()[j];
    LinearLayout::InDim d{od.name, {}};
    for (int bit = 0; bit < log2i(od.size); ++bit) {
      auto m = s.solve(U{1} << (off[j] + bit));
      if (!m)
        throw InternalError("pseudo_invert: no input holds " + od.name + "=" + std::to_string(I{1} << bit) +
                            " (the layout is not surjective): " + to_string(l));
      d.bases.push_back(unpack_inputs(l, *m));
    }
    ins.push_back(d);
  }
  return LinearLayout(ins, ins_as_outs(l));
}

LinearLayout invert(const LinearLayout& l) {
  if (!l.is_bijective())
    throw InternalError("invert: the layout is not bijective (" + std::to_string(l.total_in_bits()) + " input bits, " +
                        std::to_string(l.total_out_bits()) + " output bits, rank " + std::to_string(l.rank()) +
                        "); use pseudo_invert: " + to_string(l));
  return pseudo_invert(l);
}

LinearLayout invert_and_compose(const LinearLayout& a, const LinearLayout& b) {
  require_same_outs(a, b, "invert_and_compose");
  Solver s(columns(a));
  std::vector<LinearLayout::InDim> ins;
  for (const auto& in : b.in_dims()) {
    LinearLayout::InDim d{in.name, {}};
    for (std::size_t bit = 0; bit < in.bases.size(); ++bit) {
      auto m = s.solve(pack(a, reorder(b, a, in.bases[bit])));
      if (!m)
        throw InternalError("invert_and_compose: no input of " + to_string(a) + " holds " + basis_text(in.bases[bit]) +
                            ", where bit " + std::to_string(bit) + " of '" + in.name + "' of " + to_string(b) + " points");
      d.bases.push_back(unpack_inputs(a, *m));
    }
    ins.push_back(d);
  }
  return LinearLayout(ins, ins_as_outs(a));
}

// ---- Conversion plans ----

std::string_view to_string(ConversionPlan::Kind k) {
  switch (k) {
    case ConversionPlan::Kind::Identity: return "identity";
    case ConversionPlan::Kind::RegisterPermutation: return "register permutation";
    case ConversionPlan::Kind::IntraWarp: return "intra-warp";
    case ConversionPlan::Kind::SharedMemory: return "shared memory";
  }
  return "?";
}

std::vector<I> ConversionPlan::source_of(I reg, I lane, I warp) const { return source.apply_rlw(reg, lane, warp); }

ConversionPlan plan_conversion(const LinearLayout& src, const LinearLayout& dst) {
  static const std::vector<std::string> kRlw = {"register", "lane", "warp"};
  for (const auto* l : {&src, &dst})
    for (const auto& d : l->in_dims())
      if (std::find(kRlw.begin(), kRlw.end(), d.name) == kRlw.end())
        throw InternalError("plan_conversion: input dim '" + d.name + "' is not register, lane or warp: " + to_string(*l));
  require_same_outs(src, dst, "plan_conversion");
  for (const char* d : {"lane", "warp"})
    if (src.in_size(d) != dst.in_size(d))
      throw InternalError(std::string("plan_conversion: the layouts have ") + std::to_string(src.in_size(d)) + " and " +
                          std::to_string(dst.in_size(d)) + " " + d + "s");

  ConversionPlan plan;
  std::vector<LinearLayout::OutDim> src_ins;
  for (const auto& n : kRlw) src_ins.push_back({n, src.in_size(n)});
  const int nreg = src.in_bits("register"), nlane = src.in_bits("lane");
  // The candidate source columns: src registers (RegisterPermutation) or registers then lanes
  // (IntraWarp). A destination register or lane basis must be a combination of them; a warp (or
  // lane) basis must differ from src's own by one, so that warp (lane) w keeps its id.
  auto try_within = [&](bool lanes_too) -> std::optional<LinearLayout> {
    std::vector<U> cols;
    for (const auto& n : lanes_too ? std::vector<std::string>{"register", "lane"} : std::vector<std::string>{"register"})
      for (int b = 0; b < src.in_bits(n); ++b) cols.push_back(pack(src, src.basis(n, b)));
    Solver s(cols);
    std::vector<LinearLayout::InDim> ins;
    for (const auto& n : kRlw) {
      LinearLayout::InDim d{n, {}};
      const bool keeps_id = n == "warp" || (n == "lane" && !lanes_too);
      for (int b = 0; b < dst.in_bits(n); ++b) {
        U target = pack(src, reorder(dst, src, dst.basis(n, b)));
        if (keeps_id) target ^= pack(src, src.basis(n, b));
        auto m = s.solve(target);
        if (!m) return std::nullopt;
        LinearLayout::Basis out = {static_cast<I>(*m & ((U{1} << nreg) - 1)), static_cast<I>(*m >> nreg), 0};
        if (keeps_id) out[n == "lane" ? 1 : 2] ^= I{1} << b;
        d.bases.push_back(out);
      }
      ins.push_back(d);
    }
    return LinearLayout(ins, src_ins);
  };

  if (src == dst) {
    plan.kind = ConversionPlan::Kind::Identity;
    plan.source = try_within(false).value();
  } else if (auto m = try_within(false)) {
    plan.kind = ConversionPlan::Kind::RegisterPermutation;
    plan.source = *m;
  } else if (auto m2 = try_within(true)) {
    plan.kind = ConversionPlan::Kind::IntraWarp;
    plan.source = *m2;
  } else {
    plan.kind = ConversionPlan::Kind::SharedMemory;
    plan.source = invert_and_compose(src, dst);
    return plan;
  }
  for (I r = 0; r < dst.in_size("register"); ++r) {
    auto s = plan.source_of(r, 0, 0);
    plan.src_register.push_back(s[0]);
    plan.src_lane.push_back(s[1]);
  }
  // shfl.xor: lane bit b of the destination reads lane bit b of the source and nothing else.
  plan.xor_shuffles = plan.kind == ConversionPlan::Kind::IntraWarp;
  for (int b = 0; b < nlane; ++b)
    plan.xor_shuffles = plan.xor_shuffles && plan.source.basis("lane", b) == LinearLayout::Basis{0, I{1} << b, 0};
  for (int b = 0; b < dst.in_bits("warp"); ++b)
    plan.xor_shuffles = plan.xor_shuffles && plan.source.basis("warp", b) == LinearLayout::Basis{0, 0, I{1} << b};
  return plan;
}

}  // namespace tessera::analysis
