#include "jit/transforms/assign_layouts.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "jit/analysis/axis_info.hpp"
#include "jit/analysis/layouts.hpp"
#include "jit/analysis/shared_memory.hpp"
#include "jit/transforms/shared_encodings.hpp"
#include "tessera/error.hpp"

namespace tessera::transforms {
using ir::Layout;
using ir::Op;
using ir::OpKind;
using ir::Value;

namespace {

bool is_atomic(const Op& op) { return op.kind == OpKind::AtomicRmw || op.kind == OpKind::AtomicCas; }

struct Use {
  Op* user;
  int operand;
  Layout wanted;
};

class LayoutAssigner {
 public:
  LayoutAssigner(ir::Module& m, const analysis::TargetInfo& target)
      : module_(m), warp_size_(target.warp_size), wgmma_(target.wgmma), axis_(m) {}

  void run() {
    mark_wgmma_dots();
    collect_dot_only_values();
    collect_rank_defaults(module_.entry());
    collect_anchors(module_.entry());
    process_block(module_.entry());
    insert_conversions();
  }

 private:
  // Dots that run on wgmma carry the attribute "wgmma": the plan of shared memory and the lowering
  // read it (analysis::dot_uses_wgmma), and the IR shows it.
  void mark_wgmma_dots() {
    if (!wgmma_) return;
    ir::walk(module_.entry(), [&](Op& op) {
      if (op.kind == OpKind::Dot && analysis::wgmma_eligible(op, module_.num_warps, warp_size_))
        op.attrs["wgmma"] = std::int64_t{1};
    });
  }

  // Values whose every use is a dot's a or b operand: the dot stages them in shared memory from
  // whatever layout they arrive in (wgmma and mma.sync alike), so the loads that make them take a
  // layout of their own shape.
  void collect_dot_only_values() {
    std::unordered_map<const Value*, bool> only_dot;
    ir::walk(module_.entry(), [&](Op& op) {
      for (std::size_t i = 0; i < op.operands.size(); ++i) {
        const bool dot_operand = op.kind == OpKind::Dot && i < 2;
        auto [it, fresh] = only_dot.try_emplace(op.operands[i], dot_operand);
        if (!fresh) it->second = it->second && dot_operand;
      }
    });
    for (const auto& [v, only] : only_dot)
      if (only) dot_only_.insert(v);
  }

  // One anchor shape (elementwise max) and widest accessed element per rank.
  void collect_rank_defaults(ir::Block& b) {
    std::map<int, std::vector<std::int64_t>> anchor;
    std::map<int, int> widest_bytes;
    auto note = [&](const Value* v) {
      if (!v->type.is_tile()) return;
      auto& a = anchor[v->type.rank()];
      if (a.empty()) a = v->type.shape;
      for (int d = 0; d < v->type.rank(); ++d) a[d] = std::max(a[d], v->type.shape[d]);
    };
    ir::walk(b, [&](Op& op) {
      for (auto& r : op.results) note(r.get());
      for (auto& reg : op.regions)
        for (auto& a : reg->block->args) note(a.get());
      if (op.kind == OpKind::Load || op.kind == OpKind::Store || op.kind == OpKind::AsyncCopy) {
        const Value* p = op.operands[op.kind == OpKind::AsyncCopy ? 1 : 0];
        if (p->type.is_tile()) {
          int& w = widest_bytes[p->type.rank()];
          w = std::max(w, ir::dtype_bytes(p->type.pointee));
        }
      }
    });
    for (auto& [rank, shape] : anchor) {
      int bytes = widest_bytes.count(rank) ? widest_bytes[rank] : 4;
      defaults_[rank] = analysis::default_blocked_layout(shape, module_.num_warps, warp_size_, std::max(1, 16 / bytes));
    }
  }

  const Layout& default_for(const Value* v) { return defaults_.at(v->type.rank()); }

