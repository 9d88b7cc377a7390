// Tier 4 for NVIDIA without a GPU: PTX from the NVPTX target is assembled by CUDA's ptxas.
#include <catch2/catch.hpp>

#include "test_kernel.hpp"
#include "tessera/error.hpp"
#include "tool_paths.hpp"

namespace {

tessera::lower::DeviceBinary compile_add_one(const std::string& arch) {
  auto target = tessera::lower::make_target(arch);
  llvm::LLVMContext ctx;
  return target->compile(tessera::test::build_add_one(ctx, *target, "add_one", 128), "add_one");
}

}  // namespace

TEST_CASE("nvptx targets describe themselves", "[backend][nvptx]") {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    auto t = tessera::lower::make_target(arch);
    CHECK(t->name() == arch);
    CHECK(t->triple() == "nvptx64-nvidia-cuda");
    CHECK(t->warp_size() == 32);
    CHECK(t->global_address_space() == 1);
    CHECK(t->shared_address_space() == 3);
    CHECK(t->data_layout().find("e-") == 0);
  }
}

TEST_CASE("nvptx compiles a kernel to PTX that ptxas accepts", "[backend][nvptx]") {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    INFO("arch " << arch);
    const tessera::lower::DeviceBinary bin = compile_add_one(arch);
    CHECK(bin.format == "ptx");
    CHECK(bin.kernel_name == "add_one");
    CHECK(bin.assembly == bin.data);
    const std::string& ptx = bin.data;
    CHECK(ptx.find(".entry add_one") != std::string::npos);
    CHECK(ptx.find(std::string(".target ") + arch) != std::string::npos);
    CHECK(ptx.find(".maxntid 128") != std::string::npos);
    CHECK(ptx.find("bar.sync") != std::string::npos);
    CHECK(ptx.find("%nctaid.x") != std::string::npos);
    CHECK(ptx.find("%ctaid.x") != std::string::npos);
    CHECK(ptx.find("%tid.x") != std::string::npos);

    const std::string ptxas = tessera::test::ptxas_or_skip();
    if (ptxas.empty()) continue;
    tessera::test::ScratchFile ptx_file(ptx, ".ptx");
    tessera::test::ScratchFile cubin("", ".cubin");
    const auto r = tessera::test::run_command(ptxas + " -arch=" + arch + " " + ptx_file.path() + " -o " + cubin.path());
    INFO(ptx << "\nptxas said:\n" << r.output);
    CHECK(r.exit_code == 0);
  }
}

TEST_CASE("every program_id and num_programs axis lowers to its special register", "[backend][nvptx]") {
  auto target = tessera::lower::make_target("sm_90a");
  llvm::LLVMContext ctx;
  auto m = std::make_unique<llvm::Module>("axes", ctx);
  llvm::IRBuilder<> b(ctx);
  llvm::Type* ptr = b.getPtrTy(target->global_address_space());
  auto* f = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), {ptr}, false),
                                   llvm::GlobalValue::ExternalLinkage, "axes", *m);
  target->mark_kernel(f, 32);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", f));
  for (int axis = 0; axis < 3; ++axis) {
    b.CreateStore(target->program_id(b, axis), b.CreateConstGEP1_32(b.getInt32Ty(), f->getArg(0), axis));
    b.CreateStore(target->num_programs(b, axis), b.CreateConstGEP1_32(b.getInt32Ty(), f->getArg(0), 3 + axis));
  }
  b.CreateRetVoid();
  const std::string ptx = target->compile(std::move(m), "axes").data;
  for (const char* reg : {"%ctaid.x", "%ctaid.y", "%ctaid.z", "%nctaid.x", "%nctaid.y", "%nctaid.z"})
    CHECK(ptx.find(reg) != std::string::npos);
  CHECK_THROWS_AS(target->program_id(b, 3), tessera::InternalError);
}

TEST_CASE("make_target rejects an unknown name and lists the known ones", "[backend]") {
  try {
    tessera::lower::make_target("sm_75");
    FAIL("no exception");
  } catch (const tessera::Error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("sm_75") != std::string::npos);
    CHECK(msg.find("sm_80, sm_90a, gfx90a, gfx942") != std::string::npos);
  }
}

TEST_CASE("a module the verifier rejects is an InternalError, not a crash", "[backend]") {
  auto target = tessera::lower::make_target("sm_80");
  llvm::LLVMContext ctx;
  auto m = std::make_unique<llvm::Module>("broken", ctx);
  auto* f = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), false),
                                   llvm::GlobalValue::ExternalLinkage, "broken", *m);
  llvm::BasicBlock::Create(ctx, "entry", f);  // no terminator
  CHECK_THROWS_AS(target->compile(std::move(m), "broken"), tessera::InternalError);
}
