// print (ops.def): device_print. Each thread prints the elements it holds, through the target's
// printf (vprintf on NVIDIA, a host hook on the host targets) and the format the interpreter uses
// (print_format.hpp); an element that several threads hold (a replicated layout) is printed by
// its owner only, a scalar by thread 0.
#include <fmt/format.h>

#include "jit/ir/print_format.hpp"
#include "jit/lower/lowering.hpp"
#include "tessera/error.hpp"

namespace tessera::lower {
using ir::Op;

namespace {

// The value as the C type its conversion reads (ir::PrintArg): int, unsigned, long long, double,
// a pointer's address, or (hex) the value's bits.
llvm::Value* print_value(llvm::IRBuilder<>& b, ir::DType d, llvm::Value* v, bool hex) {
  auto bits = [&] {
    llvm::Type* t = v->getType();
    return t->isFloatingPointTy() ? b.CreateBitCast(v, b.getIntNTy(t->getPrimitiveSizeInBits())) : v;
  };
  switch (ir::print_arg(d, hex)) {
    case ir::PrintArg::Bits32: return b.CreateZExtOrTrunc(bits(), b.getInt32Ty());
    case ir::PrintArg::Bits64: return bits();
    case ir::PrintArg::Int: return b.CreateSExtOrTrunc(d == ir::DType::I1 ? b.CreateZExt(v, b.getInt32Ty()) : v, b.getInt32Ty());
    case ir::PrintArg::Unsigned: return b.CreateZExtOrTrunc(v, b.getInt32Ty());
    case ir::PrintArg::Int64:
    case ir::PrintArg::Unsigned64: return v;
    case ir::PrintArg::Double: return b.CreateFPExt(v, b.getDoubleTy());
    case ir::PrintArg::Address: return b.CreatePtrToInt(v, b.getInt64Ty());
  }
  return v;
}

}  // namespace

void KernelLowering::only_where(llvm::Value* pred, const std::function<void()>& body) {
  if (!pred) return body();
  auto* then_bb = llvm::BasicBlock::Create(ctx_, "where", fn_);
  auto* done_bb = llvm::BasicBlock::Create(ctx_, "where.done", fn_);
  b_.CreateCondBr(pred, then_bb, done_bb);
  b_.SetInsertPoint(then_bb);
  body();
  b_.CreateBr(done_bb);
  b_.SetInsertPoint(done_bb);
}

void KernelLowering::lower_print(const Op& op) {
  if (!target_.can_print())
    throw Error(fmt::format("device_print at {}: printing from a kernel is not supported when compiling for {} yet",
                            op.loc.str(), target_.name()));
  const std::string prefix = op.string_attr("prefix");
  const bool hex = op.has_attr("hex") && op.int_attr("hex") != 0;
  std::vector<llvm::Value*> pid;
  for (int axis = 0; axis < 3; ++axis) pid.push_back(target_.program_id(b_, axis));
  if (op.operands.empty())
    return only_where(owner_predicate(ir::Type::scalar(ir::DType::I32)),
                      [&] { target_.print(b_, ir::print_bare_format(prefix), pid); });
  const int n = static_cast<int>(op.operands.size());
  for (int o = 0; o < n; ++o) {
    const ir::Type& t = op.operands[o]->type;
    const std::string format = ir::print_line_format(prefix, t, o, n, hex);
    const Elems& elems = get(op.operands[o]);
    only_where(owner_predicate(t), [&] {
      for (std::size_t k = 0; k < elems.size(); ++k) {
        std::vector<llvm::Value*> args = pid;
        for (llvm::Value* c : element_coords(t, static_cast<std::int64_t>(k))) args.push_back(c);
        args.push_back(print_value(b_, t.dtype, elems[k], hex));
        target_.print(b_, format, args);
      }
    });
  }
}

}  // namespace tessera::lower
