// A tiny kernel built by hand through the Target interface, the way jit/lower will build kernels:
//   add_one(const float* in, float* out, i32 n):
//     barrier();
//     for (i = program_id(0) * block + thread_id(); i < n; i += num_programs(0) * block)
//       out[i] = in[i] + 1.0f;
// It touches every Target hook (special registers, barrier, kernel marking, address spaces).
#pragma once
#include <memory>
#include <string>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "jit/lower/target.hpp"

namespace tessera::test {

inline std::unique_ptr<llvm::Module> build_add_one(llvm::LLVMContext& ctx, const lower::Target& target,
                                                   const std::string& name, int block) {
  auto m = std::make_unique<llvm::Module>(name, ctx);
  m->setTargetTriple(llvm::Triple(target.triple()));
  m->setDataLayout(target.data_layout());
  llvm::IRBuilder<> b(ctx);
  llvm::Type* global_ptr = b.getPtrTy(target.global_address_space());
  auto* fn_type = llvm::FunctionType::get(b.getVoidTy(), {global_ptr, global_ptr, b.getInt32Ty()}, false);
  auto* f = llvm::Function::Create(fn_type, llvm::GlobalValue::ExternalLinkage, name, *m);
  target.mark_kernel(f, block);
  llvm::Argument* in = f->getArg(0);
  llvm::Argument* out = f->getArg(1);
  llvm::Argument* n = f->getArg(2);

  auto* entry = llvm::BasicBlock::Create(ctx, "entry", f);
  auto* loop = llvm::BasicBlock::Create(ctx, "loop", f);
  auto* body = llvm::BasicBlock::Create(ctx, "body", f);
  auto* exit = llvm::BasicBlock::Create(ctx, "exit", f);

  b.SetInsertPoint(entry);
  target.barrier(b);
  llvm::Value* start = b.CreateAdd(b.CreateMul(target.program_id(b, 0), b.getInt32(block)), target.thread_id(b));
  llvm::Value* stride = b.CreateMul(target.num_programs(b, 0), b.getInt32(block));
  b.CreateBr(loop);

  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(b.getInt32Ty(), 2, "i");
  i->addIncoming(start, entry);
  b.CreateCondBr(b.CreateICmpSLT(i, n), body, exit);

  b.SetInsertPoint(body);
  llvm::Value* x = b.CreateLoad(b.getFloatTy(), b.CreateGEP(b.getFloatTy(), in, i));
  b.CreateStore(b.CreateFAdd(x, llvm::ConstantFP::get(b.getFloatTy(), 1.0)), b.CreateGEP(b.getFloatTy(), out, i));
  i->addIncoming(b.CreateAdd(i, stride), body);
  b.CreateBr(loop);

  b.SetInsertPoint(exit);
  b.CreateRetVoid();
  return m;
}

}  // namespace tessera::test
