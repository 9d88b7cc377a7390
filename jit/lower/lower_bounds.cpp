// Debug mode's bounds checks of global memory accesses, built in the kernel where the target says
// so (Target::checks_bounds_in_kernel: NVIDIA). The kernel takes each pointer argument's extent in
// bytes as a hidden parameter (declare_kernel; the launch appends them, UINT64_MAX for a raw
// pointer, whose size nobody knows). Each access whose addresses all derive from one argument is
// checked, by every thread that makes it, before the op's accesses happen:
//
//     offset = address - argument
//     fails  = active && extent known && !(offset <= extent && bytes <= extent - offset)
//
// (unsigned: an address below the argument wraps to a huge offset), and a failure prints
// "pid (..) idx (..) load out of bounds of argument 'x' (byte offset B, extent E) at FILE:LINE:COL",
// then stops the launch through Target::fail_check (CUDA's __assertfail) and a trap, so that the
// access never happens. An op's elements share one report (its first failing element's), so that
// debug-mode code stays small enough for ptxas.
//
// The origin of an address is found in the finished LLVM function (GEPs, phis of loop-carried
// pointers, selects): a mark is placed at each access while lowering, and the checks are built
// once the loops' back edges exist. An address of no single argument's origin (a pointer tile that
// went through shared memory, a select with another argument's) is not checked; the interpreter
// and the host targets check every access.
#include <fmt/format.h>

#include <map>

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

void KernelLowering::check_bounds(const ir::Op& op, const char* access, const ir::Type& t, const Elems& ptrs,
                                  const Elems* active, std::int64_t bytes) {
  if (!checks_bounds() || ptrs.empty()) return;
  if (!target_.can_fail_checks())
    throw Error(fmt::format("{} at {}: debug mode's bounds checks are not supported when compiling for {} yet; "
                            "compile without debug mode",
                            access, op.loc.str(), target_.name()));
  // The indices first: the checks go where the mark is, and what they print must dominate it.
  std::vector<BoundsElement> elements;
  for (std::size_t k = 0; k < ptrs.size(); ++k)
    elements.push_back({.ptr = ptrs[k],
                        .active = active ? (*active)[k] : nullptr,
                        .coords = t.is_tile() ? element_coords(t, static_cast<std::int64_t>(k))
                                              : std::vector<llvm::Value*>{}});
  llvm::FunctionCallee marker = module_->getOrInsertFunction(kMarker, llvm::FunctionType::get(b_.getVoidTy(), false));
  bounds_sites_.push_back({.marker = b_.CreateCall(marker),
                           .access = access,
                           .bytes = bytes,
                           .loc = op.loc,
                           .type = t,
                           .elements = std::move(elements)});
}

void KernelLowering::finish_bounds_checks() {
  for (const BoundsSite& s : bounds_sites_) {
    // The elements by the argument they derive from (almost always one); others are not checked.
    std::map<unsigned, std::vector<std::size_t>> by_argument;
    for (std::size_t i = 0; i < s.elements.size(); ++i) {
      const llvm::Argument* origin = argument_origin(s.elements[i].ptr);
      if (origin != nullptr && origin->getArgNo() < extents_.size() && extents_[origin->getArgNo()] != nullptr)
        by_argument[origin->getArgNo()].push_back(i);
    }
    for (const auto& [index, members] : by_argument) {
      llvm::IRBuilder<> b(s.marker);
      b.SetCurrentDebugLocation(s.marker->getDebugLoc());
      b_.SetInsertPoint(s.marker);  // first_failure builds with b_
      b_.SetCurrentDebugLocation(s.marker->getDebugLoc());
      llvm::Value* base = b.CreatePtrToInt(fn_->getArg(index), b.getInt64Ty());
      llvm::Value* extent = extents_[index];
      llvm::Value* bytes = b.getInt64(static_cast<std::uint64_t>(s.bytes));
      llvm::Value* known = b.CreateICmpNE(extent, b.getInt64(~std::uint64_t{0}));
      Elems failed;
      std::vector<std::vector<llvm::Value*>> values;
      for (std::size_t i : members) {
        const BoundsElement& e = s.elements[i];
        llvm::Value* offset = b.CreateSub(b.CreatePtrToInt(e.ptr, b.getInt64Ty()), base);
        llvm::Value* inside =
            b.CreateAnd(b.CreateICmpULE(offset, extent), b.CreateICmpULE(bytes, b.CreateSub(extent, offset)));
        llvm::Value* fails = b.CreateNot(inside);
        if (e.active != nullptr) fails = b.CreateAnd(e.active, fails);
        failed.push_back(fails);
        values.push_back(e.coords);
        values.back().push_back(offset);
      }
      FirstFailure first = first_failure(failed, values);
      first.values.push_back(extent);
      llvm::Instruction* fail_end =
          llvm::SplitBlockAndInsertIfThen(b.CreateAnd(known, first.any), s.marker, /*Unreachable=*/true);
      b.SetInsertPoint(fail_end);
      const std::string& hint = m_.entry().args[index]->name_hint;
      const std::string argument = hint.empty() ? fmt::format("argument #{}", index) : fmt::format("argument '{}'", hint);
      fail_check_with_pid(b, ir::bounds_failure_format(s.type, s.access, argument, s.loc.str()), first.values,
                          {.message = fmt::format("{} out of bounds of {}", s.access, argument),
                           .file = s.loc.file,
                           .function = m_.name,
                           .line = s.loc.line});
      // The access must not happen even if the target's failure returned: a trap, then nothing.
      b.CreateIntrinsic(llvm::Intrinsic::trap, llvm::ArrayRef<llvm::Type*>{}, llvm::ArrayRef<llvm::Value*>{});
    }
    s.marker->eraseFromParent();
  }
  bounds_sites_.clear();
  if (llvm::Function* f = module_->getFunction(kMarker)) f->eraseFromParent();
}

}  // namespace tessera::lower
