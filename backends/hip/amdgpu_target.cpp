// The AMDGPU target: tile-IR lowering hooks for AMD GPUs (CDNA2 gfx90a, CDNA3 gfx942) and code
// generation to an HSACO: LLVM emits a relocatable object, ld.lld links it into the shared ELF
// that hipModuleLoadData loads (backends/hip/hsaco_link.hpp).
#include <mutex>

#include <llvm/IR/Attributes.h>
#include <llvm/IR/CallingConv.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include "backends/hip/hsaco_link.hpp"
#include "backends/llvm_pipeline.hpp"
#include "backends/target_factories.hpp"
#include "jit/lower/target.hpp"
#include "tessera/error.hpp"

namespace tessera::backend {
namespace {

// Only AMDGPU, and with it the assembly parser that AMDGPU's inline asm needs.
void initialize_amdgpu_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    LLVMInitializeAMDGPUAsmParser();
  });
}

constexpr const char* amdgpu_triple = "amdgcn-amd-amdhsa";
// LLVM 22 defaults to code object v6, which ROCm loads only from 6.2 on; v5 loads on every
// ROCm 6 and fixes the implicit-argument layout that num_programs reads.
constexpr int code_object_version = 500;

void check_axis(int axis, const char* what) {
  if (axis < 0 || axis > 2)
    throw InternalError(std::string("tessera: ") + what + " axis must be 0, 1 or 2, got " + std::to_string(axis));
}

llvm::Value* call_intrinsic(llvm::IRBuilder<>& b, llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Value*> args = {}) {
  llvm::Function* decl = llvm::Intrinsic::getOrInsertDeclaration(b.GetInsertBlock()->getModule(), id);
  return b.CreateCall(decl, args);
}

// A load from the kernel's implicit arguments, which do not change while the kernel runs.
llvm::Value* load_invariant(llvm::IRBuilder<>& b, llvm::Value* base, unsigned offset, llvm::Type* type) {
  llvm::Value* field = b.CreateConstInBoundsGEP1_32(b.getInt8Ty(), base, offset);
  llvm::LoadInst* load = b.CreateAlignedLoad(type, field, llvm::Align(type->getPrimitiveSizeInBits() / 8));
  load->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(b.getContext(), {}));
  return load;
}

class AmdgpuTarget final : public lower::Target {
 public:
  bool runs_inline_asm() const override { return true; }
  explicit AmdgpuTarget(std::string arch) : arch_(std::move(arch)) {
    initialize_amdgpu_once();
    // Made once here only for data_layout(); compile() makes its own machine, because a
    // TargetMachine is not safe to share between threads compiling at the same time.
    data_layout_ = create_target_machine(amdgpu_triple, arch_, "")->createDataLayout().getStringRepresentation();
  }

  std::string name() const override { return arch_; }
  std::string triple() const override { return amdgpu_triple; }
  std::string data_layout() const override { return data_layout_; }
  int warp_size() const override { return 64; }  // gfx9 CDNA parts run wave64 only
  unsigned global_address_space() const override { return 1; }
  unsigned shared_address_space() const override { return 3; }  // LDS

