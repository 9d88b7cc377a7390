// Predicated global loads and stores for the NVPTX target, written as inline PTX the way Triton
// writes them:
//   @$5 ld.global.v4.b32 { $0, $1, $2, $3 }, [ $4 + 0 ];   outputs tied to `other` ("0".."3")
//   @$5 st.global.v4.b32 [ $0 + 0 ], { $1, $2, $3, $4 };
// The default of the Target interface branches around a plain load; LLVM then keeps one branch
// per vector (it cannot if-convert a load that may fault), which splits the kernel into many
// small blocks and stops ptxas from batching the loads. A predicated instruction keeps the kernel
// one straight line, so a memory-bound kernel issues all its loads back to back. A load or store
// with cache or eviction hints (ts::LoadHints / ts::StoreHints) is asm too, masked or not:
//   ld.global.cg.v4.b32 ...;   @$2 st.global.L1::evict_first.b32 [ $0 + 0 ], $1;
#include <optional>
#include <string>
#include <vector>

#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/Support/MathExtras.h>

#include "jit/lower/target.hpp"

namespace tessera::backend {
namespace {

// How one access splits into PTX registers ("words"). Element values are first viewed as their
// in-memory integers or floats (i1 is a byte, a pointer is an i64), then the whole access is
// bitcast to `words` registers of `word_bytes` each: an access of 16 bytes of halves is
// v4.b32, because PTX vectors have at most 4 elements.
struct AccessShape {
  llvm::Type* elem = nullptr;      // the value's scalar type
  llvm::Type* mem_elem = nullptr;  // that element as stored: i1 -> i8, ptr -> i64, else elem
  unsigned lanes = 1;              // vector width, 1 for a scalar
  unsigned word_bytes = 0;         // 1, 2, 4 or 8
  unsigned words = 0;              // 1, 2 or 4
  unsigned total_bytes() const { return word_bytes * words; }
};

std::optional<AccessShape> access_shape(llvm::Type* type) {
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(type);
  AccessShape s;
  s.elem = vt != nullptr ? vt->getElementType() : type;
  s.lanes = vt != nullptr ? vt->getNumElements() : 1;
  llvm::LLVMContext& ctx = type->getContext();
  if (s.elem->isIntegerTy(1)) {
    s.mem_elem = llvm::Type::getInt8Ty(ctx);
  } else if (s.elem->isPointerTy()) {
    // tessera's pointers live in the global space, 64 bits wide on nvptx64.
    if (s.elem->getPointerAddressSpace() != 1) return std::nullopt;
    s.mem_elem = llvm::Type::getInt64Ty(ctx);
  } else if (s.elem->isIntegerTy(8) || s.elem->isIntegerTy(16) || s.elem->isIntegerTy(32) ||
             s.elem->isIntegerTy(64) || s.elem->isHalfTy() || s.elem->isBFloatTy() || s.elem->isFloatTy() ||
             s.elem->isDoubleTy()) {
    s.mem_elem = s.elem;
  } else {
    return std::nullopt;
  }
  const unsigned elem_bytes = s.mem_elem->getPrimitiveSizeInBits() / 8;
  const unsigned total = elem_bytes * s.lanes;
  if (total > 16 || !llvm::isPowerOf2_32(total)) return std::nullopt;
  s.word_bytes = elem_bytes == 8 ? 8 : std::min(total, 4u);
  s.words = total / s.word_bytes;
  return s;
}

// The LLVM type of one register operand: PTX has no 8-bit registers, so a byte travels in a
// 16-bit one ("h"), as LLVM's own code generation does for i8.
llvm::Type* register_type(llvm::LLVMContext& ctx, const AccessShape& s) {
  return llvm::Type::getIntNTy(ctx, s.word_bytes == 1 ? 16 : s.word_bytes * 8);
}

const char* register_constraint(const AccessShape& s) {
  switch (s.word_bytes) {
    case 1:
    case 2: return "h";
    case 4: return "r";
    default: return "l";
  }
}

llvm::Type* mem_vector_type(const AccessShape& s) {
  return s.lanes == 1 ? s.mem_elem : llvm::FixedVectorType::get(s.mem_elem, s.lanes);
}

llvm::Type* packed_type(llvm::LLVMContext& ctx, const AccessShape& s) {
  llvm::Type* word = llvm::Type::getIntNTy(ctx, s.word_bytes * 8);
  return s.words == 1 ? word : llvm::FixedVectorType::get(word, s.words);
}

// `v` (of the access type) as the register operands of the asm.
std::vector<llvm::Value*> to_registers(llvm::IRBuilder<>& b, const AccessShape& s, llvm::Value* v) {
  llvm::Type* mem = mem_vector_type(s);
  if (s.elem->isIntegerTy(1)) v = b.CreateZExt(v, mem);
  if (s.elem->isPointerTy()) v = b.CreatePtrToInt(v, mem);
  llvm::Value* packed = b.CreateBitCast(v, packed_type(b.getContext(), s));
  std::vector<llvm::Value*> regs;
  for (unsigned i = 0; i < s.words; ++i) {
    llvm::Value* w = s.words == 1 ? packed : b.CreateExtractElement(packed, b.getInt32(i));
    // Only the low byte is stored; a poison high byte spares the zero-extension.
    if (s.word_bytes == 1)
      w = b.CreateBitCast(b.CreateInsertElement(llvm::PoisonValue::get(llvm::FixedVectorType::get(b.getInt8Ty(), 2)),
                                                w, b.getInt32(0)),
                          b.getInt16Ty());
    regs.push_back(w);
  }
  return regs;
}

// The inverse of to_registers: the asm's results back as a value of the access type.
llvm::Value* from_registers(llvm::IRBuilder<>& b, const AccessShape& s, const std::vector<llvm::Value*>& regs,
                            llvm::Type* type) {
  llvm::Type* packed_ty = packed_type(b.getContext(), s);
  llvm::Value* packed = s.words == 1 ? nullptr : llvm::PoisonValue::get(packed_ty);
  for (unsigned i = 0; i < s.words; ++i) {
    llvm::Value* w = s.word_bytes == 1 ? b.CreateTrunc(regs[i], b.getInt8Ty()) : regs[i];
    packed = s.words == 1 ? w : b.CreateInsertElement(packed, w, b.getInt32(i));
  }
  llvm::Value* v = b.CreateBitCast(packed, mem_vector_type(s));
  // LLVM's i1 in memory is 0 or 1; a byte written by the host as `bool` is the same.
  if (s.elem->isIntegerTy(1)) v = b.CreateTrunc(v, type);
  if (s.elem->isPointerTy()) v = b.CreateIntToPtr(v, type);
  return v;
}

// "$0" or "{ $0, $1, $2, $3 }".
std::string register_list(unsigned first, unsigned count) {
  if (count == 1) return "$" + std::to_string(first);
  std::string s = "{ ";
  for (unsigned i = 0; i < count; ++i) s += (i ? ", $" : "$") + std::to_string(first + i);
  return s + " }";
}

// ".v4.b32", ".b16", ".b8": a byte access keeps .b8 although its register is 16 bits wide.
std::string ptx_access_type(const AccessShape& s) {
  std::string t = s.words == 1 ? "" : ".v" + std::to_string(s.words);
  return t + ".b" + std::to_string(s.word_bytes * 8);
}

// ".cg" or ".L1::evict_last": the hints as PTX qualifiers (PTX takes a cache operator or an
// eviction priority, not both: the verifier refuses the pair).
std::string hint_qualifiers(const lower::AccessHints& h) {
  if (!h.cache.empty()) return "." + h.cache;
  if (!h.eviction.empty()) return ".L1::" + h.eviction;
  return "";
}

// Whether the inline form applies: a shape PTX can move in one instruction, at a global pointer,
// aligned to the whole access (ld.global.v4 faults on a misaligned address).
std::optional<AccessShape> inline_shape(llvm::Type* type, llvm::Value* ptr, unsigned align) {
  auto s = access_shape(type);
  if (!s || !ptr->getType()->isPointerTy() || ptr->getType()->getPointerAddressSpace() != 1) return std::nullopt;
  if (align < s->total_bytes()) return std::nullopt;
  return s;
}

}  // namespace

// Null when the inline form does not apply; the caller then uses the Target default.
llvm::Value* nvptx_predicated_load(llvm::IRBuilder<>& b, llvm::Type* type, llvm::Value* ptr, llvm::Value* pred,
                                   llvm::Value* other, unsigned align, const lower::AccessHints& hints) {
  // A known mask needs no predicate; the asm would hide that from LLVM's folding. A load with hints
  // stays asm (LLVM's load has no cache operator), without a predicate where the mask is all true.
  auto* known = llvm::dyn_cast<llvm::ConstantInt>(pred);
  if (known && !known->isOne()) return other;
  if (known && hints.empty()) return b.CreateAlignedLoad(type, ptr, llvm::MaybeAlign(align));
  const auto s = inline_shape(type, ptr, align);
  if (!s) return nullptr;
  llvm::LLVMContext& ctx = b.getContext();
  llvm::Type* reg = register_type(ctx, *s);

  // Operands: $0..$n-1 the results, $n the address, then (masked) $n+1 the predicate and `other`
  // tied to the results, so a lane whose predicate is false keeps `other` without a select.
  const unsigned n = s->words;
  const bool masked = known == nullptr;
  const std::string asm_text = (masked ? "@$" + std::to_string(n + 1) + " " : std::string()) + "ld.global" +
                               hint_qualifiers(hints) + ptx_access_type(*s) + " " + register_list(0, n) + ", [ $" +
                               std::to_string(n) + " + 0 ];";
  std::string constraints;
  for (unsigned i = 0; i < n; ++i) constraints += std::string("=") + register_constraint(*s) + ",";
  constraints += "l";
  std::vector<llvm::Type*> arg_types{ptr->getType()};
  std::vector<llvm::Value*> args{ptr};
  if (masked) {
    constraints += ",b";
    for (unsigned i = 0; i < n; ++i) constraints += "," + std::to_string(i);
    arg_types.push_back(b.getInt1Ty());
    args.push_back(pred);
    for (llvm::Value* v : to_registers(b, *s, other)) {
      arg_types.push_back(reg);
      args.push_back(v);
    }
  }
  llvm::Type* ret = n == 1 ? reg : llvm::StructType::get(ctx, std::vector<llvm::Type*>(n, reg));
  auto* fty = llvm::FunctionType::get(ret, arg_types, false);
  // Side effects, as Triton marks its loads: the asm must stay ordered with stores and barriers.
  llvm::Value* call = b.CreateCall(llvm::InlineAsm::get(fty, asm_text, constraints, /*hasSideEffects=*/true), args);
  std::vector<llvm::Value*> regs;
  for (unsigned i = 0; i < n; ++i) regs.push_back(n == 1 ? call : b.CreateExtractValue(call, i));
  return from_registers(b, *s, regs, type);
}

// False when the inline form does not apply; the caller then uses the Target default.
bool nvptx_predicated_store(llvm::IRBuilder<>& b, llvm::Value* value, llvm::Value* ptr, llvm::Value* pred,
                            unsigned align, const lower::AccessHints& hints) {
  auto* known = llvm::dyn_cast<llvm::ConstantInt>(pred);
  if (known && !known->isOne()) return true;  // never stores
  if (known && hints.empty()) {
    b.CreateAlignedStore(value, ptr, llvm::MaybeAlign(align));
    return true;
  }
  const auto s = inline_shape(value->getType(), ptr, align);
  if (!s) return false;
  const unsigned n = s->words;
  const bool masked = known == nullptr;
  const std::string asm_text = (masked ? "@$" + std::to_string(n + 1) + " " : std::string()) + "st.global" +
                               hint_qualifiers(hints) + ptx_access_type(*s) + " [ $0 + 0 ], " + register_list(1, n) + ";";
  std::string constraints = "l";
  for (unsigned i = 0; i < n; ++i) constraints += std::string(",") + register_constraint(*s);
  if (masked) constraints += ",b";

  llvm::Type* reg = register_type(b.getContext(), *s);
  std::vector<llvm::Type*> arg_types{ptr->getType()};
  std::vector<llvm::Value*> args{ptr};
  for (llvm::Value* v : to_registers(b, *s, value)) {
    arg_types.push_back(reg);
    args.push_back(v);
  }
  if (masked) {
    arg_types.push_back(b.getInt1Ty());
    args.push_back(pred);
  }
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), arg_types, false);
  b.CreateCall(llvm::InlineAsm::get(fty, asm_text, constraints, /*hasSideEffects=*/true), args);
  return true;
}

}  // namespace tessera::backend
