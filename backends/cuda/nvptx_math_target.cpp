// Math on NVPTX (Target::math / math_binary of the NVPTX target). Which implementation each
// function gets, and why:
//   exp log exp2 log2, f32: one MUFU instruction (ex2.approx / lg2.approx), as Triton emits tl.exp:
//     fast, about 2 ulp (log and log2: absolute error about 2^-22 near 1). Kept with libdevice too.
//   exp_ftz, exp2_ftz (exp/exp2 {ftz}, fast_expf/fast_exp2f): ex2.approx.ftz.f32, as CUDA's __expf:
//     without the subnormal handling ptxas puts around the MUFU for ex2.approx.f32 (a compare and
//     two multiplies).
//   rsqrt f32: libdevice's __nv_rsqrtf, else rsqrt.approx refined by one Newton step.
//   sin cos tanh erf pow f32, and every f64 function: libdevice's __nv_* where libdevice is found
//     (backends/cuda/libdevice_target.cpp); else null for f32 (tessera's own IR, lower_math.cpp)
//     and a ProgramError for f64, except rsqrt (1/sqrt.rn is exact enough).
//   sqrt: null, i.e. llvm.sqrt, which selects the IEEE sqrt.rn.
//   fmod (float %): libdevice's __nv_fmod[f], exact; else null: tessera's exact fmod
//     (jit/lower/exact_fmod.cpp), not LLVM's frem, which NVPTX expands inexactly.
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

#include "tessera/error.hpp"

namespace tessera::backend {

std::string libdevice_path();  // libdevice_target.cpp

namespace {

llvm::Value* fast_f32(llvm::IRBuilder<>& b, const std::string& fn, llvm::Value* x) {
  llvm::Module* m = b.GetInsertBlock()->getModule();
  auto ex2 = [&](llvm::Value* v) {
    // Overloaded on the float type in LLVM 22 (llvm.nvvm.ex2.approx.f32); selects ex2.approx.f32.
    return b.CreateCall(llvm::Intrinsic::getOrInsertDeclaration(m, llvm::Intrinsic::nvvm_ex2_approx, {b.getFloatTy()}), {v});
  };
  auto lg2 = [&](llvm::Value* v) {
    return b.CreateCall(llvm::Intrinsic::getOrInsertDeclaration(m, llvm::Intrinsic::nvvm_lg2_approx_f), {v});
  };
  if (fn == "exp") return ex2(b.CreateFMul(x, llvm::ConstantFP::get(b.getFloatTy(), 1.4426950408889634)));  // log2(e)
  // fast_expf, fast_exp2f: no subnormal handling around the MUFU (3 instructions fewer)
  auto ex2_ftz = [&](llvm::Value* v) {
    return b.CreateCall(llvm::Intrinsic::getOrInsertDeclaration(m, llvm::Intrinsic::nvvm_ex2_approx_ftz, {b.getFloatTy()}), {v});
  };
  if (fn == "exp_ftz") return ex2_ftz(b.CreateFMul(x, llvm::ConstantFP::get(b.getFloatTy(), 1.4426950408889634)));
  if (fn == "exp2_ftz") return ex2_ftz(x);
  if (fn == "exp2") return ex2(x);
  if (fn == "log") return b.CreateFMul(lg2(x), llvm::ConstantFP::get(b.getFloatTy(), 0.6931471805599453));  // ln(2)
  return lg2(x);  // log2
}

// rsqrt.approx (about 2^-22.9 relative) and one Newton step y += y/2 * (1 - x*y*y), which roughly
// squares the error; 0 and inf keep the approximation's exact answers (inf and 0).
llvm::Value* rsqrt_newton_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Module* m = b.GetInsertBlock()->getModule();
  llvm::Value* y = b.CreateCall(llvm::Intrinsic::getOrInsertDeclaration(m, llvm::Intrinsic::nvvm_rsqrt_approx_f), {x});
  auto fma = [&](llvm::Value* p, llvm::Value* q, llvm::Value* r) {
    return b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()}, {p, q, r});
  };
  llvm::Value* one = llvm::ConstantFP::get(b.getFloatTy(), 1.0);
  llvm::Value* e = fma(b.CreateFNeg(b.CreateFMul(x, y)), y, one);
  llvm::Value* refined = fma(b.CreateFMul(y, llvm::ConstantFP::get(b.getFloatTy(), 0.5)), e, y);
  llvm::Value* ay = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, y);
  llvm::Value* special = b.CreateOr(b.CreateFCmpOEQ(y, llvm::ConstantFP::get(b.getFloatTy(), 0.0)),
                                    b.CreateFCmpOEQ(ay, llvm::ConstantFP::getInfinity(b.getFloatTy())));
  return b.CreateSelect(special, y, refined);
}

// A call to libdevice's __nv_<name>[f], declared here; link_libdevice brings the body.
llvm::Value* libdevice_call(llvm::IRBuilder<>& b, const std::string& fn, llvm::ArrayRef<llvm::Value*> args) {
  llvm::Type* t = args[0]->getType();
  const std::string name = "__nv_" + fn + (t->isFloatTy() ? "f" : "");
  std::vector<llvm::Type*> params(args.size(), t);
  llvm::FunctionCallee callee = b.GetInsertBlock()->getModule()->getOrInsertFunction(name, llvm::FunctionType::get(t, params, false));
  return b.CreateCall(callee, args);
}

bool is_libdevice_fn(const std::string& fn) {
  for (const char* f : {"exp", "exp2", "log", "log2", "rsqrt", "sin", "cos", "tanh", "erf", "pow", "fmod"})
    if (fn == f) return true;
  return false;
}

}  // namespace

llvm::Value* nvptx_math(llvm::IRBuilder<>& b, const std::string& fn, llvm::ArrayRef<llvm::Value*> args) {
  llvm::Type* type = args[0]->getType();
  // The lowering widens f16/bf16 to f32 before calling; do the same for any other caller.
  if (type->isHalfTy() || type->isBFloatTy()) {
    std::vector<llvm::Value*> wide;
    for (llvm::Value* a : args) wide.push_back(b.CreateFPExt(a, b.getFloatTy()));
    llvm::Value* r = nvptx_math(b, fn, wide);
    return r ? b.CreateFPTrunc(r, type) : nullptr;
  }
  if (!type->isFloatTy() && !type->isDoubleTy())
    throw InternalError("tessera: NVPTX " + fn + " got a value that is not a scalar f16, bf16, f32 or f64");
  if (fn == "exp_ftz" || fn == "exp2_ftz") return type->isFloatTy() ? fast_f32(b, fn, args[0]) : nullptr;
  if (!is_libdevice_fn(fn)) return nullptr;  // sqrt: llvm.sqrt
  if (type->isFloatTy() && (fn == "exp" || fn == "exp2" || fn == "log" || fn == "log2")) return fast_f32(b, fn, args[0]);
  const bool have_libdevice = !libdevice_path().empty();
  if (have_libdevice) return libdevice_call(b, fn, args);
  if (fn == "fmod") return nullptr;  // exact in tessera's own IR for f32 and f64
  if (type->isFloatTy()) return fn == "rsqrt" ? rsqrt_newton_f32(b, args[0]) : nullptr;
  if (fn == "rsqrt") return nullptr;
  throw ProgramError("tessera: " + fn + " on f64 tiles needs CUDA's libdevice, which was not found (set TESSERA_LIBDEVICE " +
                     "or CUDA_HOME; README, \"Math\") or is turned off by TESSERA_LIBDEVICE=0; cast to f32");
}

}  // namespace tessera::backend
