// The Target interface's default tensor-core hooks: ldmatrix and mma.sync computed from what each
// lane holds, exchanged through shuffle_idx, exactly as the PTX ISA defines the instructions'
// fragments (see target.hpp). Slow (dozens of shuffles per instruction) and meant for targets
// without tensor cores that must still run the very fragment maps the NVIDIA lowering uses: the
// host target, so that a wrong lane or register map fails ctest rather than only the GPU tests.
#include "jit/lower/target.hpp"

namespace tessera::lower {
namespace {

llvm::Value* lane_id(const Target& t, llvm::IRBuilder<>& b) {
  return b.CreateAnd(t.thread_id(b), b.getInt32(31));
}

// The value of `words[select]` (select an i32 in 0..words.size()-1) as seen in lane `src`: every
// word is shuffled (shuffles are warp-collective, so all lanes take part in each), then chosen.
llvm::Value* shuffle_word(const Target& t, llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& words,
                          llvm::Value* src, llvm::Value* select) {
  llvm::Value* out = nullptr;
  for (std::size_t j = 0; j < words.size(); ++j) {
    llvm::Value* v = t.shuffle_idx(b, words[j], src);
    out = out ? b.CreateSelect(b.CreateICmpEQ(select, b.getInt32(static_cast<std::uint32_t>(j))), v, out) : v;
  }
  return out;
}

// The low (half 0) or high (half 1) 16-bit element of an i32 as f32.
llvm::Value* element_as_float(llvm::IRBuilder<>& b, llvm::Value* word, int half, bool bf16) {
  llvm::Value* bits = half ? b.CreateLShr(word, b.getInt32(16)) : word;
  if (bf16) return b.CreateBitCast(b.CreateShl(b.CreateAnd(bits, b.getInt32(0xffff)), b.getInt32(16)), b.getFloatTy());
  return b.CreateFPExt(b.CreateBitCast(b.CreateTrunc(bits, b.getInt16Ty()), b.getHalfTy()), b.getFloatTy());
}

}  // namespace

std::vector<llvm::Value*> Target::ldmatrix_x4(llvm::IRBuilder<>& b, llvm::Value* row_address, bool trans) const {
  // This lane's own row: four i32 words of 16-bit pairs.
  std::vector<llvm::Value*> words;
  for (int j = 0; j < 4; ++j)
    words.push_back(b.CreateAlignedLoad(b.getInt32Ty(), b.CreateConstGEP1_32(b.getInt32Ty(), row_address, j), llvm::Align(4)));
  llvm::Value* lane = lane_id(*this, b);
  llvm::Value* quad = b.CreateAnd(lane, b.getInt32(3));    // l % 4
  llvm::Value* group = b.CreateLShr(lane, b.getInt32(2));  // l / 4
  std::vector<llvm::Value*> out;
  for (int q = 0; q < 4; ++q) {
    llvm::Value* first_row_lane = b.getInt32(static_cast<std::uint32_t>(8 * q));
    if (!trans) {  // row l/4 of matrix q (given by lane 8q + l/4), word l%4
      out.push_back(shuffle_word(*this, b, words, b.CreateAdd(first_row_lane, group), quad));
      continue;
    }
    // Rows 2(l%4) and 2(l%4)+1 of matrix q, column l/4: word (l/4)/2, half (l/4)%2 of each.
    llvm::Value* word = b.CreateLShr(group, b.getInt32(1));
    llvm::Value* shift = b.CreateMul(b.CreateAnd(group, b.getInt32(1)), b.getInt32(16));
    llvm::Value* packed = nullptr;
    for (int e = 0; e < 2; ++e) {
      llvm::Value* src = b.CreateAdd(first_row_lane, b.CreateAdd(b.CreateShl(quad, b.getInt32(1)), b.getInt32(static_cast<std::uint32_t>(e))));
      llvm::Value* element = b.CreateAnd(b.CreateLShr(shuffle_word(*this, b, words, src, word), shift), b.getInt32(0xffff));
      packed = e == 0 ? element : b.CreateOr(packed, b.CreateShl(element, b.getInt32(16)));
    }
    out.push_back(packed);
  }
  return out;
}

std::vector<llvm::Value*> Target::mma_m16n8k16(llvm::IRBuilder<>& b, bool bf16, const std::vector<llvm::Value*>& a,
                                               const std::vector<llvm::Value*>& bm,
                                               const std::vector<llvm::Value*>& c) const {
  llvm::Value* lane = lane_id(*this, b);
  llvm::Value* quad = b.CreateAnd(lane, b.getInt32(3));
  llvm::Value* group = b.CreateLShr(lane, b.getInt32(2));
  // A rows g and g+8, k = 0..15: lane 4g+t holds k = 2t, 2t+1 of row g in a[0] (k+8 in a[2]) and
  // of row g+8 in a[1] (a[3]).
  llvm::Value* rows[2][16];
  for (int t = 0; t < 4; ++t) {
    llvm::Value* src = b.CreateAdd(b.CreateShl(group, b.getInt32(2)), b.getInt32(static_cast<std::uint32_t>(t)));
    for (int r = 0; r < 4; ++r) {
      llvm::Value* w = shuffle_idx(b, a[r], src);
      const int row = r % 2, k0 = 2 * t + 8 * (r / 2);
      rows[row][k0] = element_as_float(b, w, 0, bf16);
      rows[row][k0 + 1] = element_as_float(b, w, 1, bf16);
    }
  }
  // B columns 2(l%4) and 2(l%4)+1, k = 0..15: lane 4n+t holds k = 2t, 2t+1 of column n in b[0]
  // (k+8 in b[1]).
  llvm::Value* cols[2][16];
  for (int e = 0; e < 2; ++e) {
    llvm::Value* col = b.CreateAdd(b.CreateShl(quad, b.getInt32(1)), b.getInt32(static_cast<std::uint32_t>(e)));
    for (int t = 0; t < 4; ++t) {
      llvm::Value* src = b.CreateAdd(b.CreateShl(col, b.getInt32(2)), b.getInt32(static_cast<std::uint32_t>(t)));
      for (int r = 0; r < 2; ++r) {
        llvm::Value* w = shuffle_idx(b, bm[r], src);
        const int k0 = 2 * t + 8 * r;
        cols[e][k0] = element_as_float(b, w, 0, bf16);
        cols[e][k0 + 1] = element_as_float(b, w, 1, bf16);
      }
    }
  }
  std::vector<llvm::Value*> d;
  for (int i = 0; i < 4; ++i) {  // c0 (g, 2t), c1 (g, 2t+1), c2 (g+8, 2t), c3 (g+8, 2t+1)
    llvm::Value* s = c[i];
    for (int k = 0; k < 16; ++k)
      s = b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()}, {rows[i / 2][k], cols[i % 2][k], s});
    d.push_back(s);
  }
  return d;
}

}  // namespace tessera::lower
