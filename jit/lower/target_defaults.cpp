// Target-independent defaults of the Target interface.
#include "jit/lower/target.hpp"
#include "tessera/error.hpp"

namespace tessera::lower {

llvm::Value* Target::predicated_load(llvm::IRBuilder<>& b, llvm::Type* type, llvm::Value* ptr, llvm::Value* pred,
                                     llvm::Value* other, unsigned align, const AccessHints&) const {
  llvm::Function* f = b.GetInsertBlock()->getParent();
  auto& ctx = b.getContext();
  llvm::BasicBlock* from = b.GetInsertBlock();
  auto* then_bb = llvm::BasicBlock::Create(ctx, "pload", f);
  auto* join_bb = llvm::BasicBlock::Create(ctx, "pload.join", f);
  b.CreateCondBr(pred, then_bb, join_bb);
  b.SetInsertPoint(then_bb);
  llvm::Value* loaded = b.CreateAlignedLoad(type, ptr, llvm::MaybeAlign(align));
  b.CreateBr(join_bb);
  b.SetInsertPoint(join_bb);
  llvm::PHINode* phi = b.CreatePHI(type, 2);
  phi->addIncoming(loaded, then_bb);
  phi->addIncoming(other, from);
  return phi;
}

void Target::predicated_store(llvm::IRBuilder<>& b, llvm::Value* value, llvm::Value* ptr, llvm::Value* pred,
                              unsigned align, const AccessHints&) const {
  llvm::Function* f = b.GetInsertBlock()->getParent();
  auto& ctx = b.getContext();
  auto* then_bb = llvm::BasicBlock::Create(ctx, "pstore", f);
  auto* join_bb = llvm::BasicBlock::Create(ctx, "pstore.join", f);
  b.CreateCondBr(pred, then_bb, join_bb);
  b.SetInsertPoint(then_bb);
  b.CreateAlignedStore(value, ptr, llvm::MaybeAlign(align));
  b.CreateBr(join_bb);
  b.SetInsertPoint(join_bb);
}

void Target::async_copy(llvm::IRBuilder<>& b, llvm::Value* shared, llvm::Value* global, int bytes, llvm::Value* pred) const {
  llvm::Type* t = bytes == 4 ? static_cast<llvm::Type*>(b.getInt32Ty())
                             : llvm::FixedVectorType::get(b.getInt32Ty(), static_cast<unsigned>(bytes / 4));
  llvm::Value* v = predicated_load(b, t, global, pred, llvm::Constant::getNullValue(t), static_cast<unsigned>(bytes));
  b.CreateAlignedStore(v, shared, llvm::Align(static_cast<std::uint64_t>(bytes)));
}

std::string Target::sync_scope(const std::string&) const { return ""; }

void Target::set_max_registers(llvm::Function*, int) const {
  throw Error("tessera: target '" + name() + "' has no register cap; leave CompileOptions::maxnreg at 0");
}

void Target::fail_check(llvm::IRBuilder<>&, const std::string&, const std::vector<llvm::Value*>&,
                        const CheckSite&) const {
  throw Error("device_assert is not supported when compiling for " + name());
}

void Target::print(llvm::IRBuilder<>&, const std::string&, const std::vector<llvm::Value*>&) const {
  throw Error("device_print is not supported when compiling for " + name());
}

}  // namespace tessera::lower
