// Float `%` (ops.def: C's fmod, exact) for targets without an exact one of their own. LLVM's frem
// is exact where it becomes a libm call (the host target) but NVPTX and AMDGPU expand it to
// x - trunc(x / y) * y, which loses every digit once x / y passes 2^24 (f32 1e10 % 3 gives 256,
// not 1). fmod's result is always representable, so it can be computed exactly: by long division
// of the two significands in integers, one bit of the quotient per step of exponent difference,
// as the C libraries do; at most 277 steps for f32 and 2100 for f64.
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include "jit/lower/target.hpp"

namespace tessera::lower {
namespace {

// The body of `tessera.fmod.<f32|f64>`(x, y), for a float type of `width` bits with `mant` stored
// significand bits.
void build_fmod(llvm::Function* f, unsigned width, unsigned mant) {
  llvm::LLVMContext& ctx = f->getContext();
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
  llvm::Type* I = b.getIntNTy(width);
  llvm::Type* F = f->getReturnType();
  auto c = [&](std::uint64_t v) { return llvm::ConstantInt::get(I, v); };
  const std::uint64_t sign_bit = std::uint64_t{1} << (width - 1), implicit = std::uint64_t{1} << mant;
  const std::uint64_t mant_mask = implicit - 1, inf_bits = (sign_bit - 1) & ~mant_mask;
  llvm::Value* x = f->getArg(0);
  llvm::Value* ux = b.CreateBitCast(x, I);
  llvm::Value* uy = b.CreateBitCast(f->getArg(1), I);
  llvm::Value* sign = b.CreateAnd(ux, c(sign_bit));
  llvm::Value* ax = b.CreateAnd(ux, c(sign_bit - 1));
  llvm::Value* ay = b.CreateAnd(uy, c(sign_bit - 1));

  auto block = [&](const char* name) { return llvm::BasicBlock::Create(ctx, name, f); };
  llvm::BasicBlock *nan = block("nan"), *check_small = block("check_small"), *small = block("x_smaller"),
                   *check_equal = block("check_equal"), *zero = block("zero"), *divide = block("divide");
  // y zero or NaN, x infinite or NaN: NaN.
  llvm::Value* invalid = b.CreateOr(b.CreateOr(b.CreateICmpEQ(ay, c(0)), b.CreateICmpUGT(ay, c(inf_bits))),
                                    b.CreateICmpUGE(ax, c(inf_bits)));
  b.CreateCondBr(invalid, nan, check_small);
  b.SetInsertPoint(nan);
  b.CreateRet(llvm::ConstantFP::getNaN(F));
  b.SetInsertPoint(check_small);  // |x| < |y| (y may be infinite): x itself
  b.CreateCondBr(b.CreateICmpULT(ax, ay), small, check_equal);
  b.SetInsertPoint(small);
  b.CreateRet(x);
  b.SetInsertPoint(check_equal);  // |x| == |y|: a zero of x's sign
  b.CreateCondBr(b.CreateICmpEQ(ax, ay), zero, divide);
  b.SetInsertPoint(zero);
  b.CreateRet(b.CreateBitCast(sign, F));

  // Significand with its implicit bit at `mant`, and the exponent that goes with it; subnormals
  // are shifted up to that form, their exponent going below 1.
  b.SetInsertPoint(divide);
  auto normalized = [&](llvm::Value* a) -> std::pair<llvm::Value*, llvm::Value*> {
    llvm::Value* e = b.CreateLShr(a, c(mant));
    llvm::Value* lead = b.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, a, b.getTrue());
    llvm::Value* shift = b.CreateSub(lead, c(width - mant - 1));  // places the top bit at `mant`
    llvm::Value* subnormal = b.CreateICmpEQ(e, c(0));
    llvm::Value* m = b.CreateSelect(subnormal, b.CreateShl(a, shift), b.CreateOr(b.CreateAnd(a, c(mant_mask)), c(implicit)));
    return {m, b.CreateSelect(subnormal, b.CreateSub(c(1), shift), e)};
  };
  auto [mx0, ex0] = normalized(ax);
  auto [my, ey] = normalized(ay);
  llvm::BasicBlock *loop = block("loop"), *step = block("step"), *done = block("done");
  b.CreateBr(loop);

  // while (ex > ey) { if (mx >= my) mx -= my; mx <<= 1; --ex; }   (mx < 2 my throughout)
  b.SetInsertPoint(loop);
  llvm::PHINode* mx = b.CreatePHI(I, 2, "mx");
  llvm::PHINode* ex = b.CreatePHI(I, 2, "ex");
  mx->addIncoming(mx0, divide);
  ex->addIncoming(ex0, divide);
  auto reduce = [&](llvm::Value* m) { return b.CreateSelect(b.CreateICmpUGE(m, my), b.CreateSub(m, my), m); };
  b.CreateCondBr(b.CreateICmpSGT(ex, ey), step, done);
  b.SetInsertPoint(step);
  mx->addIncoming(b.CreateShl(reduce(mx), c(1)), step);
  ex->addIncoming(b.CreateSub(ex, c(1)), step);
  b.CreateBr(loop);

  // The remainder mx * 2^(ey - bias - mant), renormalized; below the normal range it becomes a
  // subnormal, exactly (its low bits are zero there).
  b.SetInsertPoint(done);
  llvm::Value* r = reduce(mx);
  llvm::BasicBlock* nonzero = block("nonzero");
  b.CreateCondBr(b.CreateICmpEQ(r, c(0)), zero, nonzero);
  b.SetInsertPoint(nonzero);
  llvm::Value* shift = b.CreateSub(b.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, r, b.getTrue()), c(width - mant - 1));
  llvm::Value* m = b.CreateShl(r, shift);
  llvm::Value* e = b.CreateSub(ey, shift);
  llvm::Value* normal = b.CreateOr(b.CreateShl(e, c(mant)), b.CreateAnd(m, c(mant_mask)));
  llvm::Value* below = b.CreateLShr(m, b.CreateSub(c(1), e));
  llvm::Value* bits = b.CreateSelect(b.CreateICmpSGT(e, c(0)), normal, below);
  b.CreateRet(b.CreateBitCast(b.CreateOr(bits, sign), F));
}

}  // namespace

llvm::Value* exact_fmod(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) {
  llvm::Type* t = x->getType();
  llvm::Module* m = b.GetInsertBlock()->getModule();
  const bool f64 = t->isDoubleTy();
  const std::string name = f64 ? "tessera.fmod.f64" : "tessera.fmod.f32";
  llvm::Function* f = m->getFunction(name);
  if (!f) {
    f = llvm::Function::Create(llvm::FunctionType::get(t, {t, t}, false), llvm::Function::InternalLinkage, name, m);
    build_fmod(f, f64 ? 64 : 32, f64 ? 52 : 23);
  }
  return b.CreateCall(f, {x, y});
}

}  // namespace tessera::lower
