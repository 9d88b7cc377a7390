// Kernel structure, layouts and control flow of the tile-IR -> LLVM IR lowering.
#include "jit/lower/lowering.hpp"
#include "jit/lower/codegen.hpp"
#include "jit/analysis/wgmma_in_flight.hpp"

#include <fmt/format.h>

#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "tessera/error.hpp"

namespace tessera::lower {
using ir::DType;
using ir::Op;
using ir::OpKind;

KernelLowering::KernelLowering(const ir::Module& m, const Target& target, llvm::LLVMContext& ctx,
                               const CodegenOptions& options)
    : m_(m), target_(target), options_(options), ctx_(ctx), b_(ctx), axis_(m) {}

KernelLowering::~KernelLowering() = default;

std::unique_ptr<llvm::Module> KernelLowering::run() {
  module_ = std::make_unique<llvm::Module>(m_.name, ctx_);
  module_->setTargetTriple(llvm::Triple(target_.triple()));
  module_->setDataLayout(target_.data_layout());
  num_threads_ = m_.num_warps * target_.warp_size();
  declare_kernel();
  if (options_.max_registers > 0) target_.set_max_registers(fn_, options_.max_registers);
  if (options_.line_info) begin_line_info();
  if (options_.fp_fusion && target_.allows_fp_contraction()) {
    // Every float op built through b_ (the kernel's own arithmetic, not the helper functions
    // with builders of their own, such as the exact fmod) may fuse a*b+c into one rounding.
    llvm::FastMathFlags contract;
    contract.setAllowContract(true);
    b_.setFastMathFlags(contract);
  }
  lower_block(m_.entry());
  finish_bounds_checks();
  if (dib_) dib_->finalize();
  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyModule(*module_, &os))
    throw InternalError("tessera produced invalid LLVM IR for kernel '" + m_.name + "': " + err);
  return std::move(module_);
}

llvm::Type* KernelLowering::scalar_type(const ir::Type& t) const {
  switch (t.dtype) {
    case DType::I1: return b_.getInt1Ty();
    case DType::I8: case DType::U8: return b_.getInt8Ty();
    case DType::F8E4M3: case DType::F8E5M2: return b_.getInt8Ty();  // the code; lower_fp8.cpp
    case DType::I16: case DType::U16: return b_.getInt16Ty();
    case DType::I32: case DType::U32: return b_.getInt32Ty();
    case DType::I64: case DType::U64: return b_.getInt64Ty();
    case DType::F16: return b_.getHalfTy();
    case DType::BF16: return b_.getBFloatTy();
    case DType::F32: return b_.getFloatTy();
    case DType::F64: return b_.getDoubleTy();
    case DType::Ptr: return llvm::PointerType::get(ctx_, target_.global_address_space());
  }
  throw InternalError("unknown dtype");
}

llvm::Value* KernelLowering::constant_of(const ir::Type& t, const ir::Attr& value) const {
  llvm::Type* ty = scalar_type(t.element());
  if (ir::is_float(t.dtype)) {
    double v = std::holds_alternative<double>(value) ? std::get<double>(value)
                                                     : static_cast<double>(std::get<std::int64_t>(value));
    if (ir::is_fp8(t.dtype)) return llvm::ConstantInt::get(ty, fp8_code(t.dtype, v));
    return llvm::ConstantFP::get(ty, v);
  }
  if (t.dtype == DType::Ptr) return llvm::ConstantPointerNull::get(llvm::cast<llvm::PointerType>(ty));
  std::int64_t v = std::holds_alternative<std::int64_t>(value) ? std::get<std::int64_t>(value)
                                                               : static_cast<std::int64_t>(std::get<double>(value));
  return llvm::ConstantInt::get(ty, static_cast<std::uint64_t>(v), /*signed=*/true);
}

llvm::Value* KernelLowering::scratch(const Op& op) const {
  if (!smem_) throw InternalError(fmt::format("lowering: '{}' without shared memory at {}", op.name(), op.loc.str()));
  return llvm::ConstantExpr::getInBoundsGetElementPtr(b_.getInt8Ty(), smem_,
                                                      b_.getInt32(static_cast<std::uint32_t>(smem_plan_->offset(op))));
}

void KernelLowering::shared_phase(const Op& op, int phase) {
  if (smem_plan_->barrier_before(op, phase)) target_.barrier(b_);
}

