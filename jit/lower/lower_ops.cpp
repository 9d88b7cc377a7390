// Per-element operations, data movement and memory accesses of the tile-IR -> LLVM IR lowering.
#include <fmt/format.h>

#include <llvm/IR/Intrinsics.h>

#include "jit/analysis/register_conversion.hpp"
#include "jit/lower/lowering.hpp"
#include "tessera/error.hpp"

namespace tessera::lower {
using ir::DType;
using ir::Op;
using ir::OpKind;
using I = std::int64_t;

namespace {
bool is_f16ish(DType d) { return d == DType::F16 || d == DType::BF16; }

// An integer of more than 24 bits as an f32 "rounded to odd": the bits below f32's significand fold
// into a sticky last bit, so that rounding the result to bf16 (8 bits) rounds as the integer itself
// would, once (ops.def; the interpreter's rule). A plain sitofp to bfloat is what LLVM legalizes
// through a rounded f32 where the target has no direct conversion (x86; NVPTX before sm_90), and
// that rounds twice: 2^31 - 2^22 - 1 became 2^31 instead of 2^31 - 2^23 (found by the host target).
llvm::Value* int_to_f32_round_to_odd(llvm::IRBuilder<>& b, llvm::Value* x, bool is_unsigned) {
  llvm::Type* t = x->getType();
  auto c = [&](std::uint64_t v) { return llvm::ConstantInt::get(t, v); };
  llvm::Value* neg = is_unsigned ? b.getFalse() : b.CreateICmpSLT(x, c(0));
  llvm::Value* mag = b.CreateSelect(neg, b.CreateNeg(x), x);  // MIN stays 2^(bits-1), unsigned
  llvm::Value* width = b.CreateSub(c(t->getIntegerBitWidth()), b.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, mag, b.getFalse()));
  llvm::Value* drop = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b.CreateSub(width, c(24)), c(0));
  llvm::Value* low = b.CreateAnd(mag, b.CreateSub(b.CreateShl(c(1), drop), c(1)));
  llvm::Value* kept = b.CreateOr(b.CreateLShr(mag, drop), b.CreateZExt(b.CreateICmpNE(low, c(0)), t));
  // kept has at most 24 bits (exact in f32); 2^drop is exact too: f32 exponent field 127 + drop.
  llvm::Value* scale = b.CreateBitCast(b.CreateShl(b.CreateAdd(b.CreateTrunc(drop, b.getInt32Ty()), b.getInt32(127)), 23),
                                       b.getFloatTy());
  llvm::Value* f = b.CreateFMul(b.CreateUIToFP(kept, b.getFloatTy()), scale);
  return b.CreateSelect(neg, b.CreateFNeg(f), f);
}

// How a div rounds: "rn" (IEEE), "approx" (fast_dividef) or "" (`/`: the target's choice).
std::string division_rounding(const ir::Op& op) { return op.has_attr("rounding") ? op.string_attr("rounding") : ""; }

}  // namespace