  // Values that stay in a tensor-core accumulator's layout: dot results, elementwise functions of
  // them of the same shape (the epilogue: casts, bias, activations), their reductions (in the
  // slice of that layout: attention's row max and row sum), and the loop-carried values and loop
  // results these flow through. Keeping the epilogue in the accumulator's layout and storing from
  // it moves no data between threads, where converting the accumulator first would need shared
  // memory for the whole f32 tile. A loop-carried value is anchored by what its body yields,
  // which a walk reaches after the loop: the walk repeats until no value is added.
  // Then carried values that no anchor reached but that the body computes from a reduction
  // (reduced_slice) are anchored in turn, and the walk repeats from them.
  void collect_anchors(ir::Block& b) {
    auto propagate = [&] {
      std::size_t before = 0;
      do {
        before = anchors_.size();
        ir::walk(b, [&](Op& op) { anchor_results(op); });
      } while (anchors_.size() != before);
    };
    propagate();
    const std::size_t before = anchors_.size();
    ir::walk(b, [&](Op& op) {
      if (op.kind != OpKind::For) return;
      const ir::Block& body = *op.regions[0]->block;
      const Op* yield = body.terminator();
      for (std::size_t i = 0; yield && i < yield->operands.size(); ++i)
        if (!anchor_of(body.args[i + 1].get()))
          if (const std::optional<Layout> l = reduced_slice(yield->operands[i], body)) {
            anchors_.try_emplace(body.args[i + 1].get(), *l);
            anchors_.try_emplace(op.results[i].get(), *l);
          }
    });
    if (anchors_.size() != before) propagate();
  }
  void anchor_results(Op& op) {
    auto anchor = [&](const Value* v, const Layout& l) { anchors_.try_emplace(v, l); };
    if (op.kind == OpKind::Dot) {
      anchor(op.result(), dot_layout(op));
      return;
    }
    if (op.kind == OpKind::For) {
      const Op* yield = op.regions[0]->block->terminator();
      for (std::size_t i = 0; yield && i < yield->operands.size(); ++i)
        if (const Layout* l = anchor_of(yield->operands[i])) {  // (an unordered_map's rehash keeps l valid)
          anchor(op.regions[0]->block->args[i + 1].get(), *l);
          anchor(op.results[i].get(), *l);
        }
      return;
    }
    if (op.kind == OpKind::If) {
      // A result that the branches yield in one anchored layout (attention's scores, masked in
      // one branch only) keeps it; where only one branch's is anchored, that one (the other
      // converts, as it would into the default).
      const Op* then_yield = op.regions[0]->block->terminator();
      const Op* else_yield = op.regions.size() > 1 ? op.regions[1]->block->terminator() : nullptr;
      for (std::size_t i = 0; i < op.results.size(); ++i) {
        const Layout* a = then_yield ? anchor_of(then_yield->operands[i]) : nullptr;
        const Layout* b = else_yield ? anchor_of(else_yield->operands[i]) : nullptr;
        if (a && b && *a != *b) continue;
        if (const Layout* l = a ? a : b) anchor(op.results[i].get(), *l);
      }
      return;
    }
    if (op.kind == OpKind::Reduce) {
      const Layout* common = common_anchor(op);
      if (!common) return;
      const Layout sliced = analysis::slice_layout(*common, static_cast<int>(op.int_attr("axis")));
      for (auto& r : op.results)
        if (r->type.is_tile()) anchor(r.get(), sliced);
      return;
    }
    const auto cat = op.info().category;
    const bool elementwise = cat == ir::OpCategory::Unary || cat == ir::OpCategory::Binary ||
                             cat == ir::OpCategory::Compare || op.kind == OpKind::Fma || op.kind == OpKind::Select;
    if (!elementwise || op.results.size() != 1 || !op.result()->type.is_tile()) return;
    for (const Value* v : op.operands)
      if (const Layout* l = anchor_of(v); l && v->type.shape == op.result()->type.shape) {
        anchor(op.result(), *l);
        return;
      }
  }
  // A carried value that the body computes from a reduction of a tile of the body (an online
  // reduction's running per-row max and sum: m' = max(m, max(x, 1))) gets the reduction's slice
  // of the rank's default, the layout that reduction produces, so that the body converts nothing
  // between the reduction and the carried value. Only elementwise steps of the carried shape lie
  // between them; a reduction of an anchored operand (attention's) is anchored already.
  std::optional<Layout> reduced_slice(const Value* v, const ir::Block& body) const {
    const Op* def = v->def;
    if (!def || !v->type.is_tile() || def->parent != &body) return std::nullopt;
    if (def->kind == OpKind::Reduce) {
      const Value* in = def->operands[0];
      if (!in->type.is_tile() || in->type.rank() < 2) return std::nullopt;
      return analysis::slice_layout(defaults_.at(in->type.rank()), static_cast<int>(def->int_attr("axis")));
    }
    const auto cat = def->info().category;
    const bool elementwise = cat == ir::OpCategory::Unary || cat == ir::OpCategory::Binary ||
                             cat == ir::OpCategory::Compare || def->kind == OpKind::Fma || def->kind == OpKind::Select;
    if (!elementwise) return std::nullopt;
    for (const Value* operand : def->operands)
      if (operand->type.shape == v->type.shape)
        if (auto l = reduced_slice(operand, body)) return l;
    return std::nullopt;
  }
  const Layout* anchor_of(const Value* v) const {
    auto it = anchors_.find(v);
    return it == anchors_.end() ? nullptr : &it->second;
  }