  llvm::Value* thread_id(llvm::IRBuilder<>& b) const override {
    return call_intrinsic(b, llvm::Intrinsic::amdgcn_workitem_id_x);
  }
  llvm::Value* program_id(llvm::IRBuilder<>& b, int axis) const override {
    check_axis(axis, "program_id");
    static constexpr llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::amdgcn_workgroup_id_x,
                                                  llvm::Intrinsic::amdgcn_workgroup_id_y,
                                                  llvm::Intrinsic::amdgcn_workgroup_id_z};
    return call_intrinsic(b, ids[axis]);
  }

  // The number of workgroups is read from the implicit kernel arguments of code object v5,
  // which begin with u32 hidden_block_count_{x,y,z} (LLVM AMDGPUUsage, "Code Object V5
  // Metadata"): one scalar load. The HSA dispatch packet would serve every code object version
  // but holds grid and workgroup sizes in work-items, costing an integer division per kernel.
  // compile() pins code object v5 so that this layout holds.
  llvm::Value* num_programs(llvm::IRBuilder<>& b, int axis) const override {
    check_axis(axis, "num_programs");
    llvm::Value* implicit_args = call_intrinsic(b, llvm::Intrinsic::amdgcn_implicitarg_ptr);
    return load_invariant(b, implicit_args, 4 * axis, b.getInt32Ty());
  }

  // s_barrier alone orders execution, not memory: the workgroup-scope release/acquire fences
  // make LDS and global writes before the barrier visible after it (what HIP's __syncthreads does).
  void barrier(llvm::IRBuilder<>& b) const override {
    const llvm::SyncScope::ID workgroup = b.getContext().getOrInsertSyncScopeID("workgroup");
    b.CreateFence(llvm::AtomicOrdering::Release, workgroup);
    call_intrinsic(b, llvm::Intrinsic::amdgcn_s_barrier);
    b.CreateFence(llvm::AtomicOrdering::Acquire, workgroup);
  }

  // The flat work-group size bounds let the register allocator use the registers that
  // `num_threads` threads per workgroup leave, instead of assuming the 1024-thread maximum.
  void mark_kernel(llvm::Function* f, int num_threads) const override {
    f->setCallingConv(llvm::CallingConv::AMDGPU_KERNEL);
    f->setLinkage(llvm::GlobalValue::ExternalLinkage);
    f->addFnAttr("amdgpu-flat-work-group-size", "1," + std::to_string(num_threads));
  }

  // Through ds_bpermute: every lane reads the value of lane `src` (byte address src * 4).
  llvm::Value* permute(llvm::IRBuilder<>& b, llvm::Value* v32, llvm::Value* src_lane) const {
    return b.CreateIntrinsic(llvm::Intrinsic::amdgcn_ds_bpermute, {},
                             {b.CreateShl(src_lane, b.getInt32(2)), v32});
  }
  llvm::Value* lane_id(llvm::IRBuilder<>& b) const {
    llvm::Value* lo = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_mbcnt_lo, {}, {b.getInt32(0xffffffffu), b.getInt32(0)});
    return b.CreateIntrinsic(llvm::Intrinsic::amdgcn_mbcnt_hi, {}, {b.getInt32(0xffffffffu), lo});
  }
  llvm::Value* shuffle_xor(llvm::IRBuilder<>& b, llvm::Value* v32, int lane_mask) const override {
    return permute(b, v32, b.CreateXor(lane_id(b), b.getInt32(static_cast<std::uint32_t>(lane_mask))));
  }
  llvm::Value* shuffle_up(llvm::IRBuilder<>& b, llvm::Value* v32, int delta) const override {
    llvm::Value* lane = lane_id(b);
    llvm::Value* d = b.getInt32(static_cast<std::uint32_t>(delta));
    llvm::Value* src = b.CreateSelect(b.CreateICmpULT(lane, d), lane, b.CreateSub(lane, d));
    return permute(b, v32, src);
  }
  llvm::Value* shuffle_down(llvm::IRBuilder<>& b, llvm::Value* v32, int delta) const override {
    llvm::Value* lane = lane_id(b);
    llvm::Value* up = b.CreateAdd(lane, b.getInt32(static_cast<std::uint32_t>(delta)));
    llvm::Value* src = b.CreateSelect(b.CreateICmpUGE(up, b.getInt32(static_cast<std::uint32_t>(warp_size()))), lane, up);
    return permute(b, v32, src);
  }
  llvm::Value* shuffle_idx(llvm::IRBuilder<>& b, llvm::Value* v32, llvm::Value* src_lane) const override {
    return permute(b, v32, src_lane);
  }

  // AMDGPU's memory model scopes (LLVM AMDGPUUsage): a workgroup is a CTA, an agent is the GPU.
  std::string sync_scope(const std::string& scope) const override {
    return scope == "cta" ? "workgroup" : scope == "gpu" ? "agent" : "";
  }

  // exp exp2 log log2 sin cos on f32 select natively (v_exp_f32, v_log_f32, v_sin_f32, v_cos_f32,
  // with LLVM's range handling); everything else, and f64, is tessera's own IR (lower_math.cpp).
  llvm::Value* math(llvm::IRBuilder<>& b, const std::string& fn, llvm::Value* x) const override {
    llvm::Type* type = x->getType();
    if (type->isHalfTy() || type->isBFloatTy()) {
      llvm::Value* r = math(b, fn, b.CreateFPExt(x, b.getFloatTy()));
      return r ? b.CreateFPTrunc(r, type) : nullptr;
    }
    if (!type->isFloatTy()) return nullptr;
    const std::pair<const char*, llvm::Intrinsic::ID> native[] = {
        {"exp", llvm::Intrinsic::exp}, {"exp2", llvm::Intrinsic::exp2}, {"log", llvm::Intrinsic::log},
        {"log2", llvm::Intrinsic::log2}, {"sin", llvm::Intrinsic::sin}, {"cos", llvm::Intrinsic::cos}};
    for (const auto& [name, id] : native)
      if (fn == name) return b.CreateUnaryIntrinsic(id, x);
    return nullptr;
  }

  // fast_dividef: a division LLVM may compute as a reciprocal and a product (v_rcp_f32).
  llvm::Value* math_binary(llvm::IRBuilder<>& b, const std::string& fn, llvm::Value* x, llvm::Value* y) const override {
    if (fn != "fdiv_approx") return nullptr;
    llvm::FastMathFlags flags;
    flags.setAllowReciprocal();
    flags.setApproxFunc();
    llvm::Value* q = b.CreateFDiv(x, y);
    llvm::cast<llvm::Instruction>(q)->setFastMathFlags(flags);
    return q;
  }

  lower::DeviceBinary compile(std::unique_ptr<llvm::Module> m, const std::string& kernel_name) const override {
    std::unique_ptr<llvm::TargetMachine> tm = create_target_machine(amdgpu_triple, arch_, "");
    if (m->getModuleFlag("amdhsa_code_object_version") == nullptr)
      m->addModuleFlag(llvm::Module::Error, "amdhsa_code_object_version", code_object_version);
    optimize_module(*m, *tm);
    // Code generation rewrites the IR, so the assembly comes from a copy of the optimized module.
    std::unique_ptr<llvm::Module> copy = llvm::CloneModule(*m);
    lower::DeviceBinary out;
    out.format = "hsaco";
    out.assembly = emit_code(*copy, *tm, EmitKind::assembly);
    out.data = link_hsaco(emit_code(*m, *tm, EmitKind::object));
    out.kernel_name = kernel_name;
    return out;
  }

 private:
  std::string arch_;
  std::string data_layout_;
};

}  // namespace

std::unique_ptr<lower::Target> make_amdgpu_target(const std::string& arch) {
  return std::make_unique<AmdgpuTarget>(arch);
}

}  // namespace tessera::backend