void KernelLowering::lower_elementwise(const Op& op) {
  const ir::Value* res = op.result();
  std::size_t n = get(op.operands[0]).size();
  Elems out(n);
  const bool check_overflow = checks_overflow(op);
  const std::string rounding = division_rounding(op);
  Elems overflowed;
  for (std::size_t s = 0; s < n; ++s) {
    auto arg = [&](int i) { return get(op.operands[i])[s]; };
    switch (op.info().category) {
      case ir::OpCategory::Binary:
        if (check_overflow) {
          auto [value, overflow] = checked_binary(op.kind, arg(0), arg(1));
          out[s] = value;
          overflowed.push_back(overflow);
        } else {
          out[s] = op.kind == OpKind::Pow ? lower_math(op, {arg(0), arg(1)})
                                          : lower_binary(op.kind, res->type.dtype, arg(0), arg(1), rounding);
        }
        break;
      case ir::OpCategory::Compare:
        out[s] = lower_compare(op.kind, op.operands[0]->type.dtype, arg(0), arg(1));
        break;
      case ir::OpCategory::Unary:
        if (op.kind == OpKind::Cast && op.has_attr("rounding"))
          out[s] = lower_cast_toward_zero(op.operands[0]->type, arg(0), res->type);
        else if (op.kind == OpKind::Cast) out[s] = lower_cast(op.operands[0]->type, res->type, arg(0));
        // Pointers are opaque in LLVM (one address space per kernel): a pointer bitcast is no instruction.
        else if (op.kind == OpKind::Bitcast) out[s] = res->type.is_ptr() ? arg(0) : b_.CreateBitCast(arg(0), scalar_type(res->type.element()));
        else if (op.kind == OpKind::Assume) out[s] = arg(0);  // a promise for axis analysis, no instruction
        else out[s] = lower_unary(op, arg(0));
        break;
      default:
        if (op.kind == OpKind::Select) {
          out[s] = b_.CreateSelect(arg(0), arg(1), arg(2));
        } else if (op.kind == OpKind::Fma) {
          out[s] = lower_math(op, {arg(0), arg(1), arg(2)});
        } else if (op.kind == OpKind::AddPtr) {
          out[s] = b_.CreateGEP(scalar_type(ir::Type::scalar(res->type.pointee)), arg(0), arg(1));
        } else {
          throw InternalError(fmt::format("lowering: no rule for op '{}' at {}", op.name(), op.loc.str()));
        }
    }
  }
  if (check_overflow) report_overflow(op, overflowed);
  set(res, std::move(out));
}

llvm::Value* KernelLowering::lower_binary(OpKind k, DType d, llvm::Value* a, llvm::Value* b, const std::string& rounding) {
  const bool fp = ir::is_float(d), uns = ir::is_unsigned(d);
  auto intrinsic = [&](llvm::Intrinsic::ID id) { return b_.CreateBinaryIntrinsic(id, a, b); };
  switch (k) {
    case OpKind::Add: return fp ? b_.CreateFAdd(a, b) : b_.CreateAdd(a, b);
    case OpKind::Sub: return fp ? b_.CreateFSub(a, b) : b_.CreateSub(a, b);
    case OpKind::Mul: return fp ? b_.CreateFMul(a, b) : b_.CreateMul(a, b);
    case OpKind::Div:
      if (fp) {
        // LLVM's fdiv is IEEE division on every target; a target may lower `/` faster (NVIDIA's
        // div.full.f32), and fast_dividef faster still (div.approx.ftz.f32), except where the op
        // asks for the correctly rounded result.
        if (rounding != "rn")
          if (llvm::Value* r = target_.math_binary(b_, rounding == "approx" ? "fdiv_approx" : "fdiv", a, b)) return r;
        return b_.CreateFDiv(a, b);
      }
      return uns ? b_.CreateUDiv(a, b) : b_.CreateSDiv(a, b);
    case OpKind::Rem:
      if (fp) return lower_float_rem(a, b);
      return uns ? b_.CreateURem(a, b) : b_.CreateSRem(a, b);
    case OpKind::And: return b_.CreateAnd(a, b);
    case OpKind::Or: return b_.CreateOr(a, b);
    case OpKind::Xor: return b_.CreateXor(a, b);
    case OpKind::Shl:
    case OpKind::Shr: {
      // Shift amounts are taken modulo the bit width (ops.def), which LLVM leaves undefined.
      unsigned bits = a->getType()->getIntegerBitWidth();
      llvm::Value* amount = b_.CreateURem(b, llvm::ConstantInt::get(b->getType(), bits));
      if (k == OpKind::Shl) return b_.CreateShl(a, amount);
      return uns ? b_.CreateLShr(a, amount) : b_.CreateAShr(a, amount);
    }
    case OpKind::Min: return intrinsic(fp ? llvm::Intrinsic::minnum : uns ? llvm::Intrinsic::umin : llvm::Intrinsic::smin);
    case OpKind::Max: return intrinsic(fp ? llvm::Intrinsic::maxnum : uns ? llvm::Intrinsic::umax : llvm::Intrinsic::smax);
    default: throw InternalError("lowering: not a binary op");
  }
}

