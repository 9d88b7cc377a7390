// The Target interface's default tensor-core hooks: ldmatrix and mma.sync (f16, bf16, tf32, s8) computed from what each
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

// Element e of an operand word of `type` (mma_m16n8's element order: the lower k first), as f32
// (i32 for s8): f16/bf16 halves, a tf32 word whole, s8 bytes sign-extended.
llvm::Value* word_element(llvm::IRBuilder<>& b, llvm::Value* word, int e, Target::MmaType type) {
  using T = Target::MmaType;
  if (type == T::TF32) return truncate_to_tf32(b, b.CreateBitCast(word, b.getFloatTy()));  // as the tensor cores read it
  if (type == T::S8) return b.CreateAShr(b.CreateShl(word, b.getInt32(static_cast<std::uint32_t>(24 - 8 * e))), b.getInt32(24));
  llvm::Value* bits = e ? b.CreateLShr(word, b.getInt32(16)) : word;
  if (type == T::BF16) return b.CreateBitCast(b.CreateShl(b.CreateAnd(bits, b.getInt32(0xffff)), b.getInt32(16)), b.getFloatTy());
  return b.CreateFPExt(b.CreateBitCast(b.CreateTrunc(bits, b.getInt16Ty()), b.getHalfTy()), b.getFloatTy());
}

int elements_per_word(Target::MmaType type) {
  switch (type) {
    case Target::MmaType::TF32: return 1;
    case Target::MmaType::S8: return 4;
    default: return 2;
  }
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

std::array<std::vector<llvm::Value*>, 2> emulated_a_rows(const Target& target, llvm::IRBuilder<>& b,
                                                         const std::vector<llvm::Value*>& a, Target::MmaType type) {
  const int per_word = elements_per_word(type), k = 8 * per_word;
  llvm::Value* group = b.CreateLShr(lane_id(target, b), b.getInt32(2));
  // A rows g and g+8, words 0..7 of K: lane 4g+t holds word t of row g in a[0] (word t+4 in
  // a[2]) and of row g+8 in a[1] (a[3]).
  std::array<std::vector<llvm::Value*>, 2> rows = {std::vector<llvm::Value*>(static_cast<std::size_t>(k)),
                                                   std::vector<llvm::Value*>(static_cast<std::size_t>(k))};
  for (int t = 0; t < 4; ++t) {
    llvm::Value* src = b.CreateAdd(b.CreateShl(group, b.getInt32(2)), b.getInt32(static_cast<std::uint32_t>(t)));
    for (int r = 0; r < 4; ++r) {
      llvm::Value* w = target.shuffle_idx(b, a[static_cast<std::size_t>(r)], src);
      const int word = t + 4 * (r / 2);
      for (int e = 0; e < per_word; ++e) rows[r % 2][static_cast<std::size_t>(per_word * word + e)] = word_element(b, w, e, type);
    }
  }
  return rows;
}

namespace {
// The body of the emulated mma.sync: d = a·b + c from the lanes' fragments (Target::mma_m16n8).
std::vector<llvm::Value*> emulate_mma(const Target& target, llvm::IRBuilder<>& b, Target::MmaType type,
                                      const std::vector<llvm::Value*>& a, const std::vector<llvm::Value*>& bm,
                                      const std::vector<llvm::Value*>& c) {
  using MmaType = Target::MmaType;
  const int per_word = elements_per_word(type), k = 8 * per_word;
  llvm::Value* lane = lane_id(target, b);
  llvm::Value* quad = b.CreateAnd(lane, b.getInt32(3));
  const auto rows = emulated_a_rows(target, b, a, type);
  // B columns 2(l%4) and 2(l%4)+1: lane 4n+t holds word t of column n in b[0] (word t+4 in b[1]).
  std::vector<llvm::Value*> cols[2] = {std::vector<llvm::Value*>(static_cast<std::size_t>(k)),
                                       std::vector<llvm::Value*>(static_cast<std::size_t>(k))};
  for (int e = 0; e < 2; ++e) {
    llvm::Value* col = b.CreateAdd(b.CreateShl(quad, b.getInt32(1)), b.getInt32(static_cast<std::uint32_t>(e)));
    for (int t = 0; t < 4; ++t) {
      llvm::Value* src = b.CreateAdd(b.CreateShl(col, b.getInt32(2)), b.getInt32(static_cast<std::uint32_t>(t)));
      for (int r = 0; r < 2; ++r) {
        llvm::Value* w = target.shuffle_idx(b, bm[static_cast<std::size_t>(r)], src);
        const int word = t + 4 * r;
        for (int x = 0; x < per_word; ++x) cols[e][static_cast<std::size_t>(per_word * word + x)] = word_element(b, w, x, type);
      }
    }
  }
  // c0 (g, 2t), c1 (g, 2t+1), c2 (g+8, 2t), c3 (g+8, 2t+1); products summed in k order, as the
  // interpreter does (i32 sums wrap).
  std::vector<llvm::Value*> d;
  for (std::size_t i = 0; i < 4; ++i) {
    llvm::Value* s = c[i];
    for (std::size_t p = 0; p < static_cast<std::size_t>(k); ++p) {
      llvm::Value* x = rows[i / 2][p];
      llvm::Value* y = cols[i % 2][p];
      s = type == MmaType::S8 ? b.CreateAdd(s, b.CreateMul(x, y))
                              : b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()}, {x, y, s});
    }
    d.push_back(s);
  }
  return d;
}
}  // namespace

