// Where dot operands lie in shared memory, and dot on wgmma (sm_90a).
//
// mma.sync operands are row-major tiles with rows padded by 16 bytes (ldmatrix reads 16-byte rows
// in distinct banks). wgmma reads its operands itself, through matrix descriptors, from the
// canonical layouts of the PTX ISA: the tile is split along its contiguous dim into blocks of
// W bytes (W = the swizzle, 128 bytes, or 64 / 32 for a narrower tile); each block stores its rows
// W bytes apart, 8-row groups 8*W apart, and the 16-byte chunks of each row are permuted by the
// "W-byte swizzle": chunk bits 4.. xor address bits 7.. (Triton's NVMMAShared, CUTLASS's
// Swizzle<3,4,3>). Copies of 16 bytes stay whole under the swizzle, and the eight rows a
// wgmma core matrix reads fall in distinct banks.
//
// An A in registers (analysis::wgmma_a_in_registers: a computed tile in the wgmma layout of its
// own shape, attention's P) is not staged: its accumulator-layout registers 8kk..8kk+7 are the
// k16 step's A fragment, packed two to a word before the wgmma.fence.
//
// A's rows are stored in tile order: warpgroup g multiplies the 64-row slabs s*(num_warps/4) + g,
// and the accumulator layout (analysis::wgmma_layout) is wgmma's own fragment order, so the
// result comes out of wgmma in the registers the layout assigns, without a shuffle or a row
// permutation. Both operands are stored with their own contiguous dim contiguous, so that their
// copies are whole 16-byte pieces either way: A K-major for a row-major A, M-major (wgmma's
// transposed A) for a column-major one, as Aᵀ·dC in a matmul's backward pass loads it; B N-major
// (transposed B) for a row-major B, K-major for a column-major one. With rows in order, the eight
// 16-byte pieces of an M-major A's 128-byte row land in lane order (cp.async runs at half speed
// otherwise: notes/tensor-cores.md); wgmma transposes 16-bit elements only, the only ones that
// take this path (analysis::wgmma_eligible).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "jit/analysis/wgmma_in_flight.hpp"
#include "jit/lower/lowering.hpp"
#include "tessera/error.hpp"

