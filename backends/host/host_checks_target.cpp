// Rewrites of the host target's module (host_target.cpp) before it leaves libtessera.so:
//
// - Every load, store, atomicrmw and cmpxchg is checked first and happens only when the check
//   passes, so that an access outside the launch's buffers, or outside the program's shared
//   memory, is a report naming the kernel's source line (from the lowering's line info) instead of
//   a crash or a silent corruption. Which buffer an access must stay in comes from the pointer's
//   origin in the unoptimized IR: the kernel argument every address derives from (through GEPs,
//   phis and selects), the shared-memory global, or unknown (a pointer loaded from memory or
//   rebuilt from an integer: it must lie in some buffer). The check is inline where the buffer is
//   known (the argument's, written by the executor before each launch; the shared memory's); the
//   executor's hook (host_abi.hpp) is called where that fails or the origin is unknown, and it
//   decides, records the report, and says whether the access may happen.
//
// - Integer division and remainder get the results ops.def defines for a zero divisor (all ones;
//   the dividend) and for MIN / -1 (MIN; 0). LLVM leaves those undefined, and x86's idiv traps;
//   NVIDIA hardware gives exactly the defined values.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include "backends/host/host_abi.hpp"

namespace tessera::backend {
namespace {

// Where an access's addresses come from.
struct Origin {
  bool shared = false;  // the program's shared memory
  int argument = -1;    // else the kernel argument they all derive from, or -1
};

Origin origin_of(const llvm::Value* ptr, const llvm::GlobalVariable* smem) {
  llvm::SmallVector<const llvm::Value*, 4> objects;
  llvm::getUnderlyingObjects(ptr, objects, nullptr, /*MaxLookup=*/0);  // 0: no depth limit
  Origin o;
  if (objects.empty()) return o;
  bool all_shared = true;
  int argument = -2;  // none seen yet
  for (const llvm::Value* obj : objects) {
    all_shared &= smem != nullptr && obj == smem;
    const auto* arg = llvm::dyn_cast<llvm::Argument>(obj);
    const int index = arg != nullptr ? static_cast<int>(arg->getArgNo()) : -1;
    argument = argument == -2 || argument == index ? index : -1;
  }
  o.shared = all_shared;
  o.argument = all_shared ? -1 : argument;
  return o;
}

// "file:line:column" of the instruction's line info, as tessera's SourceLoc prints it, as a
// constant C string of the module (one per distinct text).
class SiteStrings {
 public:
  explicit SiteStrings(llvm::Module& m) : m_(m) {}
  llvm::Constant* of(const llvm::Instruction& inst) {
    std::string text;
    if (const llvm::DILocation* loc = inst.getDebugLoc().get(); loc != nullptr && loc->getLine() > 0) {
      const std::string dir = loc->getDirectory().str(), file = loc->getFilename().str();
      text = (dir.empty() ? file : dir + "/" + file) + ":" + std::to_string(loc->getLine());
      if (loc->getColumn() > 0) text += ":" + std::to_string(loc->getColumn());
    }
    llvm::Constant*& c = strings_[text];
    if (c == nullptr) {
      llvm::Constant* bytes = llvm::ConstantDataArray::getString(m_.getContext(), text);
      auto* g = new llvm::GlobalVariable(m_, bytes->getType(), /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage,
                                         bytes, "tessera.site");
      g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
      c = g;
    }
    return c;
  }

