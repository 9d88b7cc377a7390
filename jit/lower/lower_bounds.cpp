// Debug mode's bounds checks of global memory accesses, built in the kernel where the target says
// so (Target::checks_bounds_in_kernel: NVIDIA). The kernel takes each pointer argument's extent in
// bytes as a hidden parameter (declare_kernel; the launch appends them, UINT64_MAX for a raw
// pointer, whose size nobody knows). Each access whose addresses all derive from one argument is
// checked, by every thread that makes it, before it happens:
//
//     offset = address - argument;   fails = active && extent known && !(offset <= extent && bytes <= extent - offset)
//
// (unsigned: an address below the argument wraps to a huge offset), and a failure prints
// "pid (..) idx (..) load out of bounds of argument 'x' (byte offset B, extent E) at FILE:LINE:COL",
// then stops the launch through Target::fail_check (CUDA's __assertfail) and a trap, so that the
// access never happens. The origin of an address is found in the finished LLVM function (GEPs,
// phis of loop-carried pointers, selects): a mark is placed at each access while lowering, and
// the checks are built once the loops' back edges exist. An address of no single argument's origin
// (a pointer tile that went through shared memory, a select with another argument's) is not
// checked; the interpreter and the host targets check every access.
#include <fmt/format.h>

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include "jit/ir/print_format.hpp"
#include "jit/lower/lowering.hpp"
#include "tessera/error.hpp"

namespace tessera::lower {

namespace {
constexpr const char* kMarker = "tessera.bounds";

// The kernel argument every address `ptr` may take derives from, or null.
const llvm::Argument* argument_origin(const llvm::Value* ptr) {
  llvm::SmallVector<const llvm::Value*, 4> objects;
  llvm::getUnderlyingObjects(ptr, objects, nullptr, /*MaxLookup=*/0);  // 0: no depth limit
  const llvm::Argument* origin = nullptr;
  for (const llvm::Value* obj : objects) {
    const auto* arg = llvm::dyn_cast<llvm::Argument>(obj);
    if (arg == nullptr || (origin != nullptr && arg != origin)) return nullptr;
    origin = arg;
  }
  return origin;
}
}  // namespace

void KernelLowering::check_bounds(const ir::Op& op, const char* access, const ir::Type& t, std::int64_t k,
                                  llvm::Value* ptr, std::int64_t bytes, llvm::Value* active) {
  if (!checks_bounds()) return;
  if (!target_.can_fail_checks())
    throw Error(fmt::format("{} at {}: debug mode's bounds checks are not supported when compiling for {} yet; "
                            "compile without debug mode",
                            access, op.loc.str(), target_.name()));
  llvm::FunctionCallee marker = module_->getOrInsertFunction(
      kMarker, llvm::FunctionType::get(b_.getVoidTy(), {ptr->getType(), b_.getInt1Ty()}, false));
  // The index first: the check goes where the mark is, and what it prints must dominate it.
  std::vector<llvm::Value*> coords = t.is_tile() ? element_coords(t, k) : std::vector<llvm::Value*>{};
  bounds_sites_.push_back({.marker = b_.CreateCall(marker, {ptr, active ? active : b_.getTrue()}),
                           .access = access,
                           .bytes = bytes,
                           .loc = op.loc,
                           .type = t,
                           .coords = std::move(coords)});
}

void KernelLowering::finish_bounds_checks() {
  for (const BoundsSite& s : bounds_sites_) {
    llvm::CallInst* marker = s.marker;
    llvm::Value* ptr = marker->getArgOperand(0);
    llvm::Value* active = marker->getArgOperand(1);
    const llvm::Argument* origin = argument_origin(ptr);
    llvm::Value* extent = origin != nullptr && origin->getArgNo() < extents_.size() ? extents_[origin->getArgNo()] : nullptr;
    if (extent == nullptr) {  // no single argument's address: not checked here (see above)
      marker->eraseFromParent();
      continue;
    }
    llvm::IRBuilder<> b(marker);
    b.SetCurrentDebugLocation(marker->getDebugLoc());
    llvm::Value* offset = b.CreateSub(b.CreatePtrToInt(ptr, b.getInt64Ty()),
                                      b.CreatePtrToInt(const_cast<llvm::Argument*>(origin), b.getInt64Ty()));
    llvm::Value* bytes = b.getInt64(static_cast<std::uint64_t>(s.bytes));
    llvm::Value* inside = b.CreateAnd(b.CreateICmpULE(offset, extent), b.CreateICmpULE(bytes, b.CreateSub(extent, offset)));
    llvm::Value* known = b.CreateICmpNE(extent, b.getInt64(~std::uint64_t{0}));
    llvm::Value* fails = b.CreateAnd(b.CreateAnd(active, known), b.CreateNot(inside));
    llvm::Instruction* fail_end = llvm::SplitBlockAndInsertIfThen(fails, marker, /*Unreachable=*/true);
    b.SetInsertPoint(fail_end);
    const unsigned index = origin->getArgNo();
    const std::string& hint = m_.entry().args[index]->name_hint;
    const std::string argument = hint.empty() ? fmt::format("argument #{}", index) : fmt::format("argument '{}'", hint);
    std::vector<llvm::Value*> args;
    for (int axis = 0; axis < 3; ++axis) args.push_back(target_.program_id(b, axis));
    args.insert(args.end(), s.coords.begin(), s.coords.end());
    args.push_back(offset);
    args.push_back(extent);
    const std::string message = fmt::format("{} out of bounds of {}", s.access, argument);
    target_.fail_check(b, ir::bounds_failure_format(s.type, s.access, argument, s.loc.str()), args,
                       {.message = message, .file = s.loc.file, .function = m_.name, .line = s.loc.line});
    // The access must not happen even if the target's failure returned: a trap, then nothing.
    b.CreateIntrinsic(llvm::Intrinsic::trap, llvm::ArrayRef<llvm::Type*>{}, llvm::ArrayRef<llvm::Value*>{});
    marker->eraseFromParent();
  }
  bounds_sites_.clear();
  if (llvm::Function* f = module_->getFunction(kMarker)) f->eraseFromParent();
}

}  // namespace tessera::lower
