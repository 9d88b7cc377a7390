// The math ops (exp2 log2 rsqrt sin cos tanh sigmoid erf floor ceil pow fma) in LLVM IR.
// The target answers first (Target::math / math_binary: NVPTX's MUFU fast paths or libdevice
// calls, AMDGPU's native intrinsics); where it returns null, tessera's own f32 implementations
// below are used, built from the target's exp2/log2 and plain arithmetic, so that they run on
// every target. f64 transcendentals have no own implementation: a clear ProgramError.
// Accuracy of each path: README, "Math"; tests/gpu/math_gpu_test.cpp holds them.
#include <fmt/format.h>

#include <llvm/IR/Intrinsics.h>

#include <limits>

#include "jit/lower/lowering.hpp"
#include "tessera/error.hpp"

namespace tessera::lower {
using ir::DType;
using ir::OpKind;

namespace {

using Builder = llvm::IRBuilder<>;

llvm::Value* f32(Builder& b, double v) { return llvm::ConstantFP::get(b.getFloatTy(), v); }
llvm::Value* fma(Builder& b, llvm::Value* x, llvm::Value* y, llvm::Value* z) {
  return b.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()}, {x, y, z});
}
// Horner: c[0] + s*(c[1] + s*(c[2] + ...)), one fma per step.
llvm::Value* horner(Builder& b, llvm::Value* s, std::initializer_list<double> coeffs) {
  std::vector<double> c(coeffs);
  llvm::Value* r = f32(b, c.back());
  for (std::size_t i = c.size() - 1; i-- > 0;) r = fma(b, r, s, f32(b, c[i]));
  return r;
}

// The target's exp2 / log2 of an f32, else LLVM's intrinsic.
llvm::Value* prim(Builder& b, const Target& t, const char* fn, llvm::Value* x) {
  if (llvm::Value* r = t.math(b, fn, x)) return r;
  return b.CreateUnaryIntrinsic(std::string(fn) == "exp2" ? llvm::Intrinsic::exp2 : llvm::Intrinsic::log2, x);
}
llvm::Value* exp_f32(Builder& b, const Target& t, llvm::Value* x) {
  if (llvm::Value* r = t.math(b, "exp", x)) return r;
  return b.CreateUnaryIntrinsic(llvm::Intrinsic::exp, x);
}

// sin (cos_shift 0) or cos (cos_shift 1): Cody-Waite reduction by pi/2 in three fma steps (exact
// enough for |x| < 1e5), then minimax polynomials on [-pi/4, pi/4] (N. Juffa's sincosf), and the
// quadrant picks sin or cos of the remainder and the sign.
llvm::Value* sin_cos_f32(Builder& b, llvm::Value* x, int cos_shift) {
  llvm::Value* j = b.CreateUnaryIntrinsic(llvm::Intrinsic::rint, b.CreateFMul(x, f32(b, 0.636619772367581343)));
  llvm::Value* t = fma(b, j, f32(b, -1.57079601e+00f), x);
  t = fma(b, j, f32(b, -3.13916473e-07f), t);
  t = fma(b, j, f32(b, -5.39030253e-15f), t);
  // Saturating: for inf/NaN inputs the result is NaN anyway, and the quadrant must not be poison.
  llvm::Value* q = b.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {b.getInt32Ty(), b.getFloatTy()}, {j});
  q = b.CreateAdd(q, b.getInt32(cos_shift));
  llvm::Value* s = b.CreateFMul(t, t);
  llvm::Value* sp = horner(b, s, {-1.66666672e-1f, 8.33338592e-3f, -1.98559923e-4f, 2.86567956e-6f});
  sp = fma(b, b.CreateFMul(t, s), sp, t);
  llvm::Value* cp = horner(b, s, {1.0, -5.00000000e-1f, 4.16666567e-2f, -1.38877297e-3f, 2.44677067e-5f});
  llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(q, b.getInt32(1)), b.getInt32(0));
  llvm::Value* r = b.CreateSelect(odd, cp, sp);
  llvm::Value* neg = b.CreateICmpNE(b.CreateAnd(q, b.getInt32(2)), b.getInt32(0));
  return b.CreateSelect(neg, b.CreateFNeg(r), r);
}