// Float %: C's fmod, exact (ops.def). The target's own where it has an exact one (libdevice's
// __nv_fmodf), else tessera's (exact_fmod.cpp); f16 and bf16 through f32, where fmod is exact too.
llvm::Value* KernelLowering::lower_float_rem(llvm::Value* a, llvm::Value* b) {
  llvm::Type* t = a->getType();
  if (t->isHalfTy() || t->isBFloatTy())
    return b_.CreateFPTrunc(lower_float_rem(b_.CreateFPExt(a, b_.getFloatTy()), b_.CreateFPExt(b, b_.getFloatTy())), t);
  if (llvm::Value* r = target_.math_binary(b_, "fmod", a, b)) return r;
  return exact_fmod(b_, a, b);
}

llvm::Value* KernelLowering::lower_compare(OpKind k, DType d, llvm::Value* a, llvm::Value* b) {
  using P = llvm::CmpInst::Predicate;
  if (ir::is_float(d)) {
    P p = k == OpKind::CmpEq ? P::FCMP_OEQ : k == OpKind::CmpNe ? P::FCMP_UNE : k == OpKind::CmpLt ? P::FCMP_OLT
        : k == OpKind::CmpLe ? P::FCMP_OLE : k == OpKind::CmpGt ? P::FCMP_OGT : P::FCMP_OGE;
    return b_.CreateFCmp(p, a, b);
  }
  const bool uns = ir::is_unsigned(d) || d == DType::Ptr;
  P p = k == OpKind::CmpEq ? P::ICMP_EQ : k == OpKind::CmpNe ? P::ICMP_NE
      : k == OpKind::CmpLt ? (uns ? P::ICMP_ULT : P::ICMP_SLT) : k == OpKind::CmpLe ? (uns ? P::ICMP_ULE : P::ICMP_SLE)
      : k == OpKind::CmpGt ? (uns ? P::ICMP_UGT : P::ICMP_SGT) : (uns ? P::ICMP_UGE : P::ICMP_SGE);
  return b_.CreateICmp(p, a, b);
}

llvm::Value* KernelLowering::lower_unary(const Op& op, llvm::Value* x) {
  DType d = op.result()->type.dtype;
  switch (op.kind) {
    case OpKind::Neg: return ir::is_float(d) ? b_.CreateFNeg(x) : b_.CreateNeg(x);
    case OpKind::Not: return b_.CreateNot(x);
    case OpKind::Abs:
      if (ir::is_float(d)) return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
      if (ir::is_unsigned(d)) return x;
      return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b_.getFalse());
    case OpKind::Exp:
    case OpKind::Log:
    case OpKind::Sqrt: {
      if (!ir::is_float(d)) throw ProgramError(fmt::format("{} needs a floating-point tile, at {}", op.name(), op.loc.str()));
      // f16/bf16 math runs in f32 and rounds back, as the device does.
      llvm::Value* v = is_f16ish(d) ? b_.CreateFPExt(x, b_.getFloatTy()) : x;
      llvm::Value* r = target_math(op, v);  // exp {ftz} (fast_expf): the flushing form
      if (!r) {
        auto id = op.kind == OpKind::Exp ? llvm::Intrinsic::exp : op.kind == OpKind::Log ? llvm::Intrinsic::log : llvm::Intrinsic::sqrt;
        r = b_.CreateUnaryIntrinsic(id, v);
      }
      return is_f16ish(d) ? b_.CreateFPTrunc(r, x->getType()) : r;
    }
    case OpKind::Exp2: case OpKind::Log2: case OpKind::Rsqrt: case OpKind::Sin: case OpKind::Cos:
    case OpKind::Tanh: case OpKind::Sigmoid: case OpKind::Erf: case OpKind::Floor: case OpKind::Ceil:
      return lower_math(op, {x});
    default: throw InternalError(fmt::format("lowering: no rule for unary op '{}'", op.name()));
  }
}