std::vector<llvm::Value*> Target::mma_m16n8(llvm::IRBuilder<>& b, MmaType type, const std::vector<llvm::Value*>& a,
                                            const std::vector<llvm::Value*>& bm, const std::vector<llvm::Value*>& c) const {
  // One function per operand type, called per mma: inlined, a big tile's hundreds of emulated mmas
  // made a frame larger than the host executor's fiber stacks (backends/host/fibers.hpp).
  static constexpr const char* kNames[] = {"f16", "bf16", "tf32", "s8"};
  llvm::Module* m = b.GetInsertBlock()->getModule();
  const std::string name = std::string("tessera.emulated_mma.") + kNames[static_cast<int>(type)];
  llvm::Function* f = m->getFunction(name);
  if (!f) {
    llvm::Type* i32 = b.getInt32Ty();
    llvm::Type* acc = c[0]->getType();
    std::vector<llvm::Type*> params(6, i32);
    params.insert(params.end(), 4, acc);
    auto* ret = llvm::StructType::get(b.getContext(), std::vector<llvm::Type*>(4, acc));
    f = llvm::Function::Create(llvm::FunctionType::get(ret, params, false), llvm::Function::InternalLinkage, name, m);
    f->addFnAttr(llvm::Attribute::NoInline);
    llvm::IRBuilder<> fb(llvm::BasicBlock::Create(b.getContext(), "entry", f));
    std::vector<llvm::Value*> args;
    for (auto& arg : f->args()) args.push_back(&arg);
    auto d = emulate_mma(*this, fb, type, {args.begin(), args.begin() + 4}, {args.begin() + 4, args.begin() + 6},
                         {args.begin() + 6, args.end()});
    llvm::Value* r = llvm::UndefValue::get(ret);
    for (unsigned i = 0; i < 4; ++i) r = fb.CreateInsertValue(r, d[i], {i});
    fb.CreateRet(r);
  }
  std::vector<llvm::Value*> args;
  for (auto* v : a) args.push_back(b.CreateBitCast(v, b.getInt32Ty()));
  for (auto* v : bm) args.push_back(b.CreateBitCast(v, b.getInt32Ty()));
  for (auto* v : c) args.push_back(v);
  llvm::Value* r = b.CreateCall(f, args);
  std::vector<llvm::Value*> d;
  for (unsigned i = 0; i < 4; ++i) d.push_back(b.CreateExtractValue(r, {i}));
  return d;
}

llvm::Value* truncate_to_tf32(llvm::IRBuilder<>& b, llvm::Value* f32) {
  llvm::Value* bits = b.CreateBitCast(f32, b.getInt32Ty());
  llvm::Value* finite = b.CreateICmpNE(b.CreateAnd(bits, b.getInt32(0x7f800000)), b.getInt32(0x7f800000));
  return b.CreateBitCast(b.CreateSelect(finite, b.CreateAnd(bits, b.getInt32(0xffffe000u)), bits), b.getFloatTy());
}

}  // namespace tessera::lower
