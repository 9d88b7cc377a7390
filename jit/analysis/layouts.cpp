#include "jit/analysis/layouts.hpp"

#include <algorithm>

#include "tessera/error.hpp"

namespace tessera::analysis {
using I = std::int64_t;

ir::Layout default_blocked_layout(const std::vector<I>& shape, int num_warps, int warp_size, int vector) {
  std::vector<int> order;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) order.push_back(d);
  return blocked_layout(shape, num_warps, warp_size, vector, order);
}

bool dot_uses_mma(const ir::Op& dot, int warp_size) {
  if (warp_size != 32) return false;
  switch (dot.operands.at(0)->type.dtype) {
    case ir::DType::F16:
    case ir::DType::BF16: return true;
    case ir::DType::I8: return dot.operands.at(0)->type.shape.at(1) % 32 == 0;  // m16n8k32
    case ir::DType::F32: return dot.string_attr("input_precision") != "ieee";
    default: return false;
  }
}

ir::Layout mma_v2_layout(const std::vector<I>& shape, int num_warps) {
  // Warps split the tile as evenly as the per-warp tile allows (at least 16 rows, 8 columns),
  // doubling along the dim whose per-warp extent is larger; warps beyond that replicate along N.
  const I m = shape.at(0), n = shape.at(1);
  int wm = 1, wn = 1;
  while (wm * wn < num_warps) {
    const bool can_m = m / (16 * wm) >= 2, can_n = n / (8 * wn) >= 2;
    if (can_m && (!can_n || m / wm >= n / wn)) wm *= 2;
    else wn *= 2;  // past N / 8 this replicates: warps hold the same columns
  }
  ir::Layout l;
  l.kind = ir::Layout::Kind::Blocked;
  l.size_per_thread = {1, 2};
  l.threads_per_warp = {8, 4};
  l.warps_per_cta = {wm, wn};
  l.order = {1, 0};
  return l;
}

TargetInfo target_info(const std::string& target_name) {
  const bool known = target_name.rfind("sm_", 0) == 0 || target_name.rfind("gfx", 0) == 0 || target_name == "host" ||
                     target_name == "host64";
  if (!known) throw Error("unknown target '" + target_name + "' (known: sm_80, sm_90a, gfx90a, gfx942, host, host64)");
  TargetInfo t;
  // Warps of 64 on AMD (gfx*) and on the host target "host64"; of 32 elsewhere (sm_*, "host").
  t.warp_size = target_name == "host64" || target_name.rfind("gfx", 0) == 0 ? 64 : 32;
  // The host target emulates wgmma (jit/lower/wgmma_emulation.cpp) so that CI runs that lowering.
  t.wgmma = target_name == "sm_90a" || target_name == "host";
  return t;
}

bool wgmma_eligible(const ir::Op& dot, int num_warps, int warp_size) {
  if (!dot_uses_mma(dot, warp_size) || num_warps % 4 != 0) return false;
  const auto& a = dot.operands.at(0)->type;
  // tf32 and s8 wgmma read both operands K-major only (no transpose for 32- and 8-bit elements):
  // not lowered yet, so those dots stay on mma.sync (notes/tensor-cores.md).
  if (ir::dtype_bytes(a.dtype) != 2) return false;
  const auto& b = dot.operands.at(1)->type;
  const I m = a.shape[0], k = a.shape[1], n = b.shape[1];
  return m % (16 * num_warps) == 0 && k % 16 == 0 && n % 16 == 0 && n <= 256;
}

bool dot_uses_wgmma(const ir::Op& dot) { return dot.kind == ir::OpKind::Dot && dot.has_attr("wgmma"); }

bool wgmma_a_in_registers(const ir::Op& dot) {
  if (!dot_uses_wgmma(dot)) return false;
  const ir::Type& a = dot.operands.at(0)->type;
  const ir::Layout& result = dot.result()->type.layout;
  if (a.shared || result.warps_per_cta.empty()) return false;
  return a.layout == wgmma_layout(a.shape, result.warps_per_cta[0]);
}