llvm::Value* KernelLowering::lower_cast(const ir::Type& from, const ir::Type& to, llvm::Value* x) {
  llvm::Type* ty = scalar_type(to.element());
  const DType f = from.dtype, t = to.dtype;
  if (f == t) return x;
  if (ir::is_fp8(f) || ir::is_fp8(t)) return lower_fp8_cast(from, to, x, /*toward_zero=*/false);
  if (t == DType::I1) {
    return ir::is_float(f) ? b_.CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0.0))
                           : b_.CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
  }
  if (ir::is_float(f) && ir::is_float(t)) {
    if (ir::dtype_bits(f) == ir::dtype_bits(t)) return b_.CreateFPTrunc(b_.CreateFPExt(x, b_.getFloatTy()), ty);  // f16<->bf16
    return ir::dtype_bits(t) > ir::dtype_bits(f) ? b_.CreateFPExt(x, ty) : b_.CreateFPTrunc(x, ty);
  }
  if (ir::is_float(f)) {
    // Saturating, NaN -> 0 (ops.def); llvm.fpto[su]i.sat say exactly that.
    auto id = ir::is_unsigned(t) ? llvm::Intrinsic::fptoui_sat : llvm::Intrinsic::fptosi_sat;
    return b_.CreateIntrinsic(id, {ty, x->getType()}, {x});
  }
  if (ir::is_float(t)) {
    // f16 needs no such care: an integer too wide for f32 is far beyond f16's range (inf either way).
    if (t == DType::BF16 && ir::dtype_bits(f) > 24) return b_.CreateFPTrunc(int_to_f32_round_to_odd(b_, x, ir::is_unsigned(f)), ty);
    return ir::is_unsigned(f) ? b_.CreateUIToFP(x, ty) : b_.CreateSIToFP(x, ty);
  }
  return b_.CreateIntCast(x, ty, /*isSigned=*/!ir::is_unsigned(f));
}

// A float downcast toward zero (cast {rounding = "rtz"}; ops.def): the nearest value, stepped to
// its neighbour toward zero when that is farther from zero than x. The finite floats of one sign
// are ordered as their bits, so the neighbour is the bits minus one; NaN compares false and stays.
// The same rule as the interpreter's, in the IR of every target.
llvm::Value* KernelLowering::lower_cast_toward_zero(const ir::Type& from, llvm::Value* x, const ir::Type& to) {
  if (ir::is_fp8(to.dtype)) return lower_fp8_cast(from, to, x, /*toward_zero=*/true);  // saturates too
  llvm::Value* nearest = b_.CreateFPTrunc(x, scalar_type(to.element()));
  llvm::Value* back = b_.CreateFPExt(nearest, x->getType());
  auto magnitude = [&](llvm::Value* v) { return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v); };
  llvm::Value* farther = b_.CreateFCmpOGT(magnitude(back), magnitude(x));
  llvm::Type* bits = b_.getIntNTy(nearest->getType()->getPrimitiveSizeInBits());
  llvm::Value* inward = b_.CreateBitCast(b_.CreateSub(b_.CreateBitCast(nearest, bits), llvm::ConstantInt::get(bits, 1)),
                                         nearest->getType());
  return b_.CreateSelect(farther, inward, nearest);
}

void KernelLowering::lower_arange(const Op& op) {
  const auto& t = op.result()->type;
  auto dist = analysis::distribute(t);
  const int d = dist.slice_dim == 0 ? 1 : 0;  // the parent dim that holds the range
  llvm::Value* base = thread_base(t)[d];
  const I start = op.int_attr("start");
  Elems out;
  for (I k = 0; k < dist.num_slots(); ++k) {
    I off = dist.offset(d, dist.slot_coords(k)[d]);
    llvm::Value* idx = b_.CreateAnd(b_.CreateAdd(base, b_.getInt32(static_cast<std::uint32_t>(off))),
                                    b_.getInt32(static_cast<std::uint32_t>(dist.shape[d] - 1)));
    out.push_back(b_.CreateAdd(idx, b_.getInt32(static_cast<std::uint32_t>(start))));
  }
  set(op.result(), std::move(out));
}