  // Coalescing: the layout under which a warp's accesses of this load/store/atomic touch
  // contiguous memory with the widest vector axis info allows: order[0] is the dim along which
  // the pointers are most contiguous, with min(contiguity, alignment, 16 bytes) elements per
  // thread along it. Only returned when it differs in order from the rank's default, which is
  // already coalesced for row-major accesses (so that common kernels need no conversions).
  std::optional<Layout> coalesced(const Op& op) {
    const Value* ptr = op.operands[0];
    if (!ptr->type.is_tile()) return std::nullopt;
    const auto [order, vec] = contiguous_access(ptr);
    if (order[0] == default_for(ptr).order[0]) return std::nullopt;
    return analysis::blocked_layout(ptr->type.shape, module_.num_warps, warp_size_, vec, order);
  }
  // The dims of a tile of pointers from the most contiguous in memory, and the elements per
  // thread along the first that axis info allows (at most 16 bytes).
  std::pair<std::vector<int>, int> contiguous_access(const Value* ptr) {
    const analysis::AxisInfo& ai = axis_.get(ptr);
    const int rank = ptr->type.rank();
    int fast = rank - 1;
    for (int d = rank - 1; d >= 0; --d)
      if (ai.contig(d) > ai.contig(fast)) fast = d;
    std::vector<int> order{fast};
    for (int d = rank - 1; d >= 0; --d)
      if (d != fast) order.push_back(d);
    const std::int64_t esz = ir::dtype_bytes(ptr->type.pointee);
    const std::int64_t vec = std::max<std::int64_t>(1, std::min({ai.contig(fast), ai.div(fast) / esz, std::int64_t{16} / esz}));
    return {order, static_cast<int>(vec)};
  }
  // A load takes the layout its users ask for when that still walks memory along the pointers'
  // contiguous dim (or is a slice: a vector that is broadcast into a larger tile, kept in
  // registers); otherwise it loads coalesced and its users get a conversion.
  Layout load_layout(const Op& op) {
    const Layout access = access_layout(op);
    auto it = requested_.find(op.result());
    if (it == requested_.end()) return access;
    const Layout& wanted = it->second;
    if (wanted.kind == Layout::Kind::Slice || wanted.order.at(0) == access.order.at(0)) return wanted;
    return access;
  }
  Layout access_layout(const Op& op) {
    const Value* ptr = op.operands[op.kind == OpKind::AsyncCopy ? 1 : 0];  // an async_copy's operand 0 is its view
    if (!ptr->type.is_tile()) return Layout{};  // a scalar access: no layout
    if (op.kind == OpKind::AsyncCopy || (op.kind == OpKind::Load && dot_only_.count(op.result()))) {
      // A dot operand goes to shared memory, not to registers: a layout of its own shape, so
      // that every thread copies as many 16-byte pieces and none repeats another's. The rank's
      // default, sized for the largest tile, would load and store it twice (a 128 x 64 A beside
      // a 128 x 128 C with 8 warps and num_stages = 1: 170 registers, notes/tensor-cores.md), or,
      // for an async_copy into a ring, leave half the threads of a narrower operand idle behind
      // an owner branch.
      const auto [order, vec] = contiguous_access(ptr);
      return analysis::blocked_layout(ptr->type.shape, module_.num_warps, warp_size_, vec, order);
    }
    if (auto c = coalesced(op)) return *c;
    return default_for(ptr);
  }