void KernelLowering::declare_kernel() {
  std::vector<llvm::Type*> params;
  for (const auto& a : m_.entry().args) {
    // i1 travels as a byte: kernel parameters are byte-addressed.
    params.push_back(a->type.dtype == DType::I1 ? b_.getInt8Ty() : scalar_type(a->type));
  }
  // Debug mode's bounds checks: one hidden extent (i64 bytes) per pointer argument, after them all
  // (Target::checks_bounds_in_kernel; the launch appends them in this order).
  const std::size_t num_user_params = params.size();
  if (checks_bounds())
    for (const auto& a : m_.entry().args)
      if (a->type.dtype == DType::Ptr) params.push_back(b_.getInt64Ty());
  auto* fty = llvm::FunctionType::get(b_.getVoidTy(), params, false);
  fn_ = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, kernel_symbol(m_.name), module_.get());
  target_.mark_kernel(fn_, num_threads_);

  // Shared memory: one buffer holding every op's region, barriers where the plan puts them
  // (jit/analysis/shared_memory.hpp).
  smem_plan_ = std::make_unique<analysis::SharedMemoryPlan>(m_);
  if (const auto& missing = smem_plan_->missing_barriers(); !missing.empty()) {
    const ir::Op& op = *missing.front().first;
    throw InternalError(fmt::format("lowering: '{}' at {} needs a barrier before its shared-memory {} that the IR does not have "
                                    "(run the place-barriers pass: target_pipeline() ends with it)",
                                    op.name(), op.loc.str(), op.kind == ir::OpKind::LocalLoad ? "reads" : "writes"));
  }
  if (const std::int64_t smem = smem_plan_->total_bytes(); smem > 0) {
    if (target_.dynamic_shared_memory()) {  // sized at launch (DeviceBinary::shared_bytes)
      auto* arr = llvm::ArrayType::get(b_.getInt8Ty(), 0);
      smem_ = new llvm::GlobalVariable(*module_, arr, false, llvm::GlobalValue::ExternalLinkage, nullptr, "tessera_smem",
                                       nullptr, llvm::GlobalValue::NotThreadLocal, target_.shared_address_space());
    } else {
      auto* arr = llvm::ArrayType::get(b_.getInt8Ty(), static_cast<std::uint64_t>(smem));
      smem_ = new llvm::GlobalVariable(*module_, arr, false, llvm::GlobalValue::InternalLinkage,
                                       llvm::UndefValue::get(arr), "tessera_smem", nullptr,
                                       llvm::GlobalValue::NotThreadLocal, target_.shared_address_space());
    }
    smem_->setAlignment(llvm::Align(static_cast<std::uint64_t>(smem_plan_->alignment())));
    shared_bytes_ = static_cast<int>(smem);
  }

  // The prologue computes thread coordinates once, where they dominate every use.
  auto* prologue = llvm::BasicBlock::Create(ctx_, "prologue", fn_);
  auto* body = llvm::BasicBlock::Create(ctx_, "body", fn_);
  b_.SetInsertPoint(prologue);
  tid_ = target_.thread_id(b_);
  warp_id_ = nullptr;
  b_.CreateBr(body);
  b_.SetInsertPoint(body);

  for (std::size_t i = 0; i < m_.entry().args.size(); ++i) {
    const auto* a = m_.entry().args[i].get();
    llvm::Value* v = fn_->getArg(static_cast<unsigned>(i));
    v->setName(a->name_hint.empty() ? fmt::format("arg{}", i) : a->name_hint);
    if (a->type.dtype == DType::I1) v = b_.CreateTrunc(v, b_.getInt1Ty());
    set(a, {v});
  }
  extents_.assign(m_.entry().args.size(), nullptr);
  for (std::size_t i = 0, hidden = num_user_params; hidden < params.size(); ++i) {
    if (m_.entry().args[i]->type.dtype != DType::Ptr) continue;
    extents_[i] = fn_->getArg(static_cast<unsigned>(hidden++));
    extents_[i]->setName(fn_->getArg(static_cast<unsigned>(i))->getName() + ".extent");
  }
}

