// Casts to and from fp8 (f8e4m3, f8e5m2) in plain LLVM IR, the same on every target: an fp8 value
// is an i8 holding its code. The rules are ops.def's (one rounding, saturating, NaN stays NaN;
// exact upcasts), the same as the host codec of tessera/float8.hpp that the interpreter uses.
// Every other op on fp8 was rewritten to compute in f32 before lowering (transforms/legalize_fp8).
#include <llvm/IR/Intrinsics.h>

#include "jit/lower/lowering.hpp"
#include "tessera/float8.hpp"

namespace tessera::lower {
using ir::DType;

namespace {

const detail::Float8Format& format_of(DType d) { return d == DType::F8E4M3 ? detail::kE4M3 : detail::kE5M2; }

// An fp8 code (i8) as the f32 of the same value, exactly.
llvm::Value* fp8_to_f32(llvm::IRBuilder<>& b, llvm::Value* code, const detail::Float8Format& f) {
  const unsigned m = static_cast<unsigned>(f.mantissa_bits);
  llvm::Value* c = b.CreateZExt(code, b.getInt32Ty());
  llvm::Value* sign = b.CreateShl(b.CreateAnd(c, 0x80u), 24);
  llvm::Value* magnitude = b.CreateAnd(c, 0x7fu);
  llvm::Value* exponent = b.CreateLShr(magnitude, m);
  llvm::Value* mantissa = b.CreateAnd(c, (1u << m) - 1);
  auto with_sign = [&](llvm::Value* bits) { return b.CreateBitCast(b.CreateOr(bits, sign), b.getFloatTy()); };
  // Normal: rebias the exponent (bias -> 127) and widen the mantissa.
  llvm::Value* normal = with_sign(b.CreateOr(b.CreateShl(b.CreateAdd(exponent, b.getInt32(127u - static_cast<unsigned>(f.bias))), 23),
                                             b.CreateShl(mantissa, 23 - m)));
  // Subnormal (and zero): mantissa * 2^(1 - bias - m), exact in f32.
  const float unit = detail::float8_to_float(1, f);
  llvm::Value* small = b.CreateFMul(b.CreateUIToFP(mantissa, b.getFloatTy()), llvm::ConstantFP::get(b.getFloatTy(), unit));
  small = b.CreateBitCast(b.CreateOr(b.CreateBitCast(small, b.getInt32Ty()), sign), b.getFloatTy());
  // Specials: e4m3's NaN is 0x7f (no infinities); e5m2's all-ones exponent is inf (mantissa 0) or NaN.
  const std::uint32_t top = (1u << (7 - m)) - 1;
  llvm::Value* special = nullptr;
  llvm::Value* special_value = nullptr;
  if (f.has_inf) {
    special = b.CreateICmpEQ(exponent, b.getInt32(top));
    special_value = with_sign(b.CreateSelect(b.CreateICmpEQ(mantissa, b.getInt32(0)), b.getInt32(0x7f800000u),
                                             b.getInt32(0x7fc00000u)));
  } else {
    special = b.CreateICmpEQ(magnitude, b.getInt32(0x7fu));
    special_value = with_sign(b.getInt32(0x7fc00000u));
  }
  llvm::Value* value = b.CreateSelect(b.CreateICmpEQ(exponent, b.getInt32(0)), small, normal);
  return b.CreateSelect(special, special_value, value);
}

// An f32 rounded once to fp8 (nearest even, or toward zero), saturating; NaN gives 0x7f with its sign.
llvm::Value* f32_to_fp8(llvm::IRBuilder<>& b, llvm::Value* x, const detail::Float8Format& f, bool toward_zero) {
  const unsigned m = static_cast<unsigned>(f.mantissa_bits), drop = 23 - m;
  llvm::Value* bits = b.CreateBitCast(x, b.getInt32Ty());
  llvm::Value* sign = b.CreateAnd(b.CreateLShr(bits, 24), 0x80u);
  llvm::Value* magnitude = b.CreateAnd(bits, 0x7fffffffu);
  // Normal range: round the f32 bits at the fp8 mantissa's last place (a carry steps the exponent,
  // as it should), then rebias; saturation below catches what lands beyond the largest code.
  llvm::Value* rounded = magnitude;
  if (!toward_zero) {
    llvm::Value* odd = b.CreateAnd(b.CreateLShr(magnitude, drop), 1u);
    rounded = b.CreateAdd(magnitude, b.CreateAdd(b.getInt32((1u << (drop - 1)) - 1), odd));
  }
  llvm::Value* normal = b.CreateSub(b.CreateLShr(rounded, drop), b.getInt32((127u - static_cast<unsigned>(f.bias)) << m));
  // Below the smallest normal: count units of the smallest subnormal. Scaling by a power of two is
  // exact; adding and removing 2^23 rounds an f32 below 2^23 to an integer, to nearest even.
  const float inverse_unit = 1.0f / detail::float8_to_float(1, f);
  llvm::Value* units = b.CreateFMul(b.CreateBitCast(magnitude, b.getFloatTy()), llvm::ConstantFP::get(b.getFloatTy(), inverse_unit));
  if (!toward_zero) {
    llvm::Constant* two23 = llvm::ConstantFP::get(b.getFloatTy(), 8388608.0);
    units = b.CreateFSub(b.CreateFAdd(units, two23), two23);
  }
  llvm::Value* subnormal = b.CreateFPToUI(units, b.getInt32Ty());  // truncates: exact, or toward zero
  const std::uint32_t min_normal_bits = (128u - static_cast<unsigned>(f.bias)) << 23;
  llvm::Value* code = b.CreateSelect(b.CreateICmpULT(magnitude, b.getInt32(min_normal_bits)), subnormal, normal);
  code = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, code, b.getInt32(f.max_code));  // infinities too
  code = b.CreateSelect(b.CreateICmpUGT(magnitude, b.getInt32(0x7f800000u)), b.getInt32(0x7fu), code);
  return b.CreateTrunc(b.CreateOr(code, sign), b.getInt8Ty());
}

}  // namespace