  void set_layout(Value* v, const Layout& l) {
    if (v->type.is_tile()) v->type.layout = l;
  }

  void set_default(Value* v) {
    if (v->type.is_tile()) set_layout(v, default_for(v));
  }

  void process_block(ir::Block& b) {
    for (auto it = b.ops.rbegin(); it != b.ops.rend(); ++it) process_op(**it);
  }

  // The layout a dot computes its result in: the tensor-core accumulator's where it runs on
  // tensor cores, else the rank's default.
  Layout dot_layout(const Op& dot) {
    const Layout l = analysis::dot_accumulator_layout(dot, module_.num_warps, warp_size_);
    return l.is_none() ? default_for(dot.result()) : l;
  }

  void process_op(Op& op) {
    if (op.kind == OpKind::For) {
      // An anchored carried value (a dot's accumulator, attention's running row max) keeps its
      // anchor's layout, so that the loop body converts nothing; every other carried value takes
      // the rank's default.
      auto& args = op.regions[0]->block->args;
      for (std::size_t i = 0; i < args.size(); ++i) {
        if (const Layout* a = anchor_of(args[i].get())) {
          set_layout(args[i].get(), *a);
          set_layout(op.results[i - 1].get(), *a);
        } else {
          set_default(args[i].get());
          if (i > 0) set_default(op.results[i - 1].get());
        }
      }
    }
    if (op.kind == OpKind::If)  // an anchored result keeps its anchor (anchor_results), others the default
      for (auto& r : op.results) {
        if (const Layout* a = anchor_of(r.get())) set_layout(r.get(), *a);
        else set_default(r.get());
      }
    if (op.kind == OpKind::DoWhile) {  // carried values take the rank's default, as a for's do
      for (auto& a : op.regions[0]->block->args) set_default(a.get());
      for (auto& r : op.results) set_default(r.get());
    }
    // A reduction's result is the slice of its operand's layout along the axis: every thread ends
    // up holding the reduced values of the positions it owned. A scan keeps the layout.
    if (op.kind == OpKind::Reduce || op.kind == OpKind::Scan)
      for (auto& r : op.results) {
        if (!r->type.is_tile()) continue;
        if (op.kind == OpKind::Scan) set_default(r.get());
        else set_layout(r.get(), analysis::slice_layout(reduce_layout(op), static_cast<int>(op.int_attr("axis"))));
      }
    for (auto& r : op.regions) process_block(*r->block);

    if (is_atomic(op))  // computed where its operands are (the default layout), converted for users
      set_layout(op.result(), access_layout(op));
    else if (op.kind == OpKind::Dot)
      set_layout(op.result(), dot_layout(op));
    else if (const Layout* a = op.results.size() == 1 ? anchor_of(op.result()) : nullptr)
      set_layout(op.result(), *a);
    else if (op.kind == OpKind::Load && op.result()->type.is_tile())
      set_layout(op.result(), load_layout(op));
    else if (op.kind == OpKind::LocalLoad) {
      // A row loop's ring read back (pipeline_loads.hpp): the layout its users ask for where it is
      // blocked, else the rank's default (the lowering reads shared memory into blocked layouts).
      auto it = requested_.find(op.result());
      const bool blocked = it != requested_.end() && it->second.kind == Layout::Kind::Blocked;
      set_layout(op.result(), blocked ? it->second : default_for(op.result()));
    } else if (op.kind == OpKind::InlineAsm) {
      // One layout for every result: the assembly computes them together, slot by slot.
      auto it = requested_.find(op.result());
      const Layout l = !op.result()->type.is_tile() ? Layout{} : it != requested_.end() ? it->second : default_for(op.result());
      for (auto& r : op.results) set_layout(r.get(), l);
    } else if (op.kind != OpKind::For && op.kind != OpKind::If && op.kind != OpKind::DoWhile && op.kind != OpKind::Reduce &&
               op.kind != OpKind::Scan)
      for (auto& r : op.results) {
        auto it = requested_.find(r.get());
        set_layout(r.get(), it != requested_.end() ? it->second : (r->type.is_tile() ? default_for(r.get()) : Layout{}));
      }

    for (int i = 0; i < static_cast<int>(op.operands.size()); ++i) {
      Value* v = op.operands[i];
      if (!v->type.is_tile()) continue;
      Layout wanted = operand_layout(op, i);
      uses_.push_back({&op, i, wanted});
      requested_.try_emplace(v, wanted);
    }
  }

