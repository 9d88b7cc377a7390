// dot(a, b, acc) (ops.def). a (M x K) and b (K x N) are written to the op's shared-memory region
// from whatever layout they arrive in, rows padded by 16 bytes (analysis::dot_row_stride), then:
// - on tensor cores (analysis::dot_uses_mma: f16/bf16, tf32, i8; warps of 32), each warp fetches
//   operand fragments (ldmatrix; B of 32- and 8-bit elements word by word, as ldmatrix transposes
//   16-bit elements only) and issues mma.sync m16n8k{16,8,32} into an accumulator laid out as
//   analysis::mma_v2_layout says (jit/analysis/layouts.hpp has the fragment <-> tile map);
// - otherwise (f32 "ieee", warps of 64) each thread computes its own result elements with fma loops
//   over k from shared memory, in the order the interpreter uses (k ascending), matching it exactly.
// A pipelined dot (num_stages >= 2, pipeline_loads.hpp) reads operands from views instead of
// staging them: rings that cp.async filled (lower_shared.cpp), or a loop-invariant operand stored
// once before the loop.
// On sm_90a, dots the layout pass marked "wgmma" run on wgmma.mma_async from swizzled operands
// instead (lower_wgmma.cpp), an A already in the wgmma layout straight from registers.
#include <fmt/format.h>

#include "jit/lower/lowering.hpp"
#include "jit/analysis/shared_memory.hpp"
#include "tessera/error.hpp"