void KernelLowering::lower_broadcast(const Op& op) {
  // Same layout, operand dims of size 1 hold one slot: result slot (j_0..j_r) reads operand slot
  // (j_d, or 0 where the operand is broadcast).
  const auto& src_t = op.operands[0]->type;
  if (!(src_t.layout == op.result()->type.layout)) throw InternalError("broadcast operand not in the result's layout");
  auto out_d = analysis::distribute(op.result()->type);
  auto in_d = analysis::distribute(src_t);
  const Elems& in = get(op.operands[0]);
  Elems out;
  for (I k = 0; k < out_d.num_slots(); ++k) {
    auto c = out_d.slot_coords(k);
    for (std::size_t d = 0; d < c.size(); ++d)
      if (in_d.slots[d] == 1) c[d] = 0;
    out.push_back(in[in_d.slot_index(c)]);
  }
  set(op.result(), std::move(out));
}

void KernelLowering::lower_convert_layout(const Op& op) {
  // A renaming of registers where the layouts allow (analysis::register_renaming), else through
  // shared memory: every thread writes what it owns at the element's row-major index,
  // then every thread reads what it owns in the new layout (the region is this op's own, or a
  // finished ring's: shared_memory.hpp). Rows are padded as analysis::convert_row_pad says; with
  // 16-byte padding, runs of elements along a row move as one vector each way.
  const auto& src_t = op.operands[0]->type;
  const auto& dst_t = op.result()->type;
  llvm::Type* elem = scalar_type(dst_t.element());
  if (dst_t.dtype == DType::I1) elem = b_.getInt8Ty();
  const I row = dst_t.shape.back(), pad = analysis::convert_row_pad(op);
  const I src_run = pad > 1 ? analysis::row_run(src_t) : 1, dst_run = pad > 1 ? analysis::row_run(dst_t) : 1;
  const I esz = ir::dtype_bytes(dst_t.dtype);
  auto at = [&](llvm::Value* lin) {
    llvm::Value* padded = b_.CreateAdd(lin, b_.CreateMul(b_.CreateUDiv(lin, b_.getInt32(static_cast<std::uint32_t>(row))),
                                                         b_.getInt32(static_cast<std::uint32_t>(pad))));
    return b_.CreateGEP(elem, scratch(op), padded);
  };
  auto vector_type = [&](I run) { return llvm::FixedVectorType::get(elem, static_cast<unsigned>(run)); };
  auto align = [&](I run) { return llvm::Align(static_cast<std::uint64_t>(run * esz)); };
  const Elems& in = get(op.operands[0]);
  if (const auto renaming = analysis::register_renaming(src_t, dst_t)) {
    Elems out;  // every thread already holds what it needs
    for (std::int64_t r : *renaming) out.push_back(in.at(static_cast<std::size_t>(r)));
    set(op.result(), std::move(out));
    return;
  }
  shared_phase(op, 0);
  for (I k = 0; k < static_cast<I>(in.size()); k += src_run) {
    if (src_run == 1) {
      llvm::Value* v = dst_t.dtype == DType::I1 ? b_.CreateZExt(in[k], elem) : in[k];
      b_.CreateStore(v, at(element_linear_index(src_t, k)));
      continue;
    }
    llvm::Value* vec = vector_of(in, k, src_run);  // before the address: argument order is unspecified
    b_.CreateAlignedStore(vec, at(element_linear_index(src_t, k)), align(src_run));
  }
  shared_phase(op, 1);
  Elems out;
  for (I k = 0; k < analysis::distribute(dst_t).num_slots(); k += dst_run) {
    if (dst_run == 1) {
      llvm::Value* v = b_.CreateLoad(elem, at(element_linear_index(dst_t, k)));
      out.push_back(dst_t.dtype == DType::I1 ? b_.CreateTrunc(v, b_.getInt1Ty()) : v);
      continue;
    }
    llvm::Value* vec = b_.CreateAlignedLoad(vector_type(dst_run), at(element_linear_index(dst_t, k)), align(dst_run));
    for (I j = 0; j < dst_run; ++j) out.push_back(b_.CreateExtractElement(vec, static_cast<std::uint64_t>(j)));
  }
  set(op.result(), std::move(out));
}