// tanh: the Taylor series through x^21 below |x| = 0.55 (where 1 - 2/(e+1) would cancel), else
// 1 - 2/(exp(2|x|) + 1) with the sign of x (exp overflowing to inf gives exactly 1).
llvm::Value* tanh_f32(Builder& b, const Target& tg, llvm::Value* x) {
  llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* s = b.CreateFMul(x, x);
  llvm::Value* p = horner(b, s, {-1.0 / 3, 2.0 / 15, -17.0 / 315, 62.0 / 2835, -1382.0 / 155925, 21844.0 / 6081075,
                                 -929569.0 / 638512875, 6404582.0 / 10854718875, -443861162.0 / 1856156927625,
                                 18888466084.0 / 194896477400625});
  llvm::Value* small = fma(b, b.CreateFMul(x, s), p, x);
  llvm::Value* e = prim(b, tg, "exp2", b.CreateFMul(ax, f32(b, 2 * 1.4426950408889634)));
  llvm::Value* big = b.CreateFSub(f32(b, 1.0), b.CreateFDiv(f32(b, 2.0), b.CreateFAdd(e, f32(b, 1.0))));
  big = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, big, x);
  return b.CreateSelect(b.CreateFCmpOLT(ax, f32(b, 0.55)), small, big);
}

// erf: the Taylor series through x^25 below |x| = 1; above, 1 - erfc(|x|) with Numerical Recipes'
// erfc (relative error < 1.2e-7, so < 1 ulp of erf there), and the sign of x.
llvm::Value* erf_f32(Builder& b, const Target& tg, llvm::Value* x) {
  llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  std::vector<double> c;
  double fact = 1;
  for (int n = 0; n <= 12; ++n) {
    if (n > 0) fact *= n;
    c.push_back((n % 2 ? -1.0 : 1.0) / (fact * (2 * n + 1)) * 1.1283791670955126);  // 2/sqrt(pi)
  }
  llvm::Value* s = b.CreateFMul(x, x);
  llvm::Value* p = f32(b, c.back());
  for (std::size_t i = c.size() - 1; i-- > 0;) p = fma(b, p, s, f32(b, c[i]));
  llvm::Value* small = b.CreateFMul(x, p);
  llvm::Value* t = b.CreateFDiv(f32(b, 1.0), fma(b, ax, f32(b, 0.5), f32(b, 1.0)));
  llvm::Value* poly = horner(b, t, {-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807,
                                    -1.13520398, 1.48851587, -0.82215223, 0.17087277});
  llvm::Value* arg = b.CreateFSub(poly, b.CreateFMul(ax, ax));
  llvm::Value* erfc = b.CreateFMul(t, prim(b, tg, "exp2", b.CreateFMul(arg, f32(b, 1.4426950408889634))));
  llvm::Value* big = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, b.CreateFSub(f32(b, 1.0), erfc), x);
  return b.CreateSelect(b.CreateFCmpOLT(ax, f32(b, 1.0)), small, big);
}

// pow = exp2(y * log2|x|), with C's special cases: x^0 = 1 and 1^y = 1 (even for NaN), (-1)^inf = 1,
// a negative x gives NaN for non-integer y and the sign of x for odd y.
llvm::Value* pow_f32(Builder& b, const Target& tg, llvm::Value* x, llvm::Value* y) {
  llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* r = prim(b, tg, "exp2", b.CreateFMul(y, prim(b, tg, "log2", ax)));
  llvm::Value* y_int = b.CreateFCmpOEQ(b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, y), y);
  llvm::Value* half = b.CreateFMul(y, f32(b, 0.5));
  llvm::Value* y_odd = b.CreateAnd(y_int, b.CreateFCmpONE(b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, half), half));
  llvm::Value* nan = f32(b, std::numeric_limits<double>::quiet_NaN());
  llvm::Value* neg_r = b.CreateSelect(y_int, b.CreateSelect(y_odd, b.CreateFNeg(r), r), nan);
  r = b.CreateSelect(b.CreateFCmpOLT(x, f32(b, 0.0)), neg_r, r);
  // -0 with an odd y keeps the sign too: (-0)^3 = -0, (-0)^-3 = -inf.
  llvm::Value* neg_zero = b.CreateAnd(b.CreateFCmpOEQ(x, f32(b, 0.0)), b.CreateIsNeg(b.CreateBitCast(x, b.getInt32Ty())));
  r = b.CreateSelect(b.CreateAnd(neg_zero, y_odd), b.CreateFNeg(r), r);
  llvm::Value* inf = f32(b, std::numeric_limits<double>::infinity());
  llvm::Value* one = b.CreateOr(b.CreateOr(b.CreateFCmpOEQ(y, f32(b, 0.0)), b.CreateFCmpOEQ(x, f32(b, 1.0))),
                                b.CreateAnd(b.CreateFCmpOEQ(ax, f32(b, 1.0)),
                                            b.CreateFCmpOEQ(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, y), inf)));
  return b.CreateSelect(one, f32(b, 1.0), r);
}

