// Masked loads and stores on NVPTX are predicated PTX instructions, as Triton emits them, not
// branches: `@%p1 ld.global.v4.b32 {...}, [...]` keeps a memory-bound kernel one straight line.
#include <catch2/catch.hpp>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Instructions.h>

#include "nvptx_test_util.hpp"

namespace {

using tessera::test::contains;

llvm::Type* element_type(llvm::LLVMContext& ctx, const std::string& name) {
  if (name == "i1") return llvm::Type::getInt1Ty(ctx);
  if (name == "i8") return llvm::Type::getInt8Ty(ctx);
  if (name == "i16") return llvm::Type::getInt16Ty(ctx);
  if (name == "i32") return llvm::Type::getInt32Ty(ctx);
  if (name == "i64") return llvm::Type::getInt64Ty(ctx);
  if (name == "half") return llvm::Type::getHalfTy(ctx);
  if (name == "bfloat") return llvm::Type::getBFloatTy(ctx);
  if (name == "float") return llvm::Type::getFloatTy(ctx);
  if (name == "double") return llvm::Type::getDoubleTy(ctx);
  return llvm::PointerType::get(ctx, 1);  // "ptr": tessera's pointers are global
}

struct Case {
  const char* elem;
  unsigned width;
  unsigned bytes;      // of the whole access
  const char* access;  // the PTX vector and type suffix expected
};

// Each element type at each width the lowering can ask for (at most 16 bytes).
constexpr Case cases[] = {
    {"i1", 1, 1, "b8"},        {"i1", 2, 2, "b16"},       {"i1", 4, 4, "b32"},       {"i1", 8, 8, "v2.b32"},
    {"i1", 16, 16, "v4.b32"},  {"i8", 1, 1, "b8"},        {"i8", 2, 2, "b16"},       {"i8", 4, 4, "b32"},
    {"i8", 8, 8, "v2.b32"},    {"i8", 16, 16, "v4.b32"},  {"i16", 1, 2, "b16"},      {"i16", 2, 4, "b32"},
    {"i16", 4, 8, "v2.b32"},   {"i16", 8, 16, "v4.b32"},  {"half", 1, 2, "b16"},     {"half", 2, 4, "b32"},
    {"half", 4, 8, "v2.b32"},  {"half", 8, 16, "v4.b32"}, {"bfloat", 1, 2, "b16"},   {"bfloat", 2, 4, "b32"},
    {"bfloat", 4, 8, "v2.b32"}, {"bfloat", 8, 16, "v4.b32"}, {"i32", 1, 4, "b32"},   {"i32", 2, 8, "v2.b32"},
    {"i32", 4, 16, "v4.b32"},  {"float", 1, 4, "b32"},    {"float", 2, 8, "v2.b32"}, {"float", 4, 16, "v4.b32"},
    {"i64", 1, 8, "b64"},      {"i64", 2, 16, "v2.b64"},  {"double", 1, 8, "b64"},   {"double", 2, 16, "v2.b64"},
    {"ptr", 1, 8, "b64"},      {"ptr", 2, 16, "v2.b64"},
};

// A non-zero `other`, so a lost tie would show as a wrong value rather than a lucky zero.
llvm::Value* other_value(llvm::IRBuilder<>& b, llvm::Type* type, llvm::Value* some_ptr) {
  llvm::Type* elem = type->getScalarType();
  llvm::Value* scalar = elem->isPointerTy()       ? some_ptr
                        : elem->isFloatingPointTy() ? llvm::ConstantFP::get(elem, 1.5)
                                                    : llvm::ConstantInt::get(elem, 1);
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(type);
  return vt != nullptr ? b.CreateVectorSplat(vt->getNumElements(), scalar) : scalar;
}

// out[tid] = tid < n ? in[tid] : other, as one predicated load and one predicated store.
std::unique_ptr<llvm::Module> build_copy(llvm::LLVMContext& ctx, const tessera::lower::Target& target,
                                         llvm::Type* type, unsigned align, unsigned address_space = 1) {
  return tessera::test::build_kernel(ctx, target, "masked_copy", [&](auto& b, auto* in, auto* out, auto* n) {
    llvm::Value* tid = target.thread_id(b);
    llvm::Value* pred = b.CreateICmpSLT(tid, n);
    llvm::Value* offset = b.CreateMul(tid, b.getInt32(align));
    llvm::Value* src = b.CreateGEP(b.getInt8Ty(), in, offset);
    llvm::Value* dst = b.CreateGEP(b.getInt8Ty(), out, offset);
    if (address_space != 1) {
      src = b.CreateAddrSpaceCast(src, b.getPtrTy(address_space));
      dst = b.CreateAddrSpaceCast(dst, b.getPtrTy(address_space));
    }
    llvm::Value* v = target.predicated_load(b, type, src, pred, other_value(b, type, in), align);
    target.predicated_store(b, v, dst, pred, align);
  });
}

llvm::Type* access_type(llvm::LLVMContext& ctx, const Case& c) {
  llvm::Type* elem = element_type(ctx, c.elem);
  return c.width == 1 ? elem : llvm::FixedVectorType::get(elem, c.width);
}

std::vector<const llvm::InlineAsm*> inline_asms(const llvm::Module& m) {
  std::vector<const llvm::InlineAsm*> out;
  for (const llvm::Function& f : m)
    for (const llvm::BasicBlock& bb : f)
      for (const llvm::Instruction& i : bb)
        if (const auto* call = llvm::dyn_cast<llvm::CallInst>(&i); call != nullptr && call->isInlineAsm())
          out.push_back(llvm::cast<llvm::InlineAsm>(call->getCalledOperand()));
  return out;
}

}  // namespace