llvm::Value* KernelLowering::lower_fp8_cast(const ir::Type& from, const ir::Type& to, llvm::Value* x, bool toward_zero) {
  const DType f = from.dtype, t = to.dtype;
  if (f == t) return x;
  if (ir::is_fp8(f)) {
    llvm::Value* wide = fp8_to_f32(b_, x, format_of(f));
    return lower_cast(ir::Type::scalar(DType::F32), to, wide);  // exact; to another fp8: one rounding
  }
  llvm::Value* exact = nullptr;  // an f32 whose rounding to fp8 is x's
  if (f == DType::F64) {
    // "Rounded to odd": toward zero, the last bit set when that was inexact. One more rounding to a
    // format of far fewer bits then rounds as the f64 itself would, once.
    llvm::Value* truncated = lower_cast_toward_zero(from, x, ir::Type::scalar(DType::F32));
    llvm::Value* inexact = b_.CreateFCmpONE(b_.CreateFPExt(truncated, b_.getDoubleTy()), x);
    llvm::Value* bits = b_.CreateOr(b_.CreateBitCast(truncated, b_.getInt32Ty()), b_.CreateZExt(inexact, b_.getInt32Ty()));
    exact = b_.CreateBitCast(bits, b_.getFloatTy());
  } else if (ir::is_float(f)) {
    exact = f == DType::F32 ? x : b_.CreateFPExt(x, b_.getFloatTy());
  } else {
    // Integers: every value beyond 2^17 saturates, and within it f32 is exact.
    llvm::Value* v = x;
    const unsigned width = x->getType()->getIntegerBitWidth();
    if (width > 17) {
      auto c = [&](std::int64_t k) { return llvm::ConstantInt::get(x->getType(), static_cast<std::uint64_t>(k)); };
      if (ir::is_unsigned(f)) {
        v = b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, v, c(1 << 17));
      } else {
        v = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, v, c(1 << 17));
        v = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, v, c(-(1 << 17)));
      }
    }
    exact = ir::is_unsigned(f) ? b_.CreateUIToFP(v, b_.getFloatTy()) : b_.CreateSIToFP(v, b_.getFloatTy());
  }
  return f32_to_fp8(b_, exact, format_of(t), toward_zero);
}

std::uint8_t fp8_code(DType d, double value) { return detail::float8_from_double(value, format_of(d)); }

}  // namespace tessera::lower
