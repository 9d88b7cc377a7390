// The Target interface's default wgmma: each thread computes its own accumulator elements from
// shared memory, reading A and B where the matrix descriptors say they are (the PTX ISA's canonical
// layouts and swizzles, decoded here independently of the lowering that encodes them), k ascending
// with one fma per product, as the interpreter sums. The host target runs it, so that a wrong
// descriptor, swizzle, row permutation or register map fails ctest rather than only the GPU tests.
#include "jit/lower/target.hpp"
#include "tessera/error.hpp"

namespace tessera::lower {
namespace {

struct Descriptor {
  llvm::Value* start;   // byte offsets (i32) relative to the shared memory's base
  llvm::Value* leading;
  llvm::Value* stride;
  llvm::Value* swizzle_bytes;  // the swizzle's row: 128, 64 or 32
};

Descriptor decode(llvm::IRBuilder<>& b, llvm::Value* desc) {
  auto field = [&](int shift) {
    llvm::Value* f = b.CreateAnd(b.CreateLShr(desc, b.getInt64(static_cast<std::uint64_t>(shift))), b.getInt64(0x3fff));
    return b.CreateShl(b.CreateTrunc(f, b.getInt32Ty()), b.getInt32(4));
  };
  llvm::Value* mode = b.CreateTrunc(b.CreateLShr(desc, b.getInt64(62)), b.getInt32Ty());
  // 1: 128-byte, 2: 64-byte, 3: 32-byte swizzle, i.e. 256 >> mode bytes. Mode 0 (no swizzle,
  // interleaved core matrices) is not one the lowering emits.
  return {field(0), field(16), field(32), b.CreateLShr(b.getInt32(256), mode)};
}

// Swizzle<log2(W/16), 4, 3>: the 16-byte chunk bits 4.. take an xor of the bits from 7 up.
llvm::Value* swizzled(llvm::IRBuilder<>& b, llvm::Value* offset, llvm::Value* swizzle_bytes) {
  llvm::Value* mask = b.CreateShl(b.CreateSub(b.CreateLShr(swizzle_bytes, b.getInt32(4)), b.getInt32(1)), b.getInt32(4));
  return b.CreateXor(offset, b.CreateAnd(b.CreateLShr(offset, b.getInt32(3)), mask));
}

// Byte offset of element (mn, k) of an operand whose rows are M (or N) and whose contiguous dim
// is K (k_major) or M/N: the canonical layouts of the PTX ISA's "Shared Memory Matrix Layout".
llvm::Value* element_offset(llvm::IRBuilder<>& b, const Descriptor& d, llvm::Value* mn, llvm::Value* k, bool k_major,
                            int esz) {
  llvm::Value* e = b.getInt32(static_cast<std::uint32_t>(esz));
  llvm::Value* off = nullptr;
  if (k_major) {  // 8-row groups `stride` apart; rows of the swizzle width; k contiguous
    off = b.CreateAdd(b.CreateMul(b.CreateURem(mn, b.getInt32(8)), d.swizzle_bytes),
                      b.CreateMul(b.CreateUDiv(mn, b.getInt32(8)), d.stride));
    off = b.CreateAdd(off, b.CreateMul(k, e));
  } else {  // mn contiguous in blocks of the swizzle width `leading` apart; k rows, 8-row groups `stride` apart
    llvm::Value* per_block = b.CreateUDiv(d.swizzle_bytes, e);
    off = b.CreateAdd(b.CreateMul(b.CreateURem(mn, per_block), e), b.CreateMul(b.CreateUDiv(mn, per_block), d.leading));
    off = b.CreateAdd(off, b.CreateAdd(b.CreateMul(b.CreateURem(k, b.getInt32(8)), d.swizzle_bytes),
                                       b.CreateMul(b.CreateUDiv(k, b.getInt32(8)), d.stride)));
  }
  return swizzled(b, b.CreateAdd(d.start, off), d.swizzle_bytes);
}

}  // namespace

std::vector<llvm::Value*> Target::wgmma(llvm::IRBuilder<>& b, const Wgmma& shape, llvm::Value* desc_a,
                                        const std::vector<llvm::Value*>& a_words, llvm::Value* desc_b,
                                        const std::vector<llvm::Value*>& acc, llvm::Value* shared_base) const {
  if (static_cast<int>(acc.size()) != shape.n / 2)
    throw InternalError("wgmma emulation: " + std::to_string(acc.size()) + " accumulators for n = " + std::to_string(shape.n));
  llvm::Type* elem = shape.bf16 ? b.getBFloatTy() : b.getHalfTy();
  // A from registers: this warp's rows l/4 and l/4 + 8, read as mma.sync's A fragment is.
  const bool a_registers = !a_words.empty();
  std::array<std::vector<llvm::Value*>, 2> a_rows;
  if (a_registers) a_rows = emulated_a_rows(*this, b, a_words, shape.bf16 ? MmaType::BF16 : MmaType::F16);
  const Descriptor da = a_registers ? Descriptor{} : decode(b, desc_a), db = decode(b, desc_b);
  llvm::Value* tid = thread_id(b);
  llvm::Value* lane = b.CreateAnd(tid, b.getInt32(31));
  llvm::Value* warp = b.CreateAnd(b.CreateLShr(tid, b.getInt32(5)), b.getInt32(3));
  llvm::Value* group = b.CreateLShr(lane, b.getInt32(2));
  llvm::Value* quad = b.CreateAnd(lane, b.getInt32(3));
  std::vector<llvm::Value*> rows, cols;
  for (int v = 0; v < shape.n / 2; ++v) {
    rows.push_back(b.CreateAdd(b.CreateMul(warp, b.getInt32(16)), b.CreateAdd(group, b.getInt32(8 * ((v / 2) % 2)))));
    cols.push_back(b.CreateAdd(b.getInt32(static_cast<std::uint32_t>(8 * (v / 4) + v % 2)), b.CreateShl(quad, b.getInt32(1))));
  }
  // One LLVM loop over k (unrolled, a 64x256 instruction would be 2048 fmas per thread).
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* entry = b.GetInsertBlock();
  llvm::BasicBlock* body = llvm::BasicBlock::Create(b.getContext(), "wgmma.k", fn);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(b.getContext(), "wgmma.done", fn);
  b.CreateBr(body);
  b.SetInsertPoint(body);
  llvm::PHINode* k = b.CreatePHI(b.getInt32Ty(), 2);
  k->addIncoming(b.getInt32(0), entry);
  std::vector<llvm::PHINode*> sums;
  for (llvm::Value* c : acc) {
    sums.push_back(b.CreatePHI(b.getFloatTy(), 2));
    sums.back()->addIncoming(shape.zero_acc ? llvm::ConstantFP::get(b.getFloatTy(), 0.0) : c, entry);
  }
  auto load = [&](llvm::Value* offset) {
    llvm::Value* x = b.CreateAlignedLoad(elem, b.CreateGEP(b.getInt8Ty(), shared_base, offset), llvm::Align(2));
    return b.CreateFPExt(x, b.getFloatTy());
  };
  // Element k of each register row of A (a select over the 16, as k is the loop's counter).
  std::array<llvm::Value*, 2> a_at_k{};
  for (std::size_t h = 0; h < 2 && a_registers; ++h) {
    a_at_k[h] = a_rows[h][0];
    for (std::uint32_t j = 1; j < 16; ++j) a_at_k[h] = b.CreateSelect(b.CreateICmpEQ(k, b.getInt32(j)), a_rows[h][j], a_at_k[h]);
  }
  std::vector<llvm::Value*> next;
  for (std::size_t v = 0; v < acc.size(); ++v) {
    llvm::Value* x = a_registers ? a_at_k[(v / 2) % 2] : load(element_offset(b, da, rows[v], k, !shape.trans_a, 2));
    llvm::Value* y = load(element_offset(b, db, cols[v], k, !shape.trans_b, 2));
    next.push_back(b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()}, {x, y, sums[v]}));
  }
  llvm::Value* k_next = b.CreateAdd(k, b.getInt32(1));
  llvm::BasicBlock* latch = b.GetInsertBlock();
  k->addIncoming(k_next, latch);
  for (std::size_t v = 0; v < acc.size(); ++v) sums[v]->addIncoming(next[v], latch);
  b.CreateCondBr(b.CreateICmpULT(k_next, b.getInt32(16)), body, done);
  b.SetInsertPoint(done);
  return next;
}

}  // namespace tessera::lower