 private:
  llvm::Module& m_;
  std::map<std::string, llvm::Constant*> strings_;
};

struct Access {
  llvm::Instruction* inst;
  llvm::Value* ptr;
  llvm::Type* type;  // the type in memory
  llvm::Align align;
  host_abi::Access kind;
};

std::vector<Access> memory_accesses(llvm::Function& f) {
  std::vector<Access> out;
  for (llvm::BasicBlock& bb : f)
    for (llvm::Instruction& i : bb) {
      if (auto* ld = llvm::dyn_cast<llvm::LoadInst>(&i))
        out.push_back({ld, ld->getPointerOperand(), ld->getType(), ld->getAlign(), host_abi::Access::Load});
      else if (auto* st = llvm::dyn_cast<llvm::StoreInst>(&i))
        out.push_back({st, st->getPointerOperand(), st->getValueOperand()->getType(), st->getAlign(),
                       host_abi::Access::Store});
      else if (auto* rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(&i))
        out.push_back({rmw, rmw->getPointerOperand(), rmw->getType(), rmw->getAlign(), host_abi::Access::Atomic});
      else if (auto* cas = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(&i))
        out.push_back({cas, cas->getPointerOperand(), cas->getCompareOperand()->getType(), cas->getAlign(),
                       host_abi::Access::Atomic});
    }
  return out;
}

// The region an access must lie in, when the IR can tell without a call: [base, base + size).
struct Bounds {
  llvm::Value* base = nullptr;  // i64
  llvm::Value* size = nullptr;  // i64
};

// Whether [addr, addr + bytes) lies in `in` and addr is a multiple of `align` (a power of two).
llvm::Value* inline_check(llvm::IRBuilder<>& b, llvm::Value* ptr, std::uint64_t bytes, std::uint64_t align, Bounds in) {
  llvm::Value* addr = b.CreatePtrToInt(ptr, b.getInt64Ty());
  llvm::Value* offset = b.CreateSub(addr, in.base);  // wraps to a huge value below the base
  llvm::Value* inside = b.CreateAnd(b.CreateICmpULE(offset, in.size),
                                    b.CreateICmpULE(b.getInt64(bytes), b.CreateSub(in.size, offset)));
  llvm::Value* aligned = b.CreateICmpEQ(b.CreateAnd(addr, b.getInt64(align - 1)), b.getInt64(0));
  return b.CreateAnd(inside, aligned);
}

// Puts `a.inst` under `if (fast_ok || slow() != 0)`: the hook (which records a failure and says
// whether the access may happen) is called only where the inline check fails or there is none.
// Where the access yields a value, the skipped path yields zero.
void guard(const Access& a, llvm::Value* fast_ok, const std::function<llvm::Value*(llvm::IRBuilder<>&)>& slow) {
  llvm::IRBuilder<> b(a.inst);
  llvm::Value* ok = nullptr;
  if (fast_ok == nullptr) {
    ok = b.CreateICmpNE(slow(b), b.getInt32(0));
  } else {
    llvm::BasicBlock* fast_end = a.inst->getParent();
    llvm::Instruction* slow_end = llvm::SplitBlockAndInsertIfThen(b.CreateNot(fast_ok), a.inst, /*Unreachable=*/false);
    b.SetInsertPoint(slow_end);
    llvm::Value* slow_ok = b.CreateICmpNE(slow(b), b.getInt32(0));
    b.SetInsertPoint(a.inst);
    llvm::PHINode* phi = b.CreatePHI(b.getInt1Ty(), 2);
    phi->addIncoming(b.getTrue(), fast_end);
    phi->addIncoming(slow_ok, slow_end->getParent());
    ok = phi;
  }
  llvm::BasicBlock* head = a.inst->getParent();
  llvm::Instruction* then_end = llvm::SplitBlockAndInsertIfThen(ok, a.inst, /*Unreachable=*/false);
  llvm::BasicBlock* tail = a.inst->getParent();
  a.inst->moveBefore(then_end->getIterator());
  if (a.inst->getType()->isVoidTy()) return;
  llvm::PHINode* phi = llvm::PHINode::Create(a.inst->getType(), 2, "", tail->begin());
  a.inst->replaceAllUsesWith(phi);
  phi->addIncoming(a.inst, a.inst->getParent());
  phi->addIncoming(llvm::Constant::getNullValue(a.inst->getType()), head);
}

struct Hooks {
  llvm::FunctionCallee check_global, check_shared;
  llvm::GlobalVariable* smem = nullptr;       // the shared memory, if any
  std::uint64_t smem_bytes = 0;
  llvm::GlobalVariable* arg_bounds = nullptr;  // host_abi::kArgBounds, if the kernel has arguments
};

void instrument_function(llvm::Function& f, const Hooks& h, SiteStrings& sites) {
  const llvm::DataLayout& dl = f.getParent()->getDataLayout();
  llvm::Type* pair = llvm::ArrayType::get(llvm::Type::getInt64Ty(f.getContext()), 2);
  // Last access first: each guard splits its block after the access, and the tail it moves then
  // ends at the next access's split, so a block of n accesses costs O(n) moves, not O(n²) (a
  // bitonic sort of 512 elements had thousands of shared-memory accesses in one block).
  const std::vector<Access> accesses = memory_accesses(f);
  for (auto it = accesses.rbegin(); it != accesses.rend(); ++it) {
    const Access& a = *it;
    llvm::IRBuilder<> b(a.inst);
    const Origin origin = origin_of(a.ptr, h.smem);
    const std::uint64_t bytes = dl.getTypeStoreSize(a.type).getFixedValue();
    const std::uint64_t align = a.align.value();
    std::vector<llvm::Value*> args = {a.ptr, b.getInt64(bytes), b.getInt64(align),
                                      b.getInt32(static_cast<std::uint32_t>(a.kind))};
    llvm::Value* fast_ok = nullptr;
    llvm::FunctionCallee hook = h.check_global;
    if (origin.shared) {
      hook = h.check_shared;
      fast_ok = inline_check(b, a.ptr, bytes, align, {b.CreatePtrToInt(h.smem, b.getInt64Ty()), b.getInt64(h.smem_bytes)});
    } else {
      args.push_back(b.getInt32(static_cast<std::uint32_t>(origin.argument)));
      if (origin.argument >= 0 && h.arg_bounds != nullptr) {
        // The executor writes each sized argument's buffer there before a launch (raw pointers
        // and scalars get 0 bytes, so that the hook decides).
        llvm::Value* at = b.CreateConstInBoundsGEP2_32(h.arg_bounds->getValueType(), h.arg_bounds, 0,
                                                       static_cast<unsigned>(origin.argument));
        llvm::Value* base = b.CreateLoad(b.getInt64Ty(), b.CreateConstInBoundsGEP2_32(pair, at, 0, 0));
        llvm::Value* size = b.CreateLoad(b.getInt64Ty(), b.CreateConstInBoundsGEP2_32(pair, at, 0, 1));
        fast_ok = inline_check(b, a.ptr, bytes, align, {base, size});
      }
    }
    args.push_back(sites.of(*a.inst));
    guard(a, fast_ok, [&](llvm::IRBuilder<>& at) {
      llvm::CallInst* call = at.CreateCall(hook, args);
      call->setDoesNotThrow();
      return call;
    });
  }
}

// x op y for a divisor that may be zero (and, signed, a MIN / -1), as ops.def defines it.
llvm::Value* guarded_division(llvm::IRBuilder<>& b, llvm::Instruction::BinaryOps opcode, llvm::Value* x, llvm::Value* y) {
  using Op = llvm::Instruction;
  llvm::Type* t = y->getType();
  const bool is_signed = opcode == Op::SDiv || opcode == Op::SRem;
  const bool is_div = opcode == Op::SDiv || opcode == Op::UDiv;
  llvm::Value* zero = b.CreateICmpEQ(y, llvm::Constant::getNullValue(t));
  llvm::Value* avoid = zero;
  if (is_signed) {
    llvm::Value* minus_one = b.CreateICmpEQ(y, llvm::Constant::getAllOnesValue(t));
    // MIN / -1 overflows (x86 traps); x / 1 gives the defined MIN. Any x % -1 is 0, as x % 1.
    llvm::Value* overflow = is_div ? b.CreateAnd(minus_one, b.CreateICmpEQ(x, llvm::ConstantInt::get(
                                                                                  t, llvm::APInt::getSignedMinValue(t->getScalarSizeInBits()))))
                                   : minus_one;
    avoid = b.CreateOr(zero, overflow);
  }
  llvm::Value* safe = b.CreateBinOp(opcode, x, b.CreateSelect(avoid, llvm::ConstantInt::get(t, 1), y));
  return b.CreateSelect(zero, is_div ? llvm::Constant::getAllOnesValue(t) : x, safe);
}

bool needs_guard(const llvm::BinaryOperator& op) {
  const auto* c = llvm::dyn_cast<llvm::ConstantInt>(op.getOperand(1));
  if (c == nullptr) return true;
  const bool is_signed = op.getOpcode() == llvm::Instruction::SDiv || op.getOpcode() == llvm::Instruction::SRem;
  return c->isZero() || (is_signed && c->isMinusOne());
}

}  // namespace

void instrument_memory_accesses(llvm::Module& m, int num_args) {
  llvm::LLVMContext& ctx = m.getContext();
  llvm::Type* i32 = llvm::Type::getInt32Ty(ctx);
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
  Hooks h;
  h.check_global = m.getOrInsertFunction(host_abi::kCheckGlobal,
                                         llvm::FunctionType::get(i32, {ptr, i64, i64, i32, i32, ptr}, false));
  h.check_shared =
      m.getOrInsertFunction(host_abi::kCheckShared, llvm::FunctionType::get(i32, {ptr, i64, i64, i32, ptr}, false));
  h.smem = m.getGlobalVariable(host_abi::kSharedMemory, /*AllowInternal=*/true);
  if (h.smem) h.smem_bytes = m.getDataLayout().getTypeAllocSize(h.smem->getValueType()).getFixedValue();
  if (num_args > 0) {
    auto* type = llvm::ArrayType::get(llvm::ArrayType::get(i64, 2), static_cast<std::uint64_t>(num_args));
    h.arg_bounds = new llvm::GlobalVariable(m, type, /*isConstant=*/false, llvm::GlobalValue::ExternalLinkage,
                                            llvm::Constant::getNullValue(type), host_abi::kArgBounds);
  }
  SiteStrings sites(m);
  for (llvm::Function& f : m)
    if (!f.isDeclaration()) instrument_function(f, h, sites);
}

void guard_integer_division(llvm::Module& m) {
  std::vector<llvm::BinaryOperator*> divisions;
  for (llvm::Function& f : m)
    for (llvm::BasicBlock& bb : f)
      for (llvm::Instruction& i : bb)
        if (auto* op = llvm::dyn_cast<llvm::BinaryOperator>(&i))
          if (op->isIntDivRem() && needs_guard(*op)) divisions.push_back(op);
  for (llvm::BinaryOperator* op : divisions) {
    llvm::IRBuilder<> b(op);
    llvm::Value* r = guarded_division(b, op->getOpcode(), op->getOperand(0), op->getOperand(1));
    op->replaceAllUsesWith(r);
    op->eraseFromParent();
  }
}

}  // namespace tessera::backend