ir::Layout wgmma_layout(const std::vector<I>& shape, int num_warps) {
  ir::Layout l = mma_v2_layout(shape, num_warps);
  l.warps_per_cta = {num_warps, 1};
  l.lane_repeat = {2, 1};
  return l;
}

ir::Layout dot_accumulator_layout(const ir::Op& dot, int num_warps, int warp_size) {
  const auto& shape = dot.result()->type.shape;
  if (dot_uses_wgmma(dot)) return wgmma_layout(shape, num_warps);
  if (dot_uses_mma(dot, warp_size)) return mma_v2_layout(shape, num_warps);
  return {};
}

ir::Layout blocked_layout(const std::vector<I>& shape, int num_warps, int warp_size, int vector,
                          const std::vector<int>& order) {
  const int rank = static_cast<int>(shape.size());
  ir::Layout l;
  l.kind = ir::Layout::Kind::Blocked;
  l.size_per_thread.assign(rank, 1);
  l.threads_per_warp.assign(rank, 1);
  l.warps_per_cta.assign(rank, 1);
  l.order = order;
  const int fast = order[0];
  l.size_per_thread[fast] = static_cast<int>(std::max<I>(1, std::min<I>(vector, shape[fast])));

  // Threads: fill dims from the fastest, as far as each dim has room; the rest replicate along
  // the fastest dim.
  int threads_left = warp_size;
  for (int d : order) {
    if (threads_left <= 1) break;
    I room = std::max<I>(1, shape[d] / l.size_per_thread[d]);
    int t = static_cast<int>(std::min<I>(threads_left, room));
    l.threads_per_warp[d] = t;
    threads_left /= t;
  }
  l.threads_per_warp[fast] *= threads_left;
  // Warps: the same, starting where threads left room; the rest replicate along the slowest dim.
  int warps_left = num_warps;
  for (int d : order) {
    if (warps_left <= 1) break;
    I room = std::max<I>(1, shape[d] / (I{l.size_per_thread[d]} * l.threads_per_warp[d]));
    int w = static_cast<int>(std::min<I>(warps_left, room));
    l.warps_per_cta[d] = w;
    warps_left /= w;
  }
  l.warps_per_cta[order.back()] *= warps_left;
  return l;
}

ir::Layout slice_layout(const ir::Layout& parent, int dim) {
  if (parent.kind != ir::Layout::Kind::Blocked) throw InternalError("a slice layout needs a blocked parent");
  ir::Layout l = parent;
  l.kind = ir::Layout::Kind::Slice;
  l.slice_dim = dim;
  return l;
}

namespace {
bool is_blocked(const ir::Type& t) { return !t.layout.is_none() && t.layout.kind == ir::Layout::Kind::Blocked; }
}  // namespace

I lanes_along_axis(const ir::Type& t, int axis) {
  if (!is_blocked(t)) return 1;
  const auto& l = t.layout;
  return std::min<I>(l.threads_per_warp[axis], std::max<I>(1, t.shape[axis] / l.size_per_thread[axis]));
}

I warps_along_axis(const ir::Type& t, int axis) {
  if (!is_blocked(t)) return 1;
  const auto& l = t.layout;
  const I per_warp = I{l.size_per_thread[axis]} * l.threads_per_warp[axis] * l.repeat(axis);
  return std::min<I>(l.warps_per_cta[axis], std::max<I>(1, t.shape[axis] / per_warp));
}

I lane_stride(const ir::Layout& l, int axis) {
  I stride = 1;
  for (int o : l.order) {
    if (o == axis) break;
    stride *= l.threads_per_warp[o];
  }
  return stride;
}