const std::vector<llvm::Value*>& KernelLowering::thread_base(const ir::Type& t) {
  auto dist = analysis::distribute(t);
  std::string key = ir::to_string(dist.layout);
  auto it = bases_.find(key);
  if (it != bases_.end()) return it->second;
  llvm::IRBuilder<> pb(ctx_);
  position_for_indices(pb);
  const auto& l = dist.layout;
  llvm::Value* lane = pb.CreateURem(tid_, pb.getInt32(target_.warp_size()));
  llvm::Value* warp = pb.CreateUDiv(tid_, pb.getInt32(target_.warp_size()));
  std::vector<llvm::Value*> base(l.parent_rank());
  for (int o : l.order) {
    llvm::Value* lane_d = pb.CreateURem(lane, pb.getInt32(l.threads_per_warp[o]));
    llvm::Value* warp_d = pb.CreateURem(warp, pb.getInt32(l.warps_per_cta[o]));
    lane = pb.CreateUDiv(lane, pb.getInt32(l.threads_per_warp[o]));
    warp = pb.CreateUDiv(warp, pb.getInt32(l.warps_per_cta[o]));
    llvm::Value* pos = pb.CreateAdd(pb.CreateMul(warp_d, pb.getInt32(l.threads_per_warp[o] * l.repeat(o))), lane_d);
    base[o] = pb.CreateMul(pos, pb.getInt32(l.size_per_thread[o]));
  }
  return bases_[key] = base;
}

void KernelLowering::position_for_indices(llvm::IRBuilder<>& pb) const {
  if (!epoch_head_) return pb.SetInsertPoint(fn_->getEntryBlock().getTerminator());  // before the prologue's branch
  pb.SetInsertPoint(epoch_head_->getParent(), std::next(epoch_head_->getIterator()));
}

void KernelLowering::start_index_epoch() {
  tid_ = target_.thread_id_unshared(b_);
  epoch_head_ = llvm::dyn_cast<llvm::Instruction>(tid_);
  bases_.clear();
  warp_id_ = nullptr;
}

const Elems& KernelLowering::get(const ir::Value* v) const {
  auto it = values_.find(v);
  if (it == values_.end()) throw InternalError("lowering: use of a value that was not lowered");
  return it->second;
}

void KernelLowering::lower_block(const ir::Block& b) {
  for (const auto& op : b.ops) lower_op(*op);
}

void KernelLowering::lower_op(const Op& op) {
  if (dib_) b_.SetCurrentDebugLocation(debug_location(op.loc));
  if (ir::is_shared_memory_op(op.kind)) return lower_shared_memory_op(op);  // lower_shared.cpp
  switch (op.kind) {
    case OpKind::Constant: {
      llvm::Value* c = constant_of(op.result()->type, op.attrs.at("value"));
      std::size_t n = op.result()->type.is_tile() ? analysis::distribute(op.result()->type).num_slots() : 1;
      set(op.result(), Elems(n, c));
      return;
    }
    case OpKind::ProgramId:
      set(op.result(), {target_.program_id(b_, static_cast<int>(op.int_attr("axis")))});
      return;
    case OpKind::NumPrograms:
      set(op.result(), {target_.num_programs(b_, static_cast<int>(op.int_attr("axis")))});
      return;
    case OpKind::Arange: return lower_arange(op);
    case OpKind::Splat:
      set(op.result(), Elems(analysis::distribute(op.result()->type).num_slots(), get(op.operands[0])[0]));
      return;
    case OpKind::Broadcast: return lower_broadcast(op);
    case OpKind::ExpandDims: {
      // The operand is in the slice of the result's layout: the same slots, nothing moves.
      const auto& want = analysis::slice_layout(op.result()->type.layout, static_cast<int>(op.int_attr("axis")));
      if (!(op.operands[0]->type.layout == want)) throw InternalError("expand_dims operand not in the slice layout");
      set(op.result(), get(op.operands[0]));
      return;
    }
    case OpKind::ConvertLayout: return lower_convert_layout(op);
    case OpKind::Reshape:
    case OpKind::Trans:
    case OpKind::Join:
    case OpKind::Split:
    case OpKind::Gather: return lower_shape_op(op);
    case OpKind::Load: return lower_load(op);
    case OpKind::Store: return lower_store(op);
    case OpKind::AtomicRmw:
    case OpKind::AtomicCas: return lower_atomic(op);
    case OpKind::For: return lower_for(op);
    case OpKind::If: return lower_if(op);
    case OpKind::DoWhile: return lower_do_while(op);
    case OpKind::DebugBarrier: target_.barrier(b_); return;
    case OpKind::Print: return lower_print(op);
    case OpKind::Assert: return lower_assert(op);
    case OpKind::Reduce: return lower_reduce(op);
    case OpKind::Scan: return lower_scan(op);
    case OpKind::Dot: return lower_dot(op);
    case OpKind::InlineAsm: return lower_inline_asm(op);
    case OpKind::Yield: return;  // read by the parent op
    case OpKind::Return: b_.CreateRetVoid(); return;
    default: return lower_elementwise(op);
  }
}

