// Checks in compiled code: device_assert (ops.def `assert`) and, in debug mode, signed integer
// + - * overflow (as Triton's sanitize_overflow under debug=True). A failed check prints the program
// and the element (print_format.hpp's failure_line_format) and stops the launch through the
// target (Target::fail_check). Without debug mode neither is compiled: asserts cost nothing.
#include <fmt/format.h>

#include "jit/ir/print_format.hpp"
#include "jit/lower/lowering.hpp"
#include "tessera/error.hpp"

namespace tessera::lower {
using ir::Op;

void KernelLowering::lower_assert(const Op& op) {
  if (!options_.debug) return;  // compiled in only in debug mode (ops.def)
  Elems failed;
  for (llvm::Value* c : get(op.operands[0])) failed.push_back(b_.CreateNot(c));
  const std::string message = op.string_attr("message");
  report_failures(op.operands[0]->type, failed, ir::assert_failure_text(op.loc.str(), message), message, op.loc);
}

void KernelLowering::report_failures(const ir::Type& t, const Elems& failed, const std::string& text,
                                     const std::string& message, const ir::SourceLoc& loc) {
  if (!target_.can_fail_checks())
    throw Error(fmt::format("a check at {} ('{}'): checks in kernel code (device_assert, debug mode) are not supported "
                            "when compiling for {} yet; compile without debug mode",
                            loc.str(), message, target_.name()));
  // A replicated element is checked by its owner only, as print does (a scalar: thread 0).
  llvm::Value* owner = owner_predicate(t);
  Elems fails;
  std::vector<std::vector<llvm::Value*>> coords;
  for (std::size_t k = 0; k < failed.size(); ++k) {
    fails.push_back(owner ? b_.CreateAnd(owner, failed[k]) : failed[k]);
    coords.push_back(t.is_tile() ? element_coords(t, static_cast<std::int64_t>(k)) : std::vector<llvm::Value*>{});
  }
  const FirstFailure first = first_failure(fails, coords);
  only_where(first.any, [&] {
    fail_check_with_pid(b_, ir::failure_line_format(text, t), first.values,
                        {.message = message, .file = loc.file, .function = m_.name, .line = loc.line});
  });
}

KernelLowering::FirstFailure KernelLowering::first_failure(const Elems& failed,
                                                           const std::vector<std::vector<llvm::Value*>>& values) {
  // From the last element back, so that the first failing one's values are the ones left chosen:
  // one report per op, however many elements a thread holds (a report per element made ptxas
  // spend minutes on a debug-mode matmul).
  FirstFailure first;
  for (std::size_t k = failed.size(); k-- > 0;) {
    if (!first.any) {
      first.any = failed[k];
      first.values = values[k];
      continue;
    }
    for (std::size_t j = 0; j < first.values.size(); ++j)
      first.values[j] = b_.CreateSelect(failed[k], values[k][j], first.values[j]);
    first.any = b_.CreateOr(failed[k], first.any);
  }
  if (!first.any) first.any = b_.getFalse();
  return first;
}

void KernelLowering::fail_check_with_pid(llvm::IRBuilder<>& b, const std::string& format,
                                         const std::vector<llvm::Value*>& values, const Target::CheckSite& site) const {
  std::vector<llvm::Value*> args;
  for (int axis = 0; axis < 3; ++axis) args.push_back(target_.program_id(b, axis));
  args.insert(args.end(), values.begin(), values.end());
  target_.fail_check(b, format, args, site);
}

bool KernelLowering::checks_overflow(const Op& op) const {
  const ir::DType d = op.result()->type.dtype;
  return options_.debug && ir::is_int(d) && !ir::is_unsigned(d) &&
         (op.kind == ir::OpKind::Add || op.kind == ir::OpKind::Sub || op.kind == ir::OpKind::Mul);
}

void KernelLowering::report_overflow(const Op& op, const Elems& overflowed) {
  const std::string message = fmt::format("{} overflow in {}", ir::dtype_name(op.result()->type.dtype), op.name());
  report_failures(op.result()->type, overflowed, fmt::format(" {} at {}", message, op.loc.str()), message, op.loc);
}

std::pair<llvm::Value*, llvm::Value*> KernelLowering::checked_binary(ir::OpKind k, llvm::Value* a, llvm::Value* b) {
  const llvm::Intrinsic::ID id = k == ir::OpKind::Add   ? llvm::Intrinsic::sadd_with_overflow
                                 : k == ir::OpKind::Sub ? llvm::Intrinsic::ssub_with_overflow
                                                        : llvm::Intrinsic::smul_with_overflow;
  llvm::Value* both = b_.CreateIntrinsic(id, {a->getType()}, {a, b});
  return {b_.CreateExtractValue(both, 0), b_.CreateExtractValue(both, 1)};
}

}  // namespace tessera::lower