TEST_CASE("nvptx masked loads and stores are predicated ld.global / st.global", "[backend][nvptx]") {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    auto target = tessera::lower::make_target(arch);
    for (const Case& c : cases) {
      INFO("arch " << arch << ", <" << c.width << " x " << c.elem << ">");
      llvm::LLVMContext ctx;
      const std::string ptx = target->compile(build_copy(ctx, *target, access_type(ctx, c), c.bytes), "masked_copy").data;
      INFO(ptx);
      CHECK(contains(ptx, std::string(R"(@%p\d+ ld\.global\.)") + c.access + " "));
      CHECK(contains(ptx, std::string(R"(@%p\d+ st\.global\.)") + c.access + " "));
      CHECK_FALSE(contains(ptx, R"(\bbra\b)"));  // straight-line code: no branch around the access
      CHECK_FALSE(contains(ptx, R"(\.nc\b)"));   // the kernel may write what it reads
      tessera::test::check_ptxas_accepts(ptx, arch);
    }
  }
}

TEST_CASE("nvptx predicated load ties `other` to the outputs, as Triton does", "[backend][nvptx]") {
  auto target = tessera::lower::make_target("sm_90a");
  llvm::LLVMContext ctx;
  auto m = build_copy(ctx, *target, llvm::FixedVectorType::get(llvm::Type::getFloatTy(ctx), 4), 16);
  const auto asms = inline_asms(*m);
  REQUIRE(asms.size() == 2);
  CHECK(asms[0]->getAsmString() == "@$5 ld.global.v4.b32 { $0, $1, $2, $3 }, [ $4 + 0 ];");
  CHECK(asms[0]->getConstraintString() == "=r,=r,=r,=r,l,b,0,1,2,3");
  CHECK(asms[0]->hasSideEffects());  // ordered with stores and barriers
  CHECK(asms[1]->getAsmString() == "@$5 st.global.v4.b32 [ $0 + 0 ], { $1, $2, $3, $4 };");
  CHECK(asms[1]->getConstraintString() == "l,r,r,r,r,b");

  // A byte travels in a 16-bit register: PTX has no 8-bit ones.
  llvm::LLVMContext ctx8;
  const auto asms8 = inline_asms(*build_copy(ctx8, *target, llvm::Type::getInt8Ty(ctx8), 1));
  REQUIRE(asms8.size() == 2);
  CHECK(asms8[0]->getAsmString() == "@$2 ld.global.b8 $0, [ $1 + 0 ];");
  CHECK(asms8[0]->getConstraintString() == "=h,l,b,0");
}

TEST_CASE("nvptx keeps the branch where a predicated instruction does not fit", "[backend][nvptx]") {
  auto target = tessera::lower::make_target("sm_80");
  SECTION("an access aligned below its size") {
    llvm::LLVMContext ctx;
    auto m = build_copy(ctx, *target, llvm::FixedVectorType::get(llvm::Type::getFloatTy(ctx), 4), 4);
    CHECK(inline_asms(*m).empty());
    tessera::test::check_ptxas_accepts(target->compile(std::move(m), "masked_copy").data, "sm_80");
  }
  SECTION("a generic (not global) pointer") {
    llvm::LLVMContext ctx;
    auto m = build_copy(ctx, *target, llvm::Type::getFloatTy(ctx), 4, /*address_space=*/0);
    CHECK(inline_asms(*m).empty());
    tessera::test::check_ptxas_accepts(target->compile(std::move(m), "masked_copy").data, "sm_80");
  }
  SECTION("a shape PTX cannot move in one instruction") {
    llvm::LLVMContext ctx;
    auto m = build_copy(ctx, *target, llvm::FixedVectorType::get(llvm::Type::getFloatTy(ctx), 3), 16);
    CHECK(inline_asms(*m).empty());
    tessera::test::check_ptxas_accepts(target->compile(std::move(m), "masked_copy").data, "sm_80");
  }
}

TEST_CASE("nvptx folds a constant mask instead of predicating", "[backend][nvptx]") {
  auto target = tessera::lower::make_target("sm_80");
  llvm::LLVMContext ctx;
  auto m = tessera::test::build_kernel(ctx, *target, "const_mask", [&](auto& b, auto* in, auto* out, auto*) {
    llvm::Type* f4 = llvm::FixedVectorType::get(b.getFloatTy(), 4);
    llvm::Value* v = target->predicated_load(b, f4, in, b.getTrue(), llvm::Constant::getNullValue(f4), 16);
    target->predicated_store(b, v, out, b.getTrue(), 16);
    target->predicated_store(b, v, in, b.getFalse(), 16);  // never stores: emits nothing
  });
  CHECK(inline_asms(*m).empty());
  const std::string ptx = target->compile(std::move(m), "const_mask").data;
  INFO(ptx);
  CHECK(contains(ptx, R"(ld\.global\.v4\.(b32|f32|u32))"));
  CHECK_FALSE(contains(ptx, "@%p"));
  CHECK(contains(ptx, R"(st\.global\.v4)"));
}