const Elems& KernelLowering::yielded_by(const ir::Block& b, int i) {
  const Op* y = b.terminator();
  if (!y || y->kind != OpKind::Yield) throw InternalError("region without yield");
  return get(y->operands.at(i));
}

namespace {
// Whether `v` is an element of a load from memory: the load, an element extracted from it, or a
// cast of either.
bool is_loaded(llvm::Value* v) {
  while (auto* inst = llvm::dyn_cast<llvm::Instruction>(v)) {
    if (llvm::isa<llvm::LoadInst>(inst)) return true;
    if (!llvm::isa<llvm::ExtractElementInst, llvm::CastInst>(inst)) return false;
    v = inst->getOperand(0);
  }
  return false;
}
}  // namespace

// A loaded value carried into a loop (a prefetch: the body loads the next one, carried in turn)
// enters it frozen. Otherwise InstCombine turns phi(load before the loop, load in the body), once
// it has split the vector loads into scalar ones, into one load of a phi of the addresses at the
// top of the body (foldPHIArgLoadIntoPHI; it requires every incoming value to be a load): each
// load is then waited for where it is issued and the prefetch is gone (cross-entropy's forward on
// sm_90a: the loop began with its LDG.E.128 and their HADD2.F32 next). A freeze is no instruction.
KernelLowering::CarriedPhis KernelLowering::open_carried(const Op& op, std::size_t first_init, const ir::Block& body,
                                                         std::size_t first_arg, llvm::BasicBlock* pre) {
  llvm::IRBuilder<> at_pre_end(pre->getTerminator());
  CarriedPhis carried;
  for (std::size_t i = first_init; i < op.operands.size(); ++i) {
    std::vector<llvm::PHINode*> phis;
    Elems as_values;
    for (auto* v : get(op.operands[i])) {
      auto* phi = b_.CreatePHI(v->getType(), 2);
      phi->addIncoming(is_loaded(v) ? at_pre_end.CreateFreeze(v) : v, pre);
      phis.push_back(phi);
      as_values.push_back(phi);
    }
    set(body.args[first_arg + i - first_init].get(), as_values);
    carried.push_back(std::move(phis));
  }
  return carried;
}

void KernelLowering::close_carried(const CarriedPhis& carried, const ir::Block& body, int first_yield,
                                   llvm::BasicBlock* latch) {
  for (std::size_t c = 0; c < carried.size(); ++c) {
    const Elems& next = yielded_by(body, static_cast<int>(c) + first_yield);
    for (std::size_t s = 0; s < carried[c].size(); ++s) carried[c][s]->addIncoming(next[s], latch);
  }
}