Distribution distribute(const ir::Type& t) {
  if (t.layout.is_none()) throw InternalError("distribute: tile type " + ir::to_string(t) + " has no layout");
  Distribution dist;
  dist.layout = t.layout;
  dist.layout.kind = ir::Layout::Kind::Blocked;
  dist.shape = t.shape;
  if (t.layout.kind == ir::Layout::Kind::Slice) {
    dist.slice_dim = t.layout.slice_dim;
    dist.shape.insert(dist.shape.begin() + dist.slice_dim, 1);
  }
  const auto& l = dist.layout;
  if (static_cast<int>(dist.shape.size()) != l.parent_rank() ||
      (!l.lane_repeat.empty() && static_cast<int>(l.lane_repeat.size()) != l.parent_rank()))
    throw InternalError("distribute: layout rank does not match " + ir::to_string(t));
  for (int d = 0; d < l.parent_rank(); ++d) {
    // A dim shorter than the lane repeats (a broadcast row of an accumulator) keeps only the
    // repeats that land on distinct elements: a thread never holds one element twice.
    const I spt = l.size_per_thread[d], lane_tile = spt * l.threads_per_warp[d];
    const I repeats = std::min<I>(l.repeat(d), std::max<I>(1, dist.shape[d] / lane_tile));
    dist.cta_tile.push_back(lane_tile * l.repeat(d) * l.warps_per_cta[d]);
    dist.slots.push_back(std::min(spt * repeats * std::max<I>(1, dist.shape[d] / dist.cta_tile.back()), dist.shape[d]));
  }
  return dist;
}

I row_run(const ir::Type& t) {
  if (!t.is_tile() || t.layout.kind != ir::Layout::Kind::Blocked) return 1;
  const auto dist = distribute(t);
  const int last = t.rank() - 1;
  if (dist.layout.order[0] != last) return 1;
  // Powers of two all: a run that divides the size per thread, the slots and the dim stays whole
  // under the wrap of a replicated layout.
  return std::max<I>(1, std::min({static_cast<I>(dist.layout.size_per_thread[static_cast<std::size_t>(last)]),
                                  dist.slots[static_cast<std::size_t>(last)], t.shape.back(),
                                  I{16} / std::max(1, ir::dtype_bytes(t.dtype))}));
}

I Distribution::num_slots() const {
  I n = 1;
  for (auto s : slots) n *= s;
  return n;
}

std::vector<I> Distribution::slot_coords(I k) const {
  std::vector<I> c(slots.size());
  for (int d = static_cast<int>(slots.size()) - 1; d >= 0; --d) {
    c[d] = k % slots[d];
    k /= slots[d];
  }
  return c;
}

I Distribution::slot_index(const std::vector<I>& coords) const {
  I k = 0;
  for (std::size_t d = 0; d < slots.size(); ++d) k = k * slots[d] + coords[d];
  return k;
}

I Distribution::offset(int d, I j) const {
  I spt = layout.size_per_thread[d];
  if (shape[d] < spt) return j;
  // Slot j is element j % spt of group j / spt; groups run over the lane repeats (a lane tile
  // apart), then over CTA tiles.
  const I group = j / spt, repeats = layout.repeat(d);
  return (group / repeats) * cta_tile[d] + (group % repeats) * spt * layout.threads_per_warp[d] + j % spt;
}

I Distribution::base(int d, int tid, int warp_size) const {
  // Decompose lane and warp ids along `order`, fastest first.
  int lane = tid % warp_size, warp = tid / warp_size;
  I lane_d = 0, warp_d = 0;
  for (int o : layout.order) {
    if (o == d) {
      lane_d = lane % layout.threads_per_warp[o];
      warp_d = warp % layout.warps_per_cta[o];
    }
    lane /= layout.threads_per_warp[o];
    warp /= layout.warps_per_cta[o];
  }
  return (warp_d * layout.threads_per_warp[d] * layout.repeat(d) + lane_d) * layout.size_per_thread[d];
}

}  // namespace tessera::analysis
