// scan lowering, in three levels like the reduction (lower_reduce.cpp).
//
// Along the scan axis a blocked layout orders elements as: CTA-tile repetition (slowest), warp,
// lane, then the size_per_thread contiguous slots of one thread (layouts.hpp). The scan follows
// that order ("scan order"; a reverse scan walks it backwards, with the same combine(earlier,
// later) argument order as the interpreter):
//   (1) each thread scans its contiguous slots of each repetition (inclusive);
//   (2) the chunk totals scan across the lanes along the axis (Hillis-Steele over shuffles), which
//       gives every lane the combination of the lanes before it;
//   (3) the lane holding a warp's total writes it to shared memory; every thread combines the
//       totals of the warps before it, and of all warps for each earlier repetition (the carry).
// A thread's element is then combine(carry, warps before, lanes before, own inclusive prefix),
// each part present or not depending on where the thread sits: selects, as a user combine has no
// identity element to start from.
#include <fmt/format.h>

#include "jit/lower/lowering.hpp"
#include "tessera/error.hpp"

namespace tessera::lower {
using ir::DType;
using ir::Op;
using I = std::int64_t;
using Vals = std::vector<llvm::Value*>;  // one value per scanned operand

namespace {

// A prefix that a thread may or may not have: `valid` (i1) says whether `vals` holds one; a null
// `valid` means no part has been added yet.
struct Prefix {
  Vals vals;
  llvm::Value* valid = nullptr;
};

}  // namespace

void KernelLowering::lower_scan(const Op& op) {
  const ir::Type& t = op.operands[0]->type;
  const int axis = static_cast<int>(op.int_attr("axis"));
  const bool reverse = op.has_attr("reverse") && op.int_attr("reverse") != 0;
  const std::size_t n = op.operands.size();
  const auto dist = analysis::distribute(t);
  if (dist.slice_dim >= 0) throw InternalError("scan operand must be in a blocked layout");
  for (std::size_t i = 0; i < n; ++i)
    if (!(op.operands[i]->type.layout == t.layout) || !(op.result(static_cast<int>(i))->type.layout == t.layout))
      throw InternalError(fmt::format("lowering: the operands and results of the scan at {} differ in layout", op.loc.str()));
  const auto& l = dist.layout;
  const I spt = l.size_per_thread[axis];
  const I len = dist.shape[axis];
  const I lanes = analysis::lanes_along_axis(t, axis);  // distinct lanes along the axis
  const I warps = analysis::warps_along_axis(t, axis);  // distinct warps along the axis
  const I axis_slots = dist.slots[axis];
  const I reps = (axis_slots + spt - 1) / spt;
  const I lane_stride = analysis::lane_stride(l, axis);  // lane id distance between neighbours

  auto u32 = [&](I v) { return b_.getInt32(static_cast<std::uint32_t>(v)); };
  auto select = [&](llvm::Value* c, const Vals& a, const Vals& b) {
    Vals out;
    for (std::size_t i = 0; i < n; ++i) out.push_back(b_.CreateSelect(c, a[i], b[i]));
    return out;
  };
  // The prefix followed by `part`, each present where its flag holds.
  auto extend = [&](const Prefix& p, const Vals& part, llvm::Value* part_valid) -> Prefix {
    if (!p.valid) return {part, part_valid};
    const Vals both = combine(op, p.vals, part);
    return {select(part_valid, select(p.valid, both, part), p.vals), b_.CreateOr(p.valid, part_valid)};
  };
  // Positions in scan order: lane and warp coordinates along the axis, reversed for a reverse scan.
  auto in_scan_order = [&](llvm::Value* coord, I count) { return reverse ? b_.CreateSub(u32(count - 1), coord) : coord; };
  llvm::Value* lane_pos = lanes > 1 ? in_scan_order(b_.CreateURem(lane_coord(l, axis), u32(lanes)), lanes) : u32(0);
  llvm::Value* warp_pos = warps > 1 ? in_scan_order(b_.CreateURem(warp_coord(l, axis), u32(warps)), warps) : u32(0);
  // Shuffle from the lane `steps` positions earlier in scan order.
  auto from_earlier_lane = [&](llvm::Value* v, I steps) {
    const int delta = static_cast<int>(steps * lane_stride);
    return shuffle_any(v, [&](llvm::Value* v32) {
      return reverse ? target_.shuffle_down(b_, v32, delta) : target_.shuffle_up(b_, v32, delta);
    });
  };

  // Lines: the thread's slots with the axis coordinate dropped, numbered row-major like the
  // slots of the result of a reduction along the axis.
  std::vector<I> line_slots = dist.slots;
  line_slots[axis] = 1;
  I num_lines = 1;
  for (I s : line_slots) num_lines *= s;
  auto slot_of = [&](I line, I q) {  // slot index of the q-th element of a line in scan order
    std::vector<I> c(line_slots.size());
    for (int d = static_cast<int>(c.size()) - 1; d >= 0; --d) {
      c[d] = line % line_slots[d];
      line /= line_slots[d];
    }
    c[axis] = reverse ? axis_slots - 1 - q : q;
    return dist.slot_index(c);
  };
  auto operand_values = [&](I k) {
    Vals v;
    for (std::size_t i = 0; i < n; ++i) v.push_back(get(op.operands[i])[k]);
    return v;
  };

  // (1) Within the thread: inclusive scans of each repetition's contiguous slots.
  std::vector<std::vector<Vals>> inclusive(num_lines, std::vector<Vals>(axis_slots));
  std::vector<std::vector<Vals>> lane_total(num_lines, std::vector<Vals>(reps));
  for (I line = 0; line < num_lines; ++line)
    for (I q = 0; q < axis_slots; ++q) {
      const Vals x = operand_values(slot_of(line, q));
      inclusive[line][q] = q % spt == 0 ? x : combine(op, inclusive[line][q - 1], x);
      lane_total[line][q / spt] = inclusive[line][q];
    }

  // (2) Across lanes: inclusive scan of the chunk totals, then each lane's exclusive prefix.
  std::vector<std::vector<Vals>> lanes_before(num_lines, std::vector<Vals>(reps));
  if (lanes > 1)
    for (I line = 0; line < num_lines; ++line)
      for (I r = 0; r < reps; ++r) {
        Vals& p = lane_total[line][r];
        for (I step = 1; step < lanes; step *= 2) {
          Vals earlier;
          for (auto* v : p) earlier.push_back(from_earlier_lane(v, step));
          p = select(b_.CreateICmpUGE(lane_pos, u32(step)), combine(op, earlier, p), p);
        }
        for (auto* v : p) lanes_before[line][r].push_back(from_earlier_lane(v, 1));
      }
  // lane_total now holds, in the last lane of the scan order, the warp's total of the repetition.

  // (3) Across warps, and the totals of whole repetitions for the carries.
  std::vector<std::vector<Vals>> warps_before(num_lines, std::vector<Vals>(reps));
  std::vector<std::vector<Vals>> rep_total(num_lines, std::vector<Vals>(reps));
  if (warps > 1) {
    // [repetition][warp position][line] per operand, lines at their row-major index.
    const I lines_total = t.numel() / len;
    ir::Type line_t = t;
    line_t.shape.erase(line_t.shape.begin() + axis);
    line_t.layout = analysis::slice_layout(t.layout, axis);
    std::vector<llvm::Value*> line_index;
    for (I line = 0; line < num_lines; ++line) line_index.push_back(line_t.is_tile() ? element_linear_index(line_t, line) : u32(0));
    std::vector<llvm::Type*> mem_types;
    for (std::size_t i = 0; i < n; ++i) {
      const auto& ti = op.operands[i]->type;
      mem_types.push_back(ti.dtype == DType::I1 ? b_.getInt8Ty() : scalar_type(ti.element()));
    }
    const std::vector<I> base = analysis::operand_parts(op, reps * warps * lines_total).base;
    auto slot_ptr = [&](std::size_t i, I r, llvm::Value* warp, I line) {
      llvm::Value* at = b_.CreateAdd(b_.CreateMul(b_.CreateAdd(u32(r * warps), warp), u32(lines_total)), line_index[line]);
      return b_.CreateGEP(mem_types[i], b_.CreateGEP(b_.getInt8Ty(), scratch(op), u32(base[i])), at);
    };
    shared_phase(op, 0);
    auto* write_bb = llvm::BasicBlock::Create(ctx_, "scan.warp_total", fn_);
    auto* join_bb = llvm::BasicBlock::Create(ctx_, "scan.warp_total.done", fn_);
    b_.CreateCondBr(b_.CreateICmpEQ(lane_pos, u32(lanes - 1)), write_bb, join_bb);
    b_.SetInsertPoint(write_bb);
    for (I line = 0; line < num_lines; ++line)
      for (I r = 0; r < reps; ++r)
        for (std::size_t i = 0; i < n; ++i) {
          llvm::Value* v = lane_total[line][r][i];
          if (v->getType()->isIntegerTy(1)) v = b_.CreateZExt(v, mem_types[i]);
          b_.CreateStore(v, slot_ptr(i, r, warp_pos, line));
        }
    b_.CreateBr(join_bb);
    b_.SetInsertPoint(join_bb);
    shared_phase(op, 1);
    for (I line = 0; line < num_lines; ++line)
      for (I r = 0; r < reps; ++r) {
        Vals running;
        for (I w = 0; w < warps; ++w) {
          Vals part;
          for (std::size_t i = 0; i < n; ++i) {
            llvm::Value* v = b_.CreateLoad(mem_types[i], slot_ptr(i, r, u32(w), line));
            part.push_back(op.operands[i]->type.dtype == DType::I1 ? b_.CreateTrunc(v, b_.getInt1Ty()) : v);
          }
          // The warp at position w + 1 takes the combination of warps 0..w.
          running = running.empty() ? part : combine(op, running, part);
          if (w + 1 < warps)
            warps_before[line][r] = w == 0 ? running : select(b_.CreateICmpEQ(warp_pos, u32(w + 1)), running, warps_before[line][r]);
        }
        rep_total[line][r] = running;
      }
  } else if (reps > 1) {
    // One warp spans the axis: a repetition's total sits in the last lane of the scan order.
    llvm::Value* lane = b_.CreateURem(tid_, u32(target_.warp_size()));
    llvm::Value* last_lane = lane;
    if (lanes > 1) {
      llvm::Value* first = b_.CreateSub(lane, b_.CreateMul(lane_coord(l, axis), u32(lane_stride)));
      last_lane = b_.CreateAdd(first, u32((reverse ? 0 : lanes - 1) * lane_stride));
    }
    for (I line = 0; line < num_lines; ++line)
      for (I r = 0; r < reps; ++r)
        for (auto* v : lane_total[line][r])
          rep_total[line][r].push_back(
              lanes > 1 ? shuffle_any(v, [&](llvm::Value* v32) { return target_.shuffle_idx(b_, v32, last_lane); }) : v);
  }

  // Each element: combine(carry of earlier repetitions, warps before, lanes before, inclusive).
  std::vector<Elems> out(n, Elems(static_cast<std::size_t>(dist.num_slots())));
  for (I line = 0; line < num_lines; ++line) {
    Vals carry;
    for (I r = 0; r < reps; ++r) {
      Prefix p;
      if (r > 0) p = {carry, b_.getTrue()};
      if (warps > 1) p = extend(p, warps_before[line][r], b_.CreateICmpUGT(warp_pos, u32(0)));
      if (lanes > 1) p = extend(p, lanes_before[line][r], b_.CreateICmpUGT(lane_pos, u32(0)));
      for (I q = r * spt; q < std::min(axis_slots, (r + 1) * spt); ++q) {
        Vals v = inclusive[line][q];
        if (p.valid) v = select(p.valid, combine(op, p.vals, v), v);
        const I k = slot_of(line, q);
        for (std::size_t i = 0; i < n; ++i) out[i][k] = v[i];
      }
      if (r + 1 < reps) carry = r == 0 ? rep_total[line][0] : combine(op, carry, rep_total[line][r]);
    }
  }
  for (std::size_t i = 0; i < n; ++i) set(op.result(static_cast<int>(i)), std::move(out[i]));
}

}  // namespace tessera::lower
