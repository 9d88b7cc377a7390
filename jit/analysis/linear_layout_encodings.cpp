// tessera's encodings as linear layouts (see linear_layout.hpp): blocked and slice layouts, the
// mma.sync and wgmma fragments, NVMMA shared-memory swizzles, and the slice of a layout.
#include <algorithm>
#include <bit>

#include "jit/analysis/linear_layout.hpp"
#include "tessera/error.hpp"

namespace tessera::analysis {
using I = std::int64_t;
using Basis = LinearLayout::Basis;

namespace {

bool pow2(I v) { return v > 0 && (v & (v - 1)) == 0; }
int log2i(I v) { return std::countr_zero(static_cast<std::uint64_t>(v)); }

std::vector<std::string> dim_names(std::size_t rank) {
  std::vector<std::string> n;
  for (std::size_t d = 0; d < rank; ++d) n.push_back("dim" + std::to_string(d));
  return n;
}

std::string shape_text(const std::vector<I>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

void require_pow2_shape(const std::vector<I>& shape, std::string_view who) {
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (!pow2(shape[d]))
      throw InternalError(std::string(who) + ": dim " + std::to_string(d) + " of shape " + shape_text(shape) + " is " +
                          std::to_string(shape[d]) + ", not a power of two");
}

// A register/lane/warp layout over dim0..dimR-1 of `shape` from bases given as plain coordinates;
// each coordinate is masked to the shape (mod S_d, S_d a power of two), which is how a tile
// smaller than the hardware tile replicates: the bits that would leave it become broadcast.
LinearLayout rlw(std::vector<Basis> reg, std::vector<Basis> lane, std::vector<Basis> warp, const std::vector<I>& shape) {
  auto mask = [&](std::vector<Basis>& bs) {
    for (auto& b : bs)
      for (std::size_t d = 0; d < shape.size(); ++d) b[d] &= shape[d] - 1;
  };
  mask(reg), mask(lane), mask(warp);
  std::vector<LinearLayout::OutDim> outs;
  auto names = dim_names(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) outs.push_back({names[d], shape[d]});
  return LinearLayout({{"register", std::move(reg)}, {"lane", std::move(lane)}, {"warp", std::move(warp)}}, outs);
}

Basis unit(std::size_t rank, std::size_t d, I v) {
  Basis b(rank, 0);
  b[d] = v;
  return b;
}

void require_2d(const std::vector<I>& shape, std::string_view who) {
  if (shape.size() != 2) throw InternalError(std::string(who) + ": shape " + shape_text(shape) + " is not 2-D");
  require_pow2_shape(shape, who);
}

// Warp bits of an mma.sync layout with warps_per_cta {Wm, Wn}, warp id = wm * Wn + wn: the low
// log2(Wn) bits step along N by `n_step` (0: broadcast), the rest along M by `m_step`.
std::vector<Basis> mma_warps(const std::vector<int>& w, I m_step, I n_step, std::string_view who) {
  if (w.size() != 2 || !pow2(w[0]) || !pow2(w[1]))
    throw InternalError(std::string(who) + ": warps_per_cta must be two powers of two");
  std::vector<Basis> warp;
  for (I i = 1; i < w[1]; i *= 2) warp.push_back({0, n_step * i});
  for (I i = 1; i < w[0]; i *= 2) warp.push_back({m_step * i, 0});
  return warp;
}

// Register bits repeating a tile of `step` along `d` until `size` is covered.
void repeat(std::vector<Basis>& reg, std::size_t d, I step, I size) {
  for (I s = step; s < size; s *= 2) reg.push_back(unit(2, d, s));
}

}  // namespace

LinearLayout blocked_to_linear(const ir::Layout& layout, const std::vector<I>& shape, int warp_size) {
  if (layout.kind != ir::Layout::Kind::Blocked && layout.kind != ir::Layout::Kind::Slice)
    throw InternalError("blocked_to_linear: the layout " + ir::to_string(layout) + " is neither blocked nor a slice");
  require_pow2_shape(shape, "blocked_to_linear");
  std::vector<I> full = shape;  // the parent shape: a slice applies its parent with a 1 inserted
  const bool is_slice = layout.kind == ir::Layout::Kind::Slice;
  if (is_slice) {
    if (layout.slice_dim < 0 || layout.slice_dim > static_cast<int>(shape.size()))
      throw InternalError("blocked_to_linear: slice dim " + std::to_string(layout.slice_dim) + " out of range for " + shape_text(shape));
    full.insert(full.begin() + layout.slice_dim, 1);
  }
  const std::size_t rank = full.size();
  const auto& l = layout;
  if (static_cast<std::size_t>(l.parent_rank()) != rank || l.threads_per_warp.size() != rank || l.warps_per_cta.size() != rank ||
      l.order.size() != rank || (!l.lane_repeat.empty() && l.lane_repeat.size() != rank))
    throw InternalError("blocked_to_linear: layout " + ir::to_string(layout) + " does not have rank " + std::to_string(rank) +
                        " for shape " + shape_text(shape));
  I threads = 1;
  for (std::size_t d = 0; d < rank; ++d) {
    if (!pow2(l.size_per_thread[d]) || !pow2(l.threads_per_warp[d]) || !pow2(l.warps_per_cta[d]) ||
        !pow2(l.repeat(static_cast<int>(d))))
      throw InternalError("blocked_to_linear: layout " + ir::to_string(layout) + " has a size that is not a power of two");
    threads *= l.threads_per_warp[d];
  }
  if (threads != warp_size)
    throw InternalError("blocked_to_linear: threads_per_warp of " + ir::to_string(layout) + " multiply to " + std::to_string(threads) +
                        ", not the warp size " + std::to_string(warp_size));
  std::vector<int> seen(rank, 0);
  for (int o : l.order)
    if (o < 0 || o >= static_cast<int>(rank) || seen[o]++)
      throw InternalError("blocked_to_linear: order of " + ir::to_string(layout) + " is not a permutation");

  // Registers: slot k is row-major over the per-dim slot indices j_d, so the last dim's bits are
  // the lowest. Along d, slot j sits at off_d(j) = (j / spt) * cta_tile + j % spt (just j when the
  // dim is smaller than spt, but then n_d = S_d < spt and every j is below spt); for j a power of
  // two that is j below spt and (j / spt) * cta_tile above it. base_d (lanes, warps) uses the
  // bits in between, so base + off is base ^ off, and `mod S_d` is the mask rlw() applies.
  std::vector<Basis> reg, lane, warp;
  // With lane repeats (types.hpp) the register bits above spt first step a lane tile
  // (spt * tpw) per repeat, then whole CTA tiles.
  for (std::size_t d = rank; d-- > 0;) {
    const I spt = l.size_per_thread[d], repeats = l.repeat(static_cast<int>(d));
    const I lane_tile = spt * l.threads_per_warp[d], tile = lane_tile * repeats * l.warps_per_cta[d];
    const I fitting = std::min<I>(repeats, std::max<I>(1, full[d] / lane_tile));  // as distribute()
    const I n = std::min(spt * fitting * std::max<I>(1, full[d] / tile), full[d]);
    for (I j = 1; j < n; j *= 2)
      reg.push_back(unit(rank, d, j < spt ? j : j / spt < repeats ? (j / spt) * lane_tile : (j / spt / repeats) * tile));
  }
  // Lanes and warps decompose along `order`, fastest first: lane bit i of dim d is 2^i * spt_d,
  // warp bit i is 2^i * tpw_d * spt_d * repeat_d (both mod S_d).
  for (int o : l.order)
    for (I i = 1; i < l.threads_per_warp[o]; i *= 2) lane.push_back(unit(rank, o, i * l.size_per_thread[o]));
  for (int o : l.order)
    for (I i = 1; i < l.warps_per_cta[o]; i *= 2)
      warp.push_back(unit(rank, o, i * l.threads_per_warp[o] * l.size_per_thread[o] * l.repeat(o)));
  LinearLayout ll = rlw(reg, lane, warp, full);
  if (!is_slice) return ll;
  // The slice dim has size 1: every basis is 0 there and no register walks it; drop it.
  std::vector<std::string> keep;
  for (std::size_t d = 0; d < rank; ++d)
    if (static_cast<int>(d) != l.slice_dim) keep.push_back("dim" + std::to_string(d));
  return ll.sublayout({"register", "lane", "warp"}, keep).rename_outs(dim_names(rank - 1));
}

LinearLayout slice(const LinearLayout& l, int dim) {
  const int rank = static_cast<int>(l.out_dims().size());
  if (dim < 0 || dim >= rank)
    throw InternalError("slice: dim " + std::to_string(dim) + " out of range for " + to_string(l));
  std::vector<std::string> keep, ins;
  for (int d = 0; d < rank; ++d)
    if (d != dim) keep.push_back(l.out_dims()[d].name);
  for (const auto& in : l.in_dims()) ins.push_back(in.name);
  LinearLayout p = l.sublayout(ins, keep);
  // Registers that only walked along `dim` now all hold the one reduced value: drop them. Lanes
  // and warps keep their bits as broadcast, since the threads still exist.
  std::vector<LinearLayout::InDim> new_ins = p.in_dims();
  for (auto& in : new_ins)
    if (in.name == "register")
      std::erase_if(in.bases, [](const Basis& b) { return std::all_of(b.begin(), b.end(), [](I c) { return c == 0; }); });
  return LinearLayout(new_ins, p.out_dims()).rename_outs(dim_names(rank - 1));
}

// mma.sync C/D fragment of m16n8 (PTX ISA "Matrix Fragments for mma.m16n8k16", accumulators):
// groupID = lane >> 2, threadID_in_group = lane % 4; c_i at row = groupID + 8 * (i >= 2),
// col = threadID_in_group * 2 + (i & 1). So register bit 0 -> col 1, bit 1 -> row 8, lane bits
// 0, 1 -> col 2, 4 and lane bits 2..4 -> row 1, 2, 4.
LinearLayout mma_v2_accumulator(const std::vector<I>& shape, const std::vector<int>& warps_per_cta) {
  require_2d(shape, "mma_v2_accumulator");
  if (shape[0] % 16 || shape[1] % 8)
    throw InternalError("mma_v2_accumulator: shape " + shape_text(shape) + " is not a multiple of the 16x8 tile");
  std::vector<Basis> reg = {{0, 1}, {8, 0}};
  std::vector<Basis> lane = {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}};
  auto warp = mma_warps(warps_per_cta, 16, 8, "mma_v2_accumulator");
  repeat(reg, 1, I{8} * warps_per_cta[1], shape[1]);
  repeat(reg, 0, I{16} * warps_per_cta[0], shape[0]);
  return rlw(reg, lane, warp, shape);
}

// mma.sync A and B fragments (PTX ISA, "Matrix Fragments for mma.m16n8k16 / m16n8k32 /
// m16n8k8"), g = lane >> 2, t = lane % 4, element index i of the fragment:
//   f16/bf16 m16n8k16: A a_i: row g + 8 * ((i >> 1) & 1), col 2t + (i & 1) + 8 * (i >> 2);
//                      B b_i: row (k) 2t + (i & 1) + 8 * (i >> 1), col (n) g.
//   8-bit m16n8k32:    A a_i: row g + 8 * ((i >> 2) & 1), col 4t + (i & 3) + 16 * (i >> 3);
//                      B b_i: row 4t + (i & 3) + 16 * (i >> 2), col g.
//   tf32 m16n8k8:      A a_i: row g + 8 * (i & 1), col t + 4 * (i >> 1);
//                      B b_i: row t + 4 * i, col g.
// Read bit by bit: each element-index bit and each lane bit adds a fixed row or column.
LinearLayout mma_v2_operand(int op_idx, int element_bits, const std::vector<I>& shape, const std::vector<int>& warps_per_cta) {
  require_2d(shape, "mma_v2_operand");
  if (op_idx != 0 && op_idx != 1) throw InternalError("mma_v2_operand: op_idx is " + std::to_string(op_idx) + ", not 0 (A) or 1 (B)");
  // In (row-or-col, k) terms: A is {M, K}: dim0 = M, dim1 = K; B is {K, N}: dim0 = K, dim1 = N.
  std::vector<I> frag_k;  // element-index bits: 0 = non-k step of 8 (A: row 8), else a k step
  I k_tile = 0, k_lane = 0;
  switch (element_bits) {
    case 16: k_tile = 16, k_lane = 2, frag_k = op_idx == 0 ? std::vector<I>{1, 0, 8} : std::vector<I>{1, 8}; break;
    case 8: k_tile = 32, k_lane = 4, frag_k = op_idx == 0 ? std::vector<I>{1, 2, 0, 16} : std::vector<I>{1, 2, 16}; break;
    case 32: k_tile = 8, k_lane = 1, frag_k = op_idx == 0 ? std::vector<I>{0, 4} : std::vector<I>{4}; break;
    default:
      throw InternalError("mma_v2_operand: " + std::to_string(element_bits) + "-bit elements; mma.sync takes 8, 16 or 32");
  }
  const std::size_t kd = op_idx == 0 ? 1 : 0, md = 1 - kd;  // the K dim and the M (A) or N (B) dim
  const I mn_tile = op_idx == 0 ? 16 : 8;
  if (shape[kd] % k_tile || shape[md] % mn_tile)
    throw InternalError("mma_v2_operand: shape " + shape_text(shape) + " is not a multiple of the " +
                        (op_idx == 0 ? "16x" + std::to_string(k_tile) : std::to_string(k_tile) + "x8") + " fragment");
  std::vector<Basis> reg, lane;
  for (I k : frag_k) reg.push_back(k ? unit(2, kd, k) : unit(2, md, 8));  // the 0 entry is A's row + 8
  lane = {unit(2, kd, k_lane), unit(2, kd, 2 * k_lane), unit(2, md, 1), unit(2, md, 2), unit(2, md, 4)};
  // A is shared by the warps along N, B by those along M (mma_warps writes {M, N} coordinates:
  // A's dim0 is M and B's dim1 is N, so a zero step makes the other kind broadcast).
  auto warp = mma_warps(warps_per_cta, op_idx == 0 ? 16 : 0, op_idx == 0 ? 0 : 8, "mma_v2_operand");
  repeat(reg, kd, k_tile, shape[kd]);
  repeat(reg, md, mn_tile * (op_idx == 0 ? warps_per_cta[0] : warps_per_cta[1]), shape[md]);
  return rlw(reg, lane, warp, shape);
}

// wgmma m64nNk16 D fragment (PTX ISA "wgmma .m64nNk16 register fragment" for D): in warp w of the
// warpgroup, d_i at row 16 * w + g + 8 * ((i >> 1) & 1), col 8 * (i >> 2) + 2t + (i & 1).
LinearLayout wgmma_accumulator(const std::vector<I>& shape, int num_warps) {
  require_2d(shape, "wgmma_accumulator");
  if (num_warps < 4 || !pow2(num_warps))
    throw InternalError("wgmma_accumulator: num_warps is " + std::to_string(num_warps) + ", not 4, 8, 16 or 32");
  if (shape[0] % 64 || shape[1] % 8)
    throw InternalError("wgmma_accumulator: shape " + shape_text(shape) + " is not a multiple of 64x8");
  const I groups = num_warps / 4, gm = std::min<I>(groups, shape[0] / 64), gn = groups / gm;
  const I n_per_group = shape[1] / gn;
  if (n_per_group < 8)
    throw InternalError("wgmma_accumulator: " + std::to_string(gn) + " warpgroups along N leave fewer than 8 columns each of " +
                        shape_text(shape));
  std::vector<Basis> reg = {{0, 1}, {8, 0}};
  repeat(reg, 1, 8, n_per_group);
  std::vector<Basis> lane = {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}};
  std::vector<Basis> warp = {{16, 0}, {32, 0}};
  for (I i = 1; i < gm; i *= 2) warp.push_back({64 * i, 0});
  for (I i = 1; i < gn; i *= 2) warp.push_back({0, n_per_group * i});
  repeat(reg, 0, 64 * gm, shape[0]);
  return rlw(reg, lane, warp, shape);
}