namespace tessera::lower {
using ir::DType;
using ir::Op;
using ir::OpKind;
using I = std::int64_t;

I KernelLowering::shared_run(const ir::Type& t, const SharedTile& tile) const {
  if (tile.contiguous_dim != 1) return 1;
  I run = analysis::row_run(t);
  // 16-byte pieces stay whole under a swizzle; padded rows start where their stride says.
  const I row_bytes = tile.swizzle ? 16 : tile.row_stride * tile.esz;
  while (run > 1 && row_bytes % (run * tile.esz) != 0) run /= 2;
  return run;
}

void KernelLowering::stage_in_shared(const ir::Value* v, llvm::Value* base, const SharedTile& tile) {
  // Each thread writes the elements it holds; runs of elements contiguous along the row that the
  // layout keeps in one thread go as one vector of up to 16 bytes (shared_run).
  const ir::Type& t = v->type;
  const I esz = ir::dtype_bytes(t.dtype);
  const I run = shared_run(t, tile);
  const Elems& elems = get(v);
  std::vector<I> firsts;
  for (I k = 0; k < static_cast<I>(elems.size()); k += run) firsts.push_back(k);
  const auto offset_of = shared_element_offsets(t, tile, firsts);
  for (I k : firsts) {
    llvm::Value* ptr = b_.CreateGEP(b_.getInt8Ty(), base, offset_of(k));
    if (run == 1) {
      b_.CreateStore(elems[k], ptr);
      continue;
    }
    b_.CreateAlignedStore(vector_of(elems, k, run), ptr, llvm::Align(static_cast<std::uint64_t>(run * esz)));
  }
}

Elems KernelLowering::load_from_shared(const ir::Type& t, llvm::Value* base, const SharedTile& tile) {
  const I esz = ir::dtype_bytes(t.dtype);
  const I run = shared_run(t, tile), slots = analysis::distribute(t).num_slots();
  llvm::Type* elem = scalar_type(t.element());
  std::vector<I> firsts;
  for (I k = 0; k < slots; k += run) firsts.push_back(k);
  const auto offset_of = shared_element_offsets(t, tile, firsts);
  Elems out;
  for (I k : firsts) {
    llvm::Value* ptr = b_.CreateGEP(b_.getInt8Ty(), base, offset_of(k));
    if (run == 1) {
      out.push_back(b_.CreateLoad(elem, ptr));
      continue;
    }
    auto* vty = llvm::FixedVectorType::get(elem, static_cast<unsigned>(run));
    llvm::Value* vec = b_.CreateAlignedLoad(vty, ptr, llvm::Align(static_cast<std::uint64_t>(run * esz)));
    for (I j = 0; j < run; ++j) out.push_back(b_.CreateExtractElement(vec, static_cast<std::uint64_t>(j)));
  }
  return out;
}

void KernelLowering::lower_dot(const Op& op) {
  const ir::Type& at = op.operands[0]->type;
  const ir::Type& bt = op.operands[1]->type;
  const ir::Type& rt = op.result()->type;
  const I k = at.shape[1];
  const SharedTile a_tile = dot_operand_tile(op, at), b_tile = dot_operand_tile(op, bt);
  const I a_stride = a_tile.row_stride, b_stride = b_tile.row_stride;  // padded rows (not wgmma)
  llvm::Type* elem = scalar_type(at.element());
  const bool wgmma = analysis::dot_uses_wgmma(op);
  // Operands read from views lie in their buffers (the IR's waits, fences and barriers come
  // before); the others are staged here, in the dot's region, between its two phases.
  llvm::Value* smem[2] = {nullptr, nullptr};
  const bool stages = analysis::dot_staged_bytes(op) > 0;
  if (stages) shared_phase(op, 0);
  for (int l = 0; l < 2; ++l) {
    const ir::Value* v = op.operands[static_cast<std::size_t>(l)];
    if (analysis::dot_reads_view(op, l)) {  // (the plan refused a view of no local_alloc)
      smem[l] = get(v)[0];
      continue;
    }
    if (!analysis::dot_stages(op, l)) continue;  // wgmma's A from registers
    smem[l] = b_.CreateConstGEP1_32(b_.getInt8Ty(), scratch(op), static_cast<unsigned>(analysis::dot_staged_offset(op, l)));
    stage_in_shared(v, smem[l], l == 0 ? a_tile : b_tile);
  }
  if (stages) {
    if (wgmma) target_.fence_proxy_async(b_);  // the stores, visible to wgmma's async proxy
    shared_phase(op, 1);
  }
  llvm::Value* a_smem = smem[0];
  llvm::Value* b_smem = smem[1];

  if (wgmma) return lower_dot_wgmma(op, a_smem, b_smem);

  if (analysis::dot_uses_mma(op, target_.warp_size())) {
    if (!(rt.layout == analysis::mma_v2_layout(rt.shape, m_.num_warps)))
      throw InternalError(fmt::format("lowering: tensor-core dot whose result is not in the mma layout at {}", op.loc.str()));
    return lower_dot_mma(op, a_smem, b_smem, a_stride, b_stride, b_tile.contiguous_dim == 0);
  }

  // fma loops: result slot s at (row, col) = acc + sum_k a[row][k] * b[k][col], k ascending, as
  // one LLVM loop over k (unrolled, the code would grow with K times the slots).
  const Elems& acc = get(op.operands[2]);
  const bool is_int = rt.dtype == DType::I32;
  const bool tf32 = at.dtype == DType::F32 && op.string_attr("input_precision") == "tf32";
  std::vector<llvm::Value*> a_rows, b_cols;
  for (I s = 0; s < static_cast<I>(acc.size()); ++s) {
    auto rc = element_coords(rt, s);
    a_rows.push_back(b_.CreateMul(rc[0], i32(b_, a_stride)));
    b_cols.push_back(rc[1]);
  }
  llvm::BasicBlock* entry = b_.GetInsertBlock();
  llvm::BasicBlock* body = llvm::BasicBlock::Create(ctx_, "dot.k", fn_);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "dot.done", fn_);
  b_.CreateBr(body);
  b_.SetInsertPoint(body);
  llvm::PHINode* p = b_.CreatePHI(b_.getInt32Ty(), 2);
  p->addIncoming(i32(b_, 0), entry);
  std::vector<llvm::PHINode*> sums;
  for (llvm::Value* v : acc) {
    sums.push_back(b_.CreatePHI(v->getType(), 2));
    sums.back()->addIncoming(v, entry);
  }
  llvm::Value* b_row = b_.CreateMul(p, i32(b_, b_stride));
  Elems next;
  for (std::size_t s = 0; s < acc.size(); ++s) {
    llvm::Value* x = b_.CreateLoad(elem, b_.CreateGEP(elem, a_smem, b_.CreateAdd(a_rows[s], p)));
    // A transposed view of b (smem_trans) holds row n of Bᵀ at n * stride: b[k][n] at n * stride + k.
    llvm::Value* b_at = b_tile.contiguous_dim == 0 ? b_.CreateAdd(b_.CreateMul(b_cols[s], i32(b_, b_stride)), p) : b_.CreateAdd(b_row, b_cols[s]);
    llvm::Value* y = b_.CreateLoad(elem, b_.CreateGEP(elem, b_smem, b_at));
    if (is_int) {
      next.push_back(b_.CreateAdd(sums[s], b_.CreateMul(b_.CreateSExt(x, b_.getInt32Ty()), b_.CreateSExt(y, b_.getInt32Ty()))));
      continue;
    }
    if (at.dtype != DType::F32) {
      x = b_.CreateFPExt(x, b_.getFloatTy());
      y = b_.CreateFPExt(y, b_.getFloatTy());
    } else if (tf32) {  // as the tensor cores read tf32 operands (warps of 64 have none here)
      x = truncate_to_tf32(b_, x);
      y = truncate_to_tf32(b_, y);
    }
    next.push_back(b_.CreateIntrinsic(llvm::Intrinsic::fma, {b_.getFloatTy()}, {x, y, sums[s]}));
  }
  llvm::Value* p_next = b_.CreateAdd(p, i32(b_, 1));
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  p->addIncoming(p_next, latch);
  for (std::size_t s = 0; s < acc.size(); ++s) sums[s]->addIncoming(next[s], latch);
  b_.CreateCondBr(b_.CreateICmpULT(p_next, i32(b_, k)), body, done);
  b_.SetInsertPoint(done);
  set(op.result(), std::move(next));
}