  // The layout a reduction reads its operands in: the accumulator layout they share where they
  // are a dot's results or elementwise functions of them (attention's row max and sum of the
  // scores), which reduces across the few lanes and warps holding a row and needs no shared
  // memory for the tile; else the rank's default.
  Layout reduce_layout(const Op& op) {
    const Layout* common = common_anchor(op);
    return common ? *common : default_for(op.operands[0]);
  }
  // The blocked anchor every operand of op has, or null (a reduction of a reduction's slice
  // reads the rank's default, as before anchors reached reductions).
  const Layout* common_anchor(const Op& op) const {
    const Layout* a = anchor_of(op.operands[0]);
    if (!a || a->kind != Layout::Kind::Blocked) return nullptr;
    for (const Value* v : op.operands) {
      const Layout* b = anchor_of(v);
      if (!b || !(*a == *b)) return nullptr;
    }
    return a;
  }

  // The layout op needs its i-th (tile) operand in.
  Layout operand_layout(Op& op, int i) {
    Value* v = op.operands[i];
    switch (op.kind) {
      case OpKind::ExpandDims: {
        const Layout& out = op.result()->type.layout;
        if (out.kind != Layout::Kind::Blocked)
          throw ProgramError("expand_dims of a tile that is itself expanded again (tiles of rank 3 or more) "
                             "is not supported yet, at " + op.loc.str());
        return analysis::slice_layout(out, static_cast<int>(op.int_attr("axis")));
      }
      case OpKind::Store:
        // A store of an accumulator-layout value (a matmul's epilogue) stores from that layout,
        // unless the coalesced layout writes wider vectors: an mma accumulator holds pairs along
        // a row, and 4-byte stores of pairs cost four times the instructions of 16-byte ones. The
        // conversion goes through shared memory (convert_row_pad), which after a pipelined loop
        // reuses the ring's bytes.
        if (const Layout* a = anchor_of(op.operands[1])) {
          if (!op.operands[0]->type.is_tile()) return *a;
          ir::Type anchored = op.operands[1]->type, accessed = anchored;
          anchored.layout = *a;
          accessed.layout = access_layout(op);
          const std::int64_t vec = contiguous_access(op.operands[0]).second;
          return std::min(analysis::row_run(accessed), vec) > analysis::row_run(anchored) ? accessed.layout : *a;
        }
        return access_layout(op);
      case OpKind::AtomicRmw:
      case OpKind::AtomicCas:
      case OpKind::AsyncCopy:  // pointers and mask (the view is no tile)
        return access_layout(op);
      case OpKind::Reduce:
        return reduce_layout(op);
      case OpKind::Scan:
      // Shape ops move elements between threads through shared memory (lower_shape.cpp), from any
      // layout: their operand's shape, often its rank, differs from the result's.
      case OpKind::Reshape:
      case OpKind::Trans:
      case OpKind::Join:
      case OpKind::Split:
        return default_for(v);
      case OpKind::Gather:  // src through shared memory from any layout; each index beside its result
        return i == 0 ? default_for(v) : op.result()->type.layout;
      case OpKind::For:
        return op.regions[0]->block->args[i - 2]->type.layout;  // inits follow lb, ub, step
      case OpKind::DoWhile:
        return op.regions[0]->block->args[i]->type.layout;
      case OpKind::Dot:  // a and b go through shared memory from any layout (lower_dot.cpp)
        // (A dot reading views, a pipelined one, has no tile operands but its accumulator.)
        if (i < 2) {
          // A loaded operand that only dots use stays in its load's layout (access_layout: its
          // own shape), not the rank's default sized for the largest tile.
          if (v->def && v->def->kind == OpKind::Load && dot_only_.count(v)) return access_layout(*v->def);
          // A computed operand is staged from the layout it was computed in (attention's P, in the
          // first dot's accumulator layout): converting it first would move it through shared
          // memory twice. Not from a layout that repeats elements over threads: the staging
          // stores would race.
          ir::Type computed = v->type;  // its layout, or its anchor's where users come first
          if (const Layout* a = anchor_of(v)) computed.layout = *a;
          if (!computed.layout.is_none() && !analysis::has_replicas(computed)) return computed.layout;
          return default_for(v);
        }
        return op.result()->type.layout;
      case OpKind::Yield: {
        Op* parent = ir::parent_op(op);
        if (parent->kind == OpKind::For) return parent->regions[0]->block->args[i + 1]->type.layout;
        // A do_while yields (cond, next...): next #k goes to block argument k (cond is a scalar).
        if (parent->kind == OpKind::DoWhile) return parent->regions[0]->block->args[i - 1]->type.layout;
        return parent->result(i)->type.layout;
      }
      default:
        // Elementwise ops, broadcast, loads and conversions compute each element from the element
        // at the same place: the operand in the result's layout keeps that inside one thread.
        if (op.results.empty()) return default_for(v);
        return op.result()->type.layout;
    }
  }