llvm::Value* KernelLowering::vector_of(const Elems& elems, I first, I count) {
  llvm::Value* vec = llvm::PoisonValue::get(llvm::FixedVectorType::get(elems.at(static_cast<std::size_t>(first))->getType(),
                                                                      static_cast<unsigned>(count)));
  for (I j = 0; j < count; ++j)
    vec = b_.CreateInsertElement(vec, elems[static_cast<std::size_t>(first + j)], static_cast<std::uint64_t>(j));
  return vec;
}

llvm::Value* KernelLowering::element_linear_index(const ir::Type& t, I k) {
  auto dist = analysis::distribute(t);
  const auto& base = thread_base(t);
  auto c = dist.slot_coords(k);
  llvm::Value* lin = b_.getInt32(0);
  for (int d = 0; d < static_cast<int>(dist.shape.size()); ++d) {
    llvm::Value* idx = b_.CreateAnd(b_.CreateAdd(base[d], b_.getInt32(static_cast<std::uint32_t>(dist.offset(d, c[d])))),
                                    b_.getInt32(static_cast<std::uint32_t>(dist.shape[d] - 1)));
    lin = b_.CreateAdd(b_.CreateMul(lin, b_.getInt32(static_cast<std::uint32_t>(dist.shape[d]))), idx);
  }
  return lin;
}

std::vector<std::vector<I>> KernelLowering::access_groups(const ir::Value* ptr, const ir::Value* mask) {
  // Slots accessed as one vector: w consecutive elements along the layout's fastest dim (order[0]),
  // w the widest power of two that the layout keeps in one thread, that axis info proves
  // contiguous and aligned, over which the mask is constant, and at most 16 bytes.
  const I n = static_cast<I>(get(ptr).size());
  std::vector<std::vector<I>> groups;
  auto singles = [&] {
    for (I k = 0; k < n; ++k) groups.push_back({k});
    return groups;
  };
  if (!ptr->type.is_tile()) return singles();
  const auto dist = analysis::distribute(ptr->type);
  const int pd = dist.layout.order[0];
  if (pd == dist.slice_dim) return singles();
  const int vd = pd - (dist.slice_dim >= 0 && dist.slice_dim < pd ? 1 : 0);
  const I esz = ir::dtype_bytes(ptr->type.pointee);
  const auto& pinfo = axis_.get(ptr);
  I v = std::min<I>(dist.layout.size_per_thread[pd], dist.slots[pd]);
  v = std::min({v, pinfo.contig(vd), pinfo.div(vd) / esz, I{16} / esz});
  if (mask) v = std::min(v, axis_.get(mask).cnst(vd));
  I w = 1;
  while (w * 2 <= v) w *= 2;
  if (w == 1) return singles();
  I stride = 1;
  for (int d = pd + 1; d < static_cast<int>(dist.slots.size()); ++d) stride *= dist.slots[d];
  for (I k = 0; k < n; ++k) {
    if (dist.slot_coords(k)[pd] % w != 0) continue;
    std::vector<I> g;
    for (I i = 0; i < w; ++i) g.push_back(k + i * stride);
    groups.push_back(std::move(g));
  }
  return groups;
}

namespace {
// The op's `cache` and `eviction` attrs (ops.def `load`/`store`).
AccessHints access_hints(const Op& op) {
  AccessHints h;
  if (op.has_attr("cache")) h.cache = op.string_attr("cache");
  if (op.has_attr("eviction")) h.eviction = op.string_attr("eviction");
  return h;
}
}  // namespace