void KernelLowering::lower_for(const Op& op) {
  const auto& body = *op.regions[0]->block;
  llvm::Value* lb = get(op.operands[0])[0];
  llvm::Value* ub = get(op.operands[1])[0];
  llvm::Value* step = get(op.operands[2])[0];
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(ctx_, "for.header", fn_);
  auto* loop = llvm::BasicBlock::Create(ctx_, "for.body", fn_);
  auto* exit = llvm::BasicBlock::Create(ctx_, "for.exit", fn_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);

  // One phi for the induction variable and one per slot of each carried value.
  llvm::PHINode* iv = b_.CreatePHI(lb->getType(), 2, "iv");
  iv->addIncoming(lb, pre);
  // Set when iv + step wrapped past the end of the iv's type: the counter has then passed `ub`, so
  // the loop ends (as the interpreter's 64-bit test does) instead of wrapping and running forever.
  llvm::PHINode* wrapped = b_.CreatePHI(b_.getInt1Ty(), 2, "iv.wrapped");
  wrapped->addIncoming(b_.getFalse(), pre);
  const CarriedPhis carried = open_carried(op, 3, body, 1, pre);
  set(body.args[0].get(), {iv});
  // Runs while (step > 0 ? iv < ub : iv > ub), signed or unsigned per the iv's type.
  bool uns = ir::is_unsigned(op.operands[0]->type.dtype);
  llvm::Value* up = uns ? b_.CreateICmpULT(iv, ub) : b_.CreateICmpSLT(iv, ub);
  llvm::Value* down = uns ? b_.CreateICmpUGT(iv, ub) : b_.CreateICmpSGT(iv, ub);
  llvm::Value* positive = b_.CreateICmpSGT(step, llvm::ConstantInt::get(step->getType(), 0));
  llvm::Value* in_range = b_.CreateSelect(positive, up, down);
  b_.CreateCondBr(b_.CreateAnd(in_range, b_.CreateNot(wrapped)), loop, exit);

  b_.SetInsertPoint(loop);
  lower_block(body);
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  llvm::Value* next = b_.CreateAdd(iv, step);
  llvm::Value* overflow = nullptr;
  if (uns) {  // unsigned counters count up (a step that is positive as a signed value), or down
    llvm::Value* up_wrap = b_.CreateICmpULT(next, iv);
    llvm::Value* down_wrap = b_.CreateICmpUGT(next, iv);
    overflow = b_.CreateSelect(positive, up_wrap, down_wrap);
  } else {
    llvm::Value* pair = b_.CreateBinaryIntrinsic(llvm::Intrinsic::sadd_with_overflow, iv, step);
    overflow = b_.CreateExtractValue(pair, 1);
  }
  iv->addIncoming(next, latch);
  wrapped->addIncoming(overflow, latch);
  close_carried(carried, body, 0, latch);
  b_.CreateBr(header);
  b_.SetInsertPoint(exit);
  for (std::size_t c = 0; c < carried.size(); ++c)
    set(op.result(static_cast<int>(c)), Elems(carried[c].begin(), carried[c].end()));
  // The accumulators of wgmmas left in flight by the last iteration (lower_wgmma.cpp) are read
  // after their wait only.
  const ir::Op* yield = body.terminator();
  bool has_dot = false;
  for (const auto& o : body.ops) {
    has_dot |= o->kind == OpKind::Dot;
    if (!analysis::wgmma_in_flight(*o)) continue;
    for (std::size_t c = 0; c < yield->operands.size(); ++c)
      if (yield->operands[c] == o->result()) set(op.result(static_cast<int>(c)), target_.wgmma_wait(b_, get(op.result(static_cast<int>(c))), 0));
  }
  // Only at the top level: the exit then dominates everything lowered after it.
  if (has_dot && op.parent == &m_.entry()) start_index_epoch();
}

// The body block starts with one phi per slot of each carried value (init from before the loop,
// `next` from the end of the body); the end of the body branches back while the yielded condition
// holds. The condition is a scalar, so every thread of the program takes the same branch.
void KernelLowering::lower_do_while(const Op& op) {
  const auto& body = *op.regions[0]->block;
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  auto* loop = llvm::BasicBlock::Create(ctx_, "while.body", fn_);
  auto* exit = llvm::BasicBlock::Create(ctx_, "while.exit", fn_);
  b_.CreateBr(loop);
  b_.SetInsertPoint(loop);
  const CarriedPhis carried = open_carried(op, 0, body, 0, pre);
  lower_block(body);
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  close_carried(carried, body, 1, latch);
  b_.CreateCondBr(yielded_by(body, 0).at(0), loop, exit);
  b_.SetInsertPoint(exit);
  // The exit's one predecessor is the end of the body, where the yielded values are defined.
  for (std::size_t c = 0; c < carried.size(); ++c) set(op.result(static_cast<int>(c)), yielded_by(body, static_cast<int>(c) + 1));
}

void KernelLowering::lower_if(const Op& op) {
  llvm::Value* cond = get(op.operands[0])[0];
  auto* then_bb = llvm::BasicBlock::Create(ctx_, "if.then", fn_);
  auto* else_bb = llvm::BasicBlock::Create(ctx_, "if.else", fn_);
  auto* join = llvm::BasicBlock::Create(ctx_, "if.join", fn_);
  b_.CreateCondBr(cond, then_bb, else_bb);
  llvm::BasicBlock* ends[2];
  llvm::BasicBlock* starts[2] = {then_bb, else_bb};
  for (int r = 0; r < 2; ++r) {
    b_.SetInsertPoint(starts[r]);
    lower_block(*op.regions[r]->block);
    ends[r] = b_.GetInsertBlock();
    b_.CreateBr(join);
  }
  b_.SetInsertPoint(join);
  for (int i = 0; i < static_cast<int>(op.results.size()); ++i) {
    const Elems& a = yielded_by(*op.regions[0]->block, i);
    const Elems& c = yielded_by(*op.regions[1]->block, i);
    Elems out;
    for (std::size_t s = 0; s < a.size(); ++s) {
      auto* phi = b_.CreatePHI(a[s]->getType(), 2);
      phi->addIncoming(a[s], ends[0]);
      phi->addIncoming(c[s], ends[1]);
      out.push_back(phi);
    }
    set(op.result(i), out);
  }
}

}  // namespace tessera::lower