namespace tessera::lower {
using ir::Op;
using I = std::int64_t;

namespace {

// Whether `v` is the constant +0 (a tile of it, as the DSL's zeros): a dot from it accumulates
// nothing.
bool is_zero_constant(const ir::Value* v) {
  if (!v->def || v->def->kind != ir::OpKind::Constant) return false;
  const ir::Attr& value = v->def->attrs.at("value");
  if (const double* d = std::get_if<double>(&value)) return *d == 0.0 && !std::signbit(*d);
  const std::int64_t* i = std::get_if<std::int64_t>(&value);
  return i && *i == 0;
}

// The descriptor's swizzle mode for a swizzle of `bytes`: 1 = 128 B, 2 = 64 B, 3 = 32 B.
std::uint64_t swizzle_mode(I bytes) { return bytes == 128 ? 1 : bytes == 64 ? 2 : 3; }
}  // namespace

KernelLowering::SharedTile KernelLowering::dot_operand_tile(const Op& dot, const ir::Type& t) const {
  if (t.shared) return shared_tile(t);  // a view: as its encoding says
  SharedTile s;
  s.rows = t.shape[0];
  s.cols = t.shape[1];
  s.esz = ir::dtype_bytes(t.dtype);
  if (!analysis::dot_uses_wgmma(dot)) {
    s.row_stride = analysis::dot_row_stride(t.dtype, s.cols);
    return s;
  }
  // Whichever dim the operand's layout keeps contiguous.
  const auto dist = analysis::distribute(t);
  s.contiguous_dim = dist.slice_dim >= 0 ? 1 : dist.layout.order[0];
  const I contiguous_bytes = (s.contiguous_dim == 1 ? s.cols : s.rows) * s.esz;
  s.swizzle = std::min<I>(128, contiguous_bytes);
  if (s.swizzle < 32) throw InternalError(fmt::format("lowering: wgmma operand of {} contiguous bytes at {}", contiguous_bytes, dot.loc.str()));
  return s;
}

llvm::Value* KernelLowering::shared_tile_offset(const SharedTile& s, llvm::Value* row, llvm::Value* col) {
  if (s.swizzle == 0) {
    if (s.contiguous_dim == 0) std::swap(row, col);  // a transposed view's rows run along its dim 0
    return b_.CreateMul(b_.CreateAdd(b_.CreateMul(row, i32(b_, s.row_stride)), col), i32(b_, s.esz));
  }
  llvm::Value* outer = s.contiguous_dim == 1 ? row : col;
  llvm::Value* inner = s.contiguous_dim == 1 ? col : row;
  const I outer_extent = s.contiguous_dim == 1 ? s.rows : s.cols;
  const I per_block = s.swizzle / s.esz;
  llvm::Value* linear = b_.CreateMul(b_.CreateUDiv(inner, i32(b_, per_block)), i32(b_, outer_extent * s.swizzle));
  linear = b_.CreateAdd(linear, b_.CreateMul(outer, i32(b_, s.swizzle)));
  linear = b_.CreateAdd(linear, b_.CreateMul(b_.CreateURem(inner, i32(b_, per_block)), i32(b_, s.esz)));
  llvm::Value* chunk_bits = b_.CreateAnd(b_.CreateLShr(linear, i32(b_, 3)), i32(b_, (s.swizzle / 16 - 1) << 4));
  return b_.CreateXor(linear, chunk_bits);
}

std::optional<I> KernelLowering::shared_tile_shift(const SharedTile& s, I d_row, I d_col) const {
  if (s.swizzle == 0) return s.contiguous_dim == 0 ? (d_col * s.row_stride + d_row) * s.esz : (d_row * s.row_stride + d_col) * s.esz;
  const I d_outer = s.contiguous_dim == 1 ? d_row : d_col;
  const I d_inner = s.contiguous_dim == 1 ? d_col : d_row;
  const I outer_extent = s.contiguous_dim == 1 ? s.rows : s.cols;
  const I per_block = s.swizzle / s.esz;
  if (d_inner % per_block != 0) return std::nullopt;
  // The swizzle xors bits [4, 4 + log2(swizzle / 16)) with the linear offset's bits 3 higher: a
  // linear shift that is a multiple of 8 * swizzle leaves those bits alone and commutes with it.
  const I linear = (d_inner / per_block) * outer_extent * s.swizzle + d_outer * s.swizzle;
  if (linear % (8 * s.swizzle) != 0) return std::nullopt;
  return linear;
}

std::function<llvm::Value*(I)> KernelLowering::shared_element_offsets(const ir::Type& t, const SharedTile& tile,
                                                                      const std::vector<I>& slots) {
  const auto dist = analysis::distribute(t);
  // A layout wider than the tile wraps its coordinates (element_coords): no common translation.
  const bool wraps = dist.slice_dim >= 0 || dist.cta_tile[0] > dist.shape[0] || dist.cta_tile[1] > dist.shape[1];
  auto full = [this, &t, tile](I k) {
    auto rc = element_coords(t, k);
    return shared_tile_offset(tile, rc[0], rc[1]);
  };
  if (wraps) return full;
  // Anchors: elements whose offsets are computed in full, here, where they dominate every use;
  // every other element is a constant shift from one of them (a whole swizzle period apart).
  struct Shifted {
    llvm::Value* anchor;
    I shift;
  };
  struct Anchor {
    I row, col;
    llvm::Value* offset;
  };
  std::vector<Anchor> anchors;
  std::vector<Shifted> shifted(static_cast<std::size_t>(dist.num_slots()));
  for (I k : slots) {
    const auto c = dist.slot_coords(k);
    const I row = dist.offset(0, c[0]), col = dist.offset(1, c[1]);
    Shifted& e = shifted[static_cast<std::size_t>(k)];
    for (const Anchor& a : anchors)
      if (const auto shift = shared_tile_shift(tile, row - a.row, col - a.col)) {
        e = {a.offset, *shift};
        break;
      }
    if (!e.anchor) anchors.push_back({row, col, e.anchor = full(k)});
  }
  return [this, shifted = std::move(shifted)](I k) -> llvm::Value* {
    const Shifted& e = shifted.at(static_cast<std::size_t>(k));
    if (!e.anchor) throw InternalError(fmt::format("lowering: shared offset of slot {}, not among those asked for", k));
    return e.shift == 0 ? e.anchor : b_.CreateAdd(e.anchor, i32(b_, e.shift));
  };
}

void KernelLowering::lower_dot_wgmma(const Op& op, llvm::Value* a_smem, llvm::Value* b_smem) {
  const ir::Type& at = op.operands[0]->type;
  const ir::Type& bt = op.operands[1]->type;
  const ir::Type& rt = op.result()->type;
  const I m = at.shape[0], k = at.shape[1], n = bt.shape[1];
  const int warps = m_.num_warps;
  const I groups = warps / 4, slabs = m / 64 / groups;
  const auto dist = analysis::distribute(rt);
  const I col_slots = dist.slots[1];
  if (!(rt.layout == analysis::wgmma_layout(rt.shape, warps)) || dist.slots[0] != 2 * slabs || col_slots != n / 4)
    throw InternalError(fmt::format("lowering: wgmma dot whose result is not in the wgmma layout at {}", op.loc.str()));
  const SharedTile ta = dot_operand_tile(op, at), tb = dot_operand_tile(op, bt);

  // Descriptor addresses: the operand's address in the shared window (target) plus byte offsets.
  auto address = [&](llvm::Value* p) {
    llvm::Value* offset = b_.CreateTrunc(b_.CreateSub(b_.CreatePtrToInt(p, b_.getInt64Ty()), b_.CreatePtrToInt(smem_, b_.getInt64Ty())),
                                         b_.getInt32Ty());
    return b_.CreateAdd(target_.shared_window_address(b_, smem_), offset);
  };
  // A descriptor is its start address's 14-bit field (address / 16) and constant fields. Every
  // k16 step's descriptor is the first one's plus a constant: shared addresses lie below 2^18, so
  // adding to the start field never carries out of it. The first descriptor passes through
  // Target::wgmma_descriptor_base, so that each later one stays a 64-bit add (ptxas: one
  // UIADD3.64) rather than LLVM's or of disjoint bits (ptxas: an or and a move of the high word).
  auto descriptor = [&](llvm::Value* start, I leading, I stride, I swizzle) {
    const std::uint64_t fields = (static_cast<std::uint64_t>((leading >> 4) & 0x3fff) << 16) |
                                 (static_cast<std::uint64_t>((stride >> 4) & 0x3fff) << 32) | (swizzle_mode(swizzle) << 62);
    llvm::Value* start_field = b_.CreateAnd(b_.CreateLShr(start, i32(b_, 4)), i32(b_, 0x3fff));
    return target_.wgmma_descriptor_base(b_, b_.CreateOr(b_.CreateZExt(start_field, b_.getInt64Ty()), b_.getInt64(fields)));
  };
  auto at_offset = [&](llvm::Value* first, I bytes) {
    return bytes == 0 ? first : b_.CreateAdd(first, b_.getInt64(static_cast<std::uint64_t>(bytes >> 4)));
  };
  const bool a_registers = a_smem == nullptr;  // analysis::wgmma_a_in_registers
  llvm::Value* a_base = a_registers ? nullptr : address(a_smem);
  llvm::Value* b_base = address(b_smem);
  llvm::Value* group = b_.CreateUDiv(warp_id(), i32(b_, 4));
  // A K-major operand of `rows` rows (M or N), at k = 16kk: the k-block of the swizzle width
  // holding column 16kk, and the bytes into its rows, from the operand's first row.
  auto k_major_offset = [&](const SharedTile& t, I rows, I kk) {
    const I per_block = t.swizzle / t.esz, col = 16 * kk;
    return (col / per_block) * rows * t.swizzle + (col % per_block) * t.esz;
  };
  // A's slab s of this warpgroup starts at row 64 * (s * groups + group). M-major, each slab is
  // one M block of the 128-byte swizzle (64 16-bit elements; M >= 64 makes the swizzle 128), K
  // rows W apart, blocks K * W apart: the slab starts at block s * groups + group, k row 16kk.
  const bool trans_a = ta.contiguous_dim == 0;
  if (trans_a && ta.swizzle / ta.esz != 64)
    throw InternalError(fmt::format("lowering: M-major wgmma A with {}-byte swizzle blocks at {}", ta.swizzle, op.loc.str()));
  std::vector<llvm::Value*> a_slabs;
  for (I s = 0; s < slabs && !a_registers; ++s) {
    llvm::Value* slab = b_.CreateAdd(i32(b_, s * groups), group);
    if (trans_a)
      a_slabs.push_back(descriptor(b_.CreateAdd(a_base, b_.CreateMul(slab, i32(b_, k * ta.swizzle))), k * ta.swizzle,
                                   8 * ta.swizzle, ta.swizzle));
    else
      a_slabs.push_back(descriptor(b_.CreateAdd(a_base, b_.CreateMul(slab, i32(b_, 64 * ta.swizzle))), 16, 8 * ta.swizzle,
                                   ta.swizzle));
  }
  auto desc_a = [&](I s, I kk) -> llvm::Value* {
    if (a_registers) return nullptr;
    return at_offset(a_slabs[static_cast<std::size_t>(s)], trans_a ? 16 * kk * ta.swizzle : k_major_offset(ta, m, kk));
  };
  // B N-major: k rows 16kk.., N blocks K * W apart; K-major: like A, N rows.
  const bool trans_b = tb.contiguous_dim == 1;
  llvm::Value* const b_desc = trans_b ? descriptor(b_base, k * tb.swizzle, 8 * tb.swizzle, tb.swizzle)
                                    : descriptor(b_base, 16, 8 * tb.swizzle, tb.swizzle);
  auto desc_b = [&](I kk) { return at_offset(b_desc, trans_b ? 16 * kk * tb.swizzle : k_major_offset(tb, n, kk)); };

  // Accumulator register v of slab s (n/2 per slab) is row slot 2s + (v/2)%2, column slot
  // 2*(v/4) + v%2 of a layout of `slots` column slots.
  auto slot = [&](I s, I v, I slots) { return static_cast<std::size_t>((2 * s + (v / 2) % 2) * slots + 2 * (v / 4) + v % 2); };
  // A from registers, in the same layout over M x K: word r of slab s's k16 step kk packs its
  // registers 8kk + 2r and 8kk + 2r + 1 (the lower k in the low half), the fragment wgmma reads.
  Elems a_elems;
  if (a_registers) {
    const auto da = analysis::distribute(at);
    if (!(at.layout == analysis::wgmma_layout(at.shape, warps)) || da.slots[0] != 2 * slabs || da.slots[1] != k / 4)
      throw InternalError(fmt::format("lowering: wgmma A from registers not in the wgmma layout at {}", op.loc.str()));
    a_elems = get(op.operands[0]);
  }
  // All packed before wgmma.fence, which must follow every write of registers a wgmma reads
  // (ptxas injects a warpgroup.arrive otherwise: info C7519).
  std::vector<std::vector<llvm::Value*>> a_words(static_cast<std::size_t>(slabs * (k / 16)));
  for (I s = 0; s < slabs && a_registers; ++s)
    for (I kk = 0; kk < k / 16; ++kk)
      for (I r = 0; r < 4; ++r) {
        llvm::Value* pair = llvm::PoisonValue::get(llvm::FixedVectorType::get(scalar_type(at.element()), 2));
        for (I e = 0; e < 2; ++e)
          pair = b_.CreateInsertElement(pair, a_elems[slot(s, 8 * kk + 2 * r + e, k / 4)], static_cast<std::uint64_t>(e));
        a_words[static_cast<std::size_t>(s * (k / 16) + kk)].push_back(b_.CreateBitCast(pair, b_.getInt32Ty()));
      }
  // From a zero accumulator, the first k16 step computes d = a·b from undefined registers.
  const bool zero_acc = is_zero_constant(op.operands[2]);
  Elems acc = zero_acc ? Elems(get(op.operands[2]).size(), llvm::PoisonValue::get(b_.getFloatTy())) : get(op.operands[2]);
  Target::Wgmma shape{static_cast<int>(n), at.dtype == ir::DType::BF16, trans_a, trans_b};
  target_.wgmma_fence(b_);
  for (I kk = 0; kk < k / 16; ++kk) {
    llvm::Value* db = desc_b(kk);
    shape.zero_acc = zero_acc && kk == 0;
    for (I s = 0; s < slabs; ++s) {
      std::vector<llvm::Value*> regs;
      for (I v = 0; v < n / 2; ++v) regs.push_back(acc[slot(s, v, col_slots)]);
      auto d = target_.wgmma(b_, shape, desc_a(s, kk), a_words[static_cast<std::size_t>(s * (k / 16) + kk)], db, regs, smem_);
      for (I v = 0; v < n / 2; ++v) acc[slot(s, v, col_slots)] = d[static_cast<std::size_t>(v)];
    }
  }
  target_.wgmma_commit(b_);
  if (analysis::wgmma_deferred(op)) {
    // Retired by the wait of the body's first wgmma dot in the next iteration (or a later one in
    // this), which passes the loop-carried accumulators through itself; after the loop, by
    // lower_for's wait.
    set(op.result(), std::move(acc));
    return;
  }
  if (analysis::wgmma_in_flight(op)) {
    // This iteration's wgmmas run on while the next one's copies are issued: wait only for the
    // previous iteration's. Without a spare stage the copies after this dot refill that
    // iteration's stage: the layout pass put a debug_barrier right after this dot, so that every
    // warpgroup is done reading it (wgmma_spare_stage). The accumulators are not read before the
    // wait_group 0 after the loop (lower_for).
    target_.wgmma_wait(b_, {}, 1);
    set(op.result(), std::move(acc));
    return;
  }
  set(op.result(), target_.wgmma_wait(b_, acc, 0));
  // The accumulators of the deferred dots this wait completes (wgmma_in_flight.hpp, form 2): read
  // after it only, through a second (empty) wait that ties them.
  for (const ir::Value* carried : analysis::wgmma_accumulators_retired_by(op)) set(carried, target_.wgmma_wait(b_, get(carried), 0));
}

}  // namespace tessera::lower