LinearLayout nvmma_shared(const std::vector<I>& shape, int element_bits, int swizzle_bytes, bool transposed) {
  require_2d(shape, "nvmma_shared");
  if (transposed)  // the buffer holds the transpose: build it and name its dims the other way round
    return nvmma_shared({shape[1], shape[0]}, element_bits, swizzle_bytes, false)
        .rename_outs({"dim1", "dim0"})
        .transpose_outs({"dim0", "dim1"});
  if (element_bits != 8 && element_bits != 16 && element_bits != 32 && element_bits != 64)
    throw InternalError("nvmma_shared: " + std::to_string(element_bits) + "-bit elements; expected 8, 16, 32 or 64");
  const I rows = shape[0], cols = shape[1], e = element_bits / 8;
  if (swizzle_bytes != 0 && swizzle_bytes != 32 && swizzle_bytes != 64 && swizzle_bytes != 128)
    throw InternalError("nvmma_shared: swizzle of " + std::to_string(swizzle_bytes) + " bytes; expected 0, 32, 64 or 128");
  const I sw = swizzle_bytes;
  const I w = sw ? sw / e : cols;  // elements per row of a column block
  if (sw && (cols % w || rows % 8))
    throw InternalError("nvmma_shared: shape " + shape_text(shape) + " of " + std::to_string(element_bits) +
                        "-bit elements does not fill whole " + std::to_string(swizzle_bytes) +
                        "-byte swizzle atoms (8 rows, rows a multiple of the swizzle width)");
  // The element at buffer offset o: its column block, then within the block the byte address a,
  // un-swizzled (the XOR is its own inverse: its source bits 7.. are not among its target bits
  // 4..6), then split into row and column. Every step is a bit operation, so the image of each
  // offset bit is the layout.
  auto coords = [&](I o) -> Basis {
    const I block = o / (rows * w), a = (o % (rows * w)) * e;
    const I logical = sw ? a ^ (((a >> 7) & (sw / 16 - 1)) << 4) : a;
    const I row_bytes = sw ? sw : cols * e;
    return {logical / row_bytes, block * w + (logical % row_bytes) / e};
  };
  std::vector<Basis> offset;
  for (I o = 1; o < rows * cols; o *= 2) offset.push_back(coords(o));
  return LinearLayout({{"offset", offset}}, {{"dim0", rows}, {"dim1", cols}});
}

int swizzle_bytes_for(I contiguous_row_bytes) {
  for (int s : {128, 64, 32})
    if (contiguous_row_bytes >= s && contiguous_row_bytes % s == 0) return s;
  return 0;
}

}  // namespace tessera::analysis