  void insert_conversions() {
    for (const Use& u : uses_) {
      Value* v = u.user->operands[u.operand];
      if (v->type.layout == u.wanted) continue;
      u.user->operands[u.operand] = in_layout(v, u.wanted, u.user);
    }
  }

  // Index arithmetic (aranges, splats, tile constants, integer arithmetic and comparisons of them:
  // masks) and constant or splat tiles of any type are cheaper to compute again in the wanted
  // layout than to move through shared memory with barriers around it (Triton's
  // rematerialization): a matmul's row and column indices are used both by its loads and by its
  // epilogue, in two layouts; attention's transposed K load takes its `other` of 0 in its own.
  // The layout operand `o` of a recomputed `op` must take for the result to be in `wanted`.
  static Layout operand_layout_for(const Op& op, const Layout& wanted) {
    if (op.kind == OpKind::ExpandDims) return analysis::slice_layout(wanted, static_cast<int>(op.int_attr("axis")));
    return wanted;
  }
  static bool rematerializable(const Value* v, const Layout& wanted, int depth) {
    const Op* d = v->def;
    if (!d || depth > 8 || d->results.size() != 1 || !v->type.is_tile()) return false;
    if (d->kind == OpKind::Constant || d->kind == OpKind::Splat) return true;
    if (!ir::is_int(v->type.dtype)) return false;
    switch (d->kind) {
      case OpKind::Arange:
        return true;
      case OpKind::ExpandDims:
        return wanted.kind == Layout::Kind::Blocked &&
               (!d->operands[0]->type.is_tile() || rematerializable(d->operands[0], operand_layout_for(*d, wanted), depth + 1));
      case OpKind::Broadcast:
      case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Rem:
      case OpKind::And: case OpKind::Or: case OpKind::Xor: case OpKind::Shl: case OpKind::Shr:
      case OpKind::Min: case OpKind::Max:
      case OpKind::CmpEq: case OpKind::CmpNe: case OpKind::CmpLt: case OpKind::CmpLe: case OpKind::CmpGt:
      case OpKind::CmpGe:
        for (const Value* o : d->operands)
          if (o->type.is_tile() && !rematerializable(o, wanted, depth + 1)) return false;
        return true;
      default:
        return false;
    }
  }

