// wgmma on sm_90a as inline PTX: LLVM 22 has intrinsics for wgmma's fence, commit_group and
// wait_group but not for wgmma.mma_async itself. The accumulators are tied operands ("+f" as
// an output and a matching input) of the mma_async and again of the wait_group, so that their
// values flow from one wgmma to the next and out through the wait: nothing reads or moves them
// while the asynchronous instruction may still write them (ptxas would otherwise serialize the
// wgmmas and warn C7515).
#include <fmt/format.h>

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "jit/lower/target.hpp"

namespace tessera::backend {
namespace {

// An inline-asm call whose first `tied.size()` operands are f32 outputs tied to the inputs `tied`,
// followed by `extra` inputs with constraints `extra_constraints`; returns the outputs.
std::vector<llvm::Value*> call_tied_asm(llvm::IRBuilder<>& b, const std::string& text, const std::vector<llvm::Value*>& tied,
                                        const std::vector<llvm::Value*>& extra, const std::vector<std::string>& extra_constraints) {
  const std::size_t n = tied.size();
  std::vector<llvm::Type*> out_types(n, b.getFloatTy());
  llvm::Type* ret = llvm::StructType::get(b.getContext(), out_types);
  std::string constraints;
  for (std::size_t i = 0; i < n; ++i) constraints += (i ? ",=f" : "=f");
  std::vector<llvm::Value*> args;
  std::vector<llvm::Type*> arg_types;
  for (std::size_t i = 0; i < extra.size(); ++i) {
    constraints += "," + extra_constraints[i];
    args.push_back(extra[i]);
    arg_types.push_back(extra[i]->getType());
  }
  for (std::size_t i = 0; i < n; ++i) {
    constraints += "," + std::to_string(i);
    args.push_back(tied[i]);
    arg_types.push_back(b.getFloatTy());
  }
  auto* fty = llvm::FunctionType::get(ret, arg_types, false);
  llvm::InlineAsm* ia = llvm::InlineAsm::get(fty, text, constraints, /*hasSideEffects=*/true);
  llvm::Value* r = b.CreateCall(fty, ia, args);
  std::vector<llvm::Value*> out;
  for (unsigned i = 0; i < n; ++i) out.push_back(b.CreateExtractValue(r, {i}));
  return out;
}

std::string register_list(std::size_t first, std::size_t count) {
  std::string s = "{";
  for (std::size_t i = 0; i < count; ++i) s += fmt::format("{}${}", i ? ", " : "", first + i);
  return s + "}";
}

}  // namespace

std::vector<llvm::Value*> nvptx_wgmma(llvm::IRBuilder<>& b, const lower::Target::Wgmma& shape, llvm::Value* desc_a,
                                      const std::vector<llvm::Value*>& a_words, llvm::Value* desc_b,
                                      const std::vector<llvm::Value*>& acc) {
  const std::size_t n = acc.size();
  const char* type = shape.bf16 ? "bf16" : "f16";
  if (!a_words.empty()) {
    // Operands: $0..$n-1 the accumulators, $n..$n+3 A's words, $n+4 B's descriptor, $n+5 the
    // scale-d flag. A from registers takes no transpose flag of its own.
    const std::string text = fmt::format(
        "{{\n.reg .pred p;\nsetp.ne.b32 p, ${}, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n{}k16.f32.{}.{} {}, {}, ${}, p, 1, 1, {};\n}}",
        n + 5, shape.n, type, type, register_list(0, n), register_list(n, 4), n + 4, shape.trans_b ? 1 : 0);
    std::vector<llvm::Value*> extra = a_words;
    extra.push_back(desc_b);
    extra.push_back(b.getInt32(shape.zero_acc ? 0 : 1));
    return call_tied_asm(b, text, acc, extra, {"r", "r", "r", "r", "l", "r"});
  }
  // Operands: $0..$n-1 the accumulators, $n and $n+1 the descriptors, $n+2 the scale-d flag
  // (1: d = a·b + d). Scales of a and b: 1; A M-major when trans_a; B N-major when trans_b.
  const std::string text = fmt::format(
      "{{\n.reg .pred p;\nsetp.ne.b32 p, ${}, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n{}k16.f32.{}.{} {}, ${}, ${}, p, 1, 1, {}, {};\n}}",
      n + 2, shape.n, type, type, register_list(0, n), n, n + 1, shape.trans_a ? 1 : 0, shape.trans_b ? 1 : 0);
  return call_tied_asm(b, text, acc, {desc_a, desc_b, b.getInt32(shape.zero_acc ? 0 : 1)}, {"l", "l", "r"});
}

std::vector<llvm::Value*> nvptx_wgmma_wait(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& acc, int pending) {
  if (acc.empty()) {
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_wgmma_wait_group_sync_aligned, {}, {b.getInt64(static_cast<std::uint64_t>(pending))});
    return {};
  }
  return call_tied_asm(b, fmt::format("wgmma.wait_group.sync.aligned {};", pending), acc, {}, {});
}

// `v` (i64) copied by a mov that LLVM cannot see through: its known bits are hidden from the
// optimizer (Target::wgmma_descriptor_base), and ptxas removes the copy. No side effects and no
// memory access, so LLVM may still move, merge or drop it.
llvm::Value* nvptx_opaque_copy(llvm::IRBuilder<>& b, llvm::Value* v) {
  auto* fty = llvm::FunctionType::get(v->getType(), {v->getType()}, false);
  llvm::CallInst* copy = b.CreateCall(fty, llvm::InlineAsm::get(fty, "mov.b64 $0, $1;", "=l,l", /*hasSideEffects=*/false), {v});
  copy->setDoesNotAccessMemory();
  copy->setDoesNotThrow();
  return copy;
}

}  // namespace tessera::backend