void KernelLowering::lower_dot_mma(const Op& op, llvm::Value* a_smem, llvm::Value* b_smem, I a_stride, I b_stride,
                                   bool b_transposed) {
  const ir::Type& at = op.operands[0]->type;
  const ir::Type& rt = op.result()->type;
  const ir::Layout& l = rt.layout;
  const I n = rt.shape[1], k = at.shape[1];
  const I esz = ir::dtype_bytes(at.dtype);
  // One mma takes 32 bytes of K from each row of A and column of B: 16 f16/bf16, 8 tf32, 32 s8
  // elements, as 8 words of 32 bits; the fragment maps in words are the same for all (target.hpp).
  const I k_step = 32 / esz, per_word = 4 / esz;
  const I wm_count = l.warps_per_cta[0], wn_count = l.warps_per_cta[1];
  const auto dist = analysis::distribute(rt);
  const I row_slots = dist.slots[0], col_slots = dist.slots[1];
  const I m_tiles = row_slots / 2, n_tiles = col_slots / 2;
  if (row_slots % 2 || col_slots % 2)
    throw InternalError(fmt::format("lowering: mma layout with odd slot counts at {}", op.loc.str()));
  if (k % k_step)
    throw InternalError(fmt::format("lowering: mma.sync dot with K = {}, not a multiple of {} at {}", k, k_step, op.loc.str()));
  using MmaType = Target::MmaType;
  const std::string precision = at.dtype == DType::F32 ? op.string_attr("input_precision") : "";
  const MmaType type = at.dtype == DType::BF16 ? MmaType::BF16
                       : at.dtype == DType::F16 ? MmaType::F16
                       : at.dtype == DType::I8  ? MmaType::S8
                                                : MmaType::TF32;

  llvm::Value* lane = b_.CreateURem(tid_, i32(b_, target_.warp_size()));
  llvm::Value* lane_row = b_.CreateAnd(lane, i32(b_, 7));                        // L % 8
  llvm::Value* lane_q = b_.CreateLShr(lane, i32(b_, 3));                         // L / 8
  llvm::Value* q_low = b_.CreateAnd(lane_q, i32(b_, 1));
  llvm::Value* q_high = b_.CreateLShr(lane_q, i32(b_, 1));
  llvm::Value* wm = warp_coord(l, 0);
  llvm::Value* wn = warp_coord(l, 1);
  auto byte_ptr = [&](llvm::Value* base, llvm::Value* elem_index) {
    return b_.CreateGEP(b_.getInt8Ty(), base, b_.CreateMul(elem_index, i32(b_, esz)));
  };
  // The first column of B's n-tile j (j an i32) for this warp.
  auto n_tile_column = [&](llvm::Value* j) {
    return b_.CreateAnd(b_.CreateAdd(b_.CreateMul(wn, i32(b_, 8)), b_.CreateMul(j, i32(b_, 8 * wn_count))), i32(b_, n - 1));
  };
  // B's fragment words of n-tile j from its k-major rows, where ldmatrix.trans (16-bit elements
  // only) cannot transpose: lane L reads column (L/4) of the tile, words L%4 and L%4 + 4 of the
  // mma's K, each of `per_word` elements packed lower k first.
  auto b_words_by_element = [&](I kk, I j) {
    llvm::Value* col = b_.CreateAdd(n_tile_column(i32(b_, j)), b_.CreateLShr(lane, i32(b_, 2)));
    llvm::Value* quad = b_.CreateAnd(lane, i32(b_, 3));
    std::vector<llvm::Value*> words;
    for (I w = 0; w < 2; ++w) {
      llvm::Value* word = nullptr;
      for (I e = 0; e < per_word; ++e) {
        llvm::Value* krow = b_.CreateAdd(i32(b_, k_step * kk + (k_step / 2) * w + e), b_.CreateMul(quad, i32(b_, per_word)));
        llvm::Value* at = b_transposed ? b_.CreateAdd(b_.CreateMul(col, i32(b_, b_stride)), krow) : b_.CreateAdd(b_.CreateMul(krow, i32(b_, b_stride)), col);
        llvm::Value* ptr = byte_ptr(b_smem, at);
        llvm::Value* v = b_.CreateLoad(b_.getIntNTy(static_cast<unsigned>(8 * esz)), ptr);
        v = b_.CreateShl(b_.CreateZExt(v, b_.getInt32Ty()), i32(b_, 8 * esz * e));
        word = word ? b_.CreateOr(word, v) : v;
      }
      words.push_back(word);
    }
    return words;
  };
  // tf32x3: an f32 word as its tf32 high part (truncated) and the remainder x - high, exact in f32,
  // of which the tensor core reads the top 10 mantissa bits in turn.
  auto split = [&](const std::vector<llvm::Value*>& words, bool high) {
    std::vector<llvm::Value*> out;
    for (llvm::Value* w : words) {
      llvm::Value* x = b_.CreateBitCast(w, b_.getFloatTy());
      llvm::Value* hi = truncate_to_tf32(b_, x);
      out.push_back(b_.CreateBitCast(high ? hi : b_.CreateFSub(x, hi), b_.getInt32Ty()));
    }
    return out;
  };

  Elems acc = get(op.operands[2]);
  for (I kk = 0; kk < k / k_step; ++kk) {
    // A: for m-tile i, lane L gives the row of fragment row (L%8) + 8*(q%2), k half q/2:
    // tile row 8*wm + L%8 + 8*Wm*(2i + q%2).
    std::vector<std::vector<llvm::Value*>> a_frag;
    for (I i = 0; i < m_tiles; ++i) {
      llvm::Value* row = b_.CreateAdd(b_.CreateAdd(b_.CreateMul(wm, i32(b_, 8)), lane_row),
                                      b_.CreateMul(b_.CreateAdd(i32(b_, 2 * i), q_low), i32(b_, 8 * wm_count)));
      llvm::Value* col = b_.CreateAdd(i32(b_, k_step * kk), b_.CreateMul(q_high, i32(b_, k_step / 2)));
      a_frag.push_back(target_.ldmatrix_x4(b_, byte_ptr(a_smem, b_.CreateAdd(b_.CreateMul(row, i32(b_, a_stride)), col)), false));
    }
    std::vector<std::vector<llvm::Value*>> b_frag(n_tiles);
    if (esz == 2) {
      // B (stored k-major): n-tiles j and j+1 in one ldmatrix.trans; lane L gives k row
      // 16*kk + 8*(q%2) + L%8 of n-tile j + q/2, whose columns start at 8*wn + 8*Wn*(j + q/2) mod N.
      // A transposed view (smem_trans: Bᵀ's rows, n by n) is already the fragment's order: plain
      // ldmatrix, lane L giving the address of column n-tile j + q/2's row L%8 at k half q%2.
      for (I j = 0; j < n_tiles; j += 2) {
        llvm::Value* col = n_tile_column(n_tiles > 1 ? b_.CreateAdd(i32(b_, j), q_high) : i32(b_, j));
        llvm::Value* at = nullptr;
        if (b_transposed) {
          at = b_.CreateAdd(b_.CreateMul(b_.CreateAdd(col, lane_row), i32(b_, b_stride)),
                            b_.CreateAdd(i32(b_, 16 * kk), b_.CreateMul(q_low, i32(b_, 8))));
        } else {
          llvm::Value* krow = b_.CreateAdd(i32(b_, 16 * kk), b_.CreateAdd(b_.CreateMul(q_low, i32(b_, 8)), lane_row));
          at = b_.CreateAdd(b_.CreateMul(krow, i32(b_, b_stride)), col);
        }
        auto r = target_.ldmatrix_x4(b_, byte_ptr(b_smem, at), !b_transposed);
        b_frag[static_cast<std::size_t>(j)] = {r[0], r[1]};
        if (j + 1 < n_tiles) b_frag[static_cast<std::size_t>(j + 1)] = {r[2], r[3]};
      }
    } else {
      for (I j = 0; j < n_tiles; ++j) b_frag[static_cast<std::size_t>(j)] = b_words_by_element(kk, j);
    }
    // tf32x3: every fragment as its high and low parts; three products, the small ones first
    // (a_lo·b_hi, a_hi·b_lo, then a_hi·b_hi), so that the low parts are not lost to the large sum.
    const bool three = precision == "tf32x3";
    std::vector<std::vector<llvm::Value*>> a_lo, b_lo;
    if (three) {
      for (auto& f : a_frag) a_lo.push_back(split(f, false)), f = split(f, true);
      for (auto& f : b_frag) b_lo.push_back(split(f, false)), f = split(f, true);
    }
    for (I i = 0; i < m_tiles; ++i)
      for (I j = 0; j < n_tiles; ++j) {
        const I s0 = (2 * i) * col_slots + 2 * j, s1 = (2 * i + 1) * col_slots + 2 * j;
        std::vector<llvm::Value*> c{acc[s0], acc[s0 + 1], acc[s1], acc[s1 + 1]};
        const auto ui = static_cast<std::size_t>(i), uj = static_cast<std::size_t>(j);
        if (three) {
          c = target_.mma_m16n8(b_, type, a_lo[ui], b_frag[uj], c);
          c = target_.mma_m16n8(b_, type, a_frag[ui], b_lo[uj], c);
        }
        c = target_.mma_m16n8(b_, type, a_frag[ui], b_frag[uj], c);
        acc[s0] = c[0], acc[s0 + 1] = c[1], acc[s1] = c[2], acc[s1 + 1] = c[3];
      }
  }
  set(op.result(), std::move(acc));
}

}  // namespace tessera::lower