  Op* insert_before(Op* anchor, std::unique_ptr<Op> op) {
    ir::Block* block = anchor->parent;
    op->parent = block;
    Op* raw = op.get();
    auto pos = std::find_if(block->ops.begin(), block->ops.end(), [&](auto& o) { return o.get() == anchor; });
    block->ops.insert(pos, std::move(op));
    return raw;
  }

  // `v` in layout `wanted`, for a use by `user`: recomputed there, or converted. A conversion of a
  // value defined outside the loop (or if) that uses it goes right after the definition, so that
  // it runs once rather than on every iteration, and is shared by every such use.
  Value* in_layout(Value* v, const Layout& wanted, Op* user) {
    if (v->type.layout == wanted) return v;
    if (rematerializable(v, wanted, 0)) {
      auto clone = std::make_unique<Op>();
      clone->kind = v->def->kind;
      clone->loc = v->def->loc;
      clone->attrs = v->def->attrs;
      Op* placed = insert_before(user, std::move(clone));
      const Layout operand_wanted = operand_layout_for(*v->def, wanted);
      for (Value* o : v->def->operands)
        placed->operands.push_back(o->type.is_tile() ? in_layout(o, operand_wanted, placed) : o);
      ir::Type t = v->type;
      t.layout = wanted;
      return placed->add_result(t);
    }
    ir::Block* def_block = v->def ? v->def->parent : v->owner;
    const bool outside = def_block != user->parent;
    auto key = std::make_pair(v, ir::to_string(wanted));
    if (outside) {
      if (auto it = hoisted_.find(key); it != hoisted_.end()) return it->second;
    }
    auto conv = std::make_unique<Op>();
    conv->kind = OpKind::ConvertLayout;
    conv->loc = user->loc;
    conv->operands = {v};
    ir::Type t = v->type;
    t.layout = wanted;
    Value* converted = conv->add_result(t);
    if (outside && v->def) {
      // Right after the definition, in its block.
      ir::Block* block = v->def->parent;
      conv->parent = block;
      auto pos = std::find_if(block->ops.begin(), block->ops.end(), [&](auto& o) { return o.get() == v->def; });
      block->ops.insert(std::next(pos), std::move(conv));
    } else if (outside) {
      // A block argument: at the start of its block.
      conv->parent = def_block;
      def_block->ops.insert(def_block->ops.begin(), std::move(conv));
    } else {
      insert_before(user, std::move(conv));
    }
    if (outside) hoisted_[key] = converted;
    return converted;
  }

  ir::Module& module_;
  int warp_size_;
  bool wgmma_;
  analysis::AxisInfoAnalysis axis_;
  std::map<int, Layout> defaults_;
  std::unordered_map<const Value*, Layout> anchors_;
  std::map<std::pair<Value*, std::string>, Value*> hoisted_;
  std::unordered_map<const Value*, Layout> requested_;
  std::vector<Use> uses_;
  std::unordered_set<const Value*> dot_only_;  // collect_dot_only_values
};

}  // namespace

void assign_layouts(ir::Module& m, const analysis::TargetInfo& target) {
  LayoutAssigner(m, target).run();
  encode_shared_buffers(m, target.warp_size);  // needs the wgmma marks and the copies' layouts
}

}  // namespace tessera::transforms