void KernelLowering::lower_load(const Op& op) {
  const ir::Value* res = op.result();
  // Memory holds a bool as one byte: access i8 and convert, so that vectors of bools are bytes.
  const bool is_bool = res->type.dtype == DType::I1;
  llvm::Type* elem = is_bool ? b_.getInt8Ty() : scalar_type(res->type.element());
  const Elems& ptrs = get(op.operands[0]);
  const ir::Value* mask_v = op.operands.size() > 1 ? op.operands[1] : nullptr;
  const Elems* mask = mask_v ? &get(mask_v) : nullptr;
  const Elems* other = op.operands.size() > 2 ? &get(op.operands[2]) : nullptr;
  const AccessHints hints = access_hints(op);
  Elems out(ptrs.size());
  // Each element, so that a failure names the element, not its vector's first.
  check_bounds(op, "load", op.operands[0]->type, ptrs, mask, ir::dtype_bytes(res->type.dtype));
  for (const auto& g : access_groups(op.operands[0], mask_v)) {
    const int w = static_cast<int>(g.size());
    const unsigned align = static_cast<unsigned>(w * ir::dtype_bytes(res->type.dtype));
    llvm::Type* vty = w == 1 ? elem : llvm::FixedVectorType::get(elem, w);
    auto to_memory = [&](llvm::Value* v) { return is_bool ? b_.CreateZExt(v, elem) : v; };
    llvm::Value* loaded;
    if (!mask && hints.empty()) {
      loaded = b_.CreateAlignedLoad(vty, ptrs[g[0]], llvm::MaybeAlign(align));
    } else if (!mask) {  // the target's form carries the hints; an all-true mask needs no predicate
      loaded = target_.predicated_load(b_, vty, ptrs[g[0]], b_.getTrue(), llvm::PoisonValue::get(vty), align, hints);
    } else {
      llvm::Value* fallback = llvm::Constant::getNullValue(vty);
      if (other) {
        fallback = w == 1 ? to_memory((*other)[g[0]]) : llvm::PoisonValue::get(vty);
        for (int i = 0; w > 1 && i < w; ++i)
          fallback = b_.CreateInsertElement(fallback, to_memory((*other)[g[i]]), b_.getInt32(i));
      }
      loaded = target_.predicated_load(b_, vty, ptrs[g[0]], (*mask)[g[0]], fallback, align, hints);
    }
    for (int i = 0; i < w; ++i) {
      llvm::Value* v = w == 1 ? loaded : b_.CreateExtractElement(loaded, b_.getInt32(i));
      out[g[i]] = is_bool ? b_.CreateICmpNE(v, b_.getInt8(0)) : v;
    }
  }
  set(res, std::move(out));
}

void KernelLowering::lower_store(const Op& op) {
  const Elems& ptrs = get(op.operands[0]);
  const Elems& vals = get(op.operands[1]);
  const ir::Value* mask_v = op.operands.size() > 2 ? op.operands[2] : nullptr;
  const Elems* mask = mask_v ? &get(mask_v) : nullptr;
  const bool is_bool = op.operands[1]->type.dtype == DType::I1;
  auto to_memory = [&](llvm::Value* v) { return is_bool ? b_.CreateZExt(v, b_.getInt8Ty()) : v; };
  const AccessHints hints = access_hints(op);
  check_bounds(op, "store", op.operands[0]->type, ptrs, mask, ir::dtype_bytes(op.operands[1]->type.dtype));
  for (const auto& g : access_groups(op.operands[0], mask_v)) {
    const int w = static_cast<int>(g.size());
    const unsigned align = static_cast<unsigned>(w * ir::dtype_bytes(op.operands[1]->type.dtype));
    llvm::Value* v = to_memory(vals[g[0]]);
    if (w > 1) {
      v = llvm::PoisonValue::get(llvm::FixedVectorType::get(v->getType(), w));
      for (int i = 0; i < w; ++i) v = b_.CreateInsertElement(v, to_memory(vals[g[i]]), b_.getInt32(i));
    }
    if (mask || !hints.empty())
      target_.predicated_store(b_, v, ptrs[g[0]], mask ? (*mask)[g[0]] : b_.getTrue(), align, hints);
    else
      b_.CreateAlignedStore(v, ptrs[g[0]], llvm::MaybeAlign(align));
  }
}

}  // namespace tessera::lower
