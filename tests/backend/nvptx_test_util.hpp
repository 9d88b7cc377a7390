// Helpers of the NVPTX codegen tests: a one-block kernel built through the Target interface, and
// assembling its PTX with ptxas (the test case is marked skipped where CUDA's ptxas is absent).
#pragma once
#include <functional>
#include <memory>
#include <regex>
#include <string>

#include <catch2/catch.hpp>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "jit/lower/target.hpp"
#include "tool_paths.hpp"

namespace tessera::test {

// kernel(ptr addrspace(1) in, ptr addrspace(1) out, i32 n) whose body `body` writes at the
// builder's insertion point; the kernel returns after it.
using KernelBody = std::function<void(llvm::IRBuilder<>& b, llvm::Value* in, llvm::Value* out, llvm::Value* n)>;

inline std::unique_ptr<llvm::Module> build_kernel(llvm::LLVMContext& ctx, const lower::Target& target,
                                                  const std::string& name, const KernelBody& body) {
  auto m = std::make_unique<llvm::Module>(name, ctx);
  m->setTargetTriple(llvm::Triple(target.triple()));
  m->setDataLayout(target.data_layout());
  llvm::IRBuilder<> b(ctx);
  llvm::Type* ptr = b.getPtrTy(target.global_address_space());
  auto* f = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, b.getInt32Ty()}, false),
                                   llvm::GlobalValue::ExternalLinkage, name, *m);
  target.mark_kernel(f, 128);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", f));
  body(b, f->getArg(0), f->getArg(1), f->getArg(2));
  b.CreateRetVoid();
  return m;
}

inline bool contains(const std::string& text, const std::string& pattern) {
  return std::regex_search(text, std::regex(pattern));
}

// Assembles `ptx` for `arch`; a Catch check, or a skip of the test case where ptxas is not installed.
inline void check_ptxas_accepts(const std::string& ptx, const std::string& arch) {
  const std::string ptxas = ptxas_or_skip();
  if (ptxas.empty()) return;
  ScratchFile ptx_file(ptx, ".ptx");
  ScratchFile cubin("", ".cubin");
  const auto r = run_command(ptxas + " -arch=" + arch + " " + ptx_file.path() + " -o " + cubin.path());
  INFO(ptx << "\nptxas said:\n" << r.output);
  CHECK(r.exit_code == 0);
}

}  // namespace tessera::test
