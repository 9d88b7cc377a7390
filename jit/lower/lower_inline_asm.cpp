// inline_asm (ops.def; Triton's inline_asm_elementwise): one LLVM inline-asm call per `pack`
// register slots of each thread. Every operand and result shares one layout, so slot s of each is
// the same element: grouping slots s..s+pack-1 is grouping the same elements everywhere. Values
// narrower than 32 bits travel as vectors bitcast to integer registers (ir::inline_asm_registers).
#include <fmt/format.h>

#include <llvm/IR/InlineAsm.h>
#include <llvm/Support/Error.h>

#include "jit/lower/lowering.hpp"
#include "tessera/error.hpp"

namespace tessera::lower {
using ir::Op;

namespace {

// The registers of one value's `pack` elements, and their LLVM types.
struct RegisterPlan {
  ir::AsmRegisters regs;
  llvm::Type* element;   // the element's LLVM type
  llvm::Type* register_type;
  int per_register;      // elements per register
};

RegisterPlan plan_for(llvm::IRBuilder<>& b, llvm::Type* element, ir::DType d, int pack) {
  const ir::AsmRegisters r = ir::inline_asm_registers(d, pack);
  const int bits = ir::dtype_bits(d);
  if (bits >= 32) return {r, element, element, 1};
  return {r, element, b.getIntNTy(static_cast<unsigned>(r.bits)), r.bits / bits};
}

}  // namespace

void KernelLowering::lower_inline_asm(const Op& op) {
  if (!target_.runs_inline_asm())
    throw ProgramError(fmt::format("inline_asm_elementwise at {}: target {} cannot run GPU assembly; launch this "
                                   "kernel on a GPU (Executor::Cuda or Hip)",
                                   op.loc.str(), target_.name()));
  const int pack = static_cast<int>(op.int_attr("pack"));
  std::vector<RegisterPlan> in, out;
  std::vector<llvm::Type*> param_types, result_types;
  for (const ir::Value* v : op.operands) {
    in.push_back(plan_for(b_, scalar_type(v->type.element()), v->type.dtype, pack));
    param_types.insert(param_types.end(), static_cast<std::size_t>(in.back().regs.count), in.back().register_type);
  }
  for (const auto& r : op.results) {
    out.push_back(plan_for(b_, scalar_type(r->type.element()), r->type.dtype, pack));
    result_types.insert(result_types.end(), static_cast<std::size_t>(out.back().regs.count), out.back().register_type);
  }
  llvm::Type* ret = result_types.size() == 1 ? result_types[0] : llvm::StructType::get(ctx_, result_types);
  auto* fty = llvm::FunctionType::get(ret, param_types, false);
  const std::string& constraints = op.string_attr("constraints");
  if (llvm::Error e = llvm::InlineAsm::verify(fty, constraints))
    throw ProgramError(fmt::format("inline_asm_elementwise at {}: constraints \"{}\" do not fit {} result and {} argument "
                                   "registers: {}",
                                   op.loc.str(), constraints, result_types.size(), param_types.size(),
                                   llvm::toString(std::move(e))));
  llvm::InlineAsm* assembly = llvm::InlineAsm::get(fty, op.string_attr("asm"), constraints,
                                                   /*hasSideEffects=*/op.int_attr("pure") == 0);

  const std::size_t slots = get(op.operands[0]).size();
  std::vector<Elems> results(op.results.size());
  for (std::size_t first = 0; first < slots; first += static_cast<std::size_t>(pack)) {
    // Slots past the last (a thread holding fewer than `pack`) are filled with poison; their
    // results are dropped.
    std::vector<llvm::Value*> args;
    for (std::size_t i = 0; i < op.operands.size(); ++i) {
      const Elems& e = get(op.operands[i]);
      const RegisterPlan& p = in[i];
      auto element = [&](std::size_t k) {
        return first + k < e.size() ? e[first + k] : llvm::PoisonValue::get(p.element);
      };
      for (int r = 0; r < p.regs.count; ++r) {
        if (p.per_register == 1) {  // a register of the element's width: half as i16, float as itself
          args.push_back(b_.CreateBitCast(element(static_cast<std::size_t>(r)), p.register_type));
          continue;
        }
        llvm::Value* vec = llvm::PoisonValue::get(llvm::FixedVectorType::get(p.element, static_cast<unsigned>(p.per_register)));
        for (int k = 0; k < p.per_register; ++k)
          vec = b_.CreateInsertElement(vec, element(static_cast<std::size_t>(r * p.per_register + k)), static_cast<std::uint64_t>(k));
        args.push_back(b_.CreateBitCast(vec, p.register_type));
      }
    }
    llvm::Value* call = b_.CreateCall(fty, assembly, args);
    unsigned reg_index = 0;
    for (std::size_t i = 0; i < op.results.size(); ++i) {
      const RegisterPlan& p = out[i];
      for (int r = 0; r < p.regs.count; ++r, ++reg_index) {
        llvm::Value* reg = result_types.size() == 1 ? call : b_.CreateExtractValue(call, {reg_index});
        if (p.per_register == 1) {
          results[i].push_back(b_.CreateBitCast(reg, p.element));
          continue;
        }
        llvm::Value* vec = b_.CreateBitCast(reg, llvm::FixedVectorType::get(p.element, static_cast<unsigned>(p.per_register)));
        for (int k = 0; k < p.per_register; ++k) results[i].push_back(b_.CreateExtractElement(vec, static_cast<std::uint64_t>(k)));
      }
    }
  }
  for (std::size_t i = 0; i < op.results.size(); ++i) {
    results[i].resize(slots);
    set(op.result(static_cast<int>(i)), std::move(results[i]));
  }
}

}  // namespace tessera::lower
