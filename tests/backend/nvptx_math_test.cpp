// Transcendental math on NVPTX: exp and log on f32 are ex2.approx / lg2.approx, as Triton emits
// tl.exp / tl.log; f64 exp/log would need libdevice and are a clear error, not an LLVM crash.
// Also guards that the other float operations the lowering emits select for both archs.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "nvptx_test_util.hpp"
#include "tessera/error.hpp"

namespace {

using tessera::test::contains;

// out[i] = fn(in[i]) for one value of `type`.
std::string compile_unary(const tessera::lower::Target& target, llvm::Type* (*type_of)(llvm::LLVMContext&),
                          const std::string& fn) {
  llvm::LLVMContext ctx;
  llvm::Type* type = type_of(ctx);
  auto m = tessera::test::build_kernel(ctx, target, "unary", [&](auto& b, auto* in, auto* out, auto*) {
    llvm::Value* x = b.CreateLoad(type, in);
    llvm::Value* r = target.math(b, fn, x);
    REQUIRE(r != nullptr);
    b.CreateStore(r, out);
  });
  return target.compile(std::move(m), "unary").data;
}

llvm::Type* f32(llvm::LLVMContext& ctx) { return llvm::Type::getFloatTy(ctx); }
llvm::Type* f16(llvm::LLVMContext& ctx) { return llvm::Type::getHalfTy(ctx); }
llvm::Type* bf16(llvm::LLVMContext& ctx) { return llvm::Type::getBFloatTy(ctx); }

}  // namespace

TEST_CASE("nvptx exp and log on f32 are ex2.approx and lg2.approx", "[backend][nvptx]") {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    auto target = tessera::lower::make_target(arch);
    INFO("arch " << arch);
    const std::string exp_ptx = compile_unary(*target, f32, "exp");
    INFO(exp_ptx);
    CHECK(contains(exp_ptx, R"(mul(\.rn)?\.f32\s+%r\d+, %r\d+, 0f3FB8AA3B;)"));  // x * log2(e)
    CHECK(contains(exp_ptx, R"(ex2\.approx\.f32\s)"));
    CHECK_FALSE(contains(exp_ptx, R"(\bcall\b)"));
    tessera::test::check_ptxas_accepts(exp_ptx, arch);

    const std::string log_ptx = compile_unary(*target, f32, "log");
    INFO(log_ptx);
    CHECK(contains(log_ptx, R"(lg2\.approx\.f32\s)"));
    CHECK(contains(log_ptx, R"(mul(\.rn)?\.f32\s+%r\d+, %r\d+, 0f3F317218;)"));  // * ln(2)
    tessera::test::check_ptxas_accepts(log_ptx, arch);

    // Half-precision callers get the f32 instruction and a rounding back.
    for (auto* type_of : {f16, bf16}) {
      const std::string ptx = compile_unary(*target, type_of, "exp");
      INFO(ptx);
      CHECK(contains(ptx, R"(ex2\.approx\.f32\s)"));
      tessera::test::check_ptxas_accepts(ptx, arch);
    }
  }
}

TEST_CASE("nvptx leaves sqrt to llvm.sqrt, which is IEEE sqrt.rn", "[backend][nvptx]") {
  auto target = tessera::lower::make_target("sm_80");
  llvm::LLVMContext ctx;
  auto m = tessera::test::build_kernel(ctx, *target, "sqrt", [&](auto& b, auto* in, auto* out, auto*) {
    for (llvm::Type* t : {b.getFloatTy(), b.getDoubleTy()}) {
      llvm::Value* x = b.CreateLoad(t, in);
      CHECK(target->math(b, "sqrt", x) == nullptr);
      b.CreateStore(b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x), out);
    }
  });
  const std::string ptx = target->compile(std::move(m), "sqrt").data;
  INFO(ptx);
  CHECK(contains(ptx, R"(sqrt\.rn\.f32\s)"));
  CHECK(contains(ptx, R"(sqrt\.rn\.f64\s)"));
}

TEST_CASE("nvptx exp and log on f64 without libdevice are a ProgramError, not an LLVM crash", "[backend][nvptx]") {
  // llvm.exp.f64 / llvm.log.f64 have no NVPTX lowering ("no libcall available for fexp"); with
  // libdevice turned off (TESSERA_LIBDEVICE=0) there is nothing to call instead.
  ::setenv("TESSERA_LIBDEVICE", "0", 1);
  struct Unset { ~Unset() { ::unsetenv("TESSERA_LIBDEVICE"); } } unset;
  auto target = tessera::lower::make_target("sm_90a");
  llvm::LLVMContext ctx;
  auto m = std::make_unique<llvm::Module>("f64", ctx);
  auto* f = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), false),
                                   llvm::GlobalValue::ExternalLinkage, "f64", *m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
  llvm::Value* x = llvm::ConstantFP::get(b.getDoubleTy(), 2.0);
  for (const char* fn : {"exp", "log"}) {
    try {
      target->math(b, fn, x);
      FAIL("no exception for " << fn);
    } catch (const tessera::ProgramError& e) {
      const std::string msg = e.what();
      CHECK(msg.find(fn) != std::string::npos);
      CHECK(msg.find("libdevice") != std::string::npos);
      CHECK(msg.find("cast to f32") != std::string::npos);
    }
  }
}

TEST_CASE("nvptx selects the float operations the lowering emits, for every float type", "[backend][nvptx]") {
  // fabs (Abs), minnum/maxnum (Min/Max), fadd/fmul, and the saturating casts of lower_cast.
  for (const char* arch : {"sm_80", "sm_90a"}) {
    auto target = tessera::lower::make_target(arch);
    llvm::LLVMContext ctx;
    auto m = tessera::test::build_kernel(ctx, *target, "float_ops", [&](auto& b, auto* in, auto* out, auto*) {
      unsigned slot = 0;
      for (llvm::Type* t : {b.getHalfTy(), b.getBFloatTy(), b.getFloatTy(), b.getDoubleTy()}) {
        llvm::Value* x = b.CreateLoad(t, b.CreateConstGEP1_32(t, in, 0));
        llvm::Value* y = b.CreateLoad(t, b.CreateConstGEP1_32(t, in, 1));
        llvm::Value* r = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
        r = b.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, r, y);
        r = b.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, r, x);
        r = b.CreateFMul(b.CreateFAdd(r, y), x);
        b.CreateStore(r, b.CreateConstGEP1_32(t, out, 0));
        for (llvm::Type* it : {b.getInt8Ty(), b.getInt32Ty(), b.getInt64Ty()}) {
          for (auto id : {llvm::Intrinsic::fptosi_sat, llvm::Intrinsic::fptoui_sat}) {
            llvm::Value* c = b.CreateIntrinsic(id, {it, t}, {r});
            b.CreateStore(c, b.CreateConstGEP1_32(b.getInt64Ty(), out, ++slot));
          }
        }
      }
    });
    const std::string ptx = target->compile(std::move(m), "float_ops").data;
    INFO("arch " << arch << "\n" << ptx);
    for (const char* op : {"abs.f16", "abs.bf16", "abs.f32", "abs.f64", "min.f16", "max.bf16", "min.f32", "max.f64"})
      CHECK(ptx.find(op) != std::string::npos);
    tessera::test::check_ptxas_accepts(ptx, arch);
  }
}