[[noreturn]] void no_f64(const ir::Op& op) {
  throw ProgramError(fmt::format("tessera: {} on f64 tiles needs CUDA's libdevice (not found, or TESSERA_LIBDEVICE=0; "
                                 "see README, \"Math\"), and this target has no f64 {}; cast to f32, at {}",
                                 op.name(), op.name(), op.loc.str()));
}

}  // namespace

llvm::Value* KernelLowering::target_math(const ir::Op& op, llvm::Value* x) {
  llvm::Value* r = op.has_attr("ftz") ? target_.math(b_, std::string(op.name()) + "_ftz", x) : nullptr;
  return r ? r : target_.math(b_, op.name(), x);
}

llvm::Value* KernelLowering::lower_math(const ir::Op& op, const std::vector<llvm::Value*>& args_in) {
  const DType d = op.result()->type.dtype;
  if (!ir::is_float(d)) throw ProgramError(fmt::format("{} needs floating-point tiles, at {}", op.name(), op.loc.str()));
  // f16/bf16 math runs in f32 and rounds back once, as the interpreter does.
  const bool narrow = d == DType::F16 || d == DType::BF16;
  std::vector<llvm::Value*> a;
  for (llvm::Value* v : args_in) a.push_back(narrow ? b_.CreateFPExt(v, b_.getFloatTy()) : v);
  llvm::Value* x = a[0];
  const bool is_f32 = x->getType()->isFloatTy();
  llvm::Value* r = nullptr;
  switch (op.kind) {
    case OpKind::Floor: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x); break;
    case OpKind::Ceil: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, x); break;
    case OpKind::Fma: r = fma(b_, a[0], a[1], a[2]); break;
    case OpKind::Pow:
      r = target_.math_binary(b_, "pow", a[0], a[1]);
      if (!r && !is_f32) no_f64(op);
      if (!r) r = pow_f32(b_, target_, a[0], a[1]);
      break;
    case OpKind::Sigmoid: {  // 1 / (1 + exp(-x)), through the exp path
      llvm::Value* e = target_.math(b_, "exp", b_.CreateFNeg(x));
      if (!e && !is_f32) no_f64(op);
      if (!e) e = exp_f32(b_, target_, b_.CreateFNeg(x));
      llvm::Value* one = llvm::ConstantFP::get(x->getType(), 1.0);
      r = b_.CreateFDiv(one, b_.CreateFAdd(one, e));
      break;
    }
    case OpKind::Rsqrt:
      r = target_.math(b_, "rsqrt", x);
      if (!r) r = b_.CreateFDiv(llvm::ConstantFP::get(x->getType(), 1.0), b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x));
      break;
    default: {
      r = target_math(op, x);
      if (r) break;
      if (!is_f32) no_f64(op);
      switch (op.kind) {
        case OpKind::Exp2: case OpKind::Log2: r = prim(b_, target_, op.name(), x); break;
        case OpKind::Sin: r = sin_cos_f32(b_, x, 0); break;
        case OpKind::Cos: r = sin_cos_f32(b_, x, 1); break;
        case OpKind::Tanh: r = tanh_f32(b_, target_, x); break;
        case OpKind::Erf: r = erf_f32(b_, target_, x); break;
        default: throw InternalError(fmt::format("lowering: '{}' is not a math op", op.name()));
      }
    }
  }
  return narrow ? b_.CreateFPTrunc(r, args_in[0]->getType()) : r;
}

}  // namespace tessera::lower
