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
constexpr unsigned constant_address_space = 4;  // where the HSA dispatch packet lives

void check_axis(int axis, const char* what) {
  if (axis < 0 || axis > 2)
    throw InternalError(std::string("tessera: ") + what + " axis must be 0, 1 or 2, got " + std::to_string(axis));
}

llvm::Value* call_intrinsic(llvm::IRBuilder<>& b, llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Value*> args = {}) {
  llvm::Function* decl = llvm::Intrinsic::getOrInsertDeclaration(b.GetInsertBlock()->getModule(), id);
  return b.CreateCall(decl, args);
}

// A load from the dispatch packet: the packet does not change while the kernel runs.
llvm::Value* load_packet_field(llvm::IRBuilder<>& b, llvm::Value* packet, unsigned offset, llvm::Type* type) {
  llvm::Value* field = b.CreateConstInBoundsGEP1_32(b.getInt8Ty(), packet, offset);
  llvm::LoadInst* load = b.CreateAlignedLoad(type, field, llvm::Align(type->getPrimitiveSizeInBits() / 8));
  load->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(b.getContext(), {}));
  return load;
}

class AmdgpuTarget final : public lower::Target {
 public:
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

  // The number of workgroups comes from the HSA kernel dispatch packet (hsa_kernel_dispatch_packet_t:
  // u16 workgroup_size_{x,y,z} at byte 4, u32 grid_size_{x,y,z} at byte 12, grid counted in
  // work-items). We read it rather than the implicit kernel arguments because the packet's
  // layout is fixed by the HSA spec for every code object version, while the implicit-argument
  // layout changed between code object v4 and v5. HSA allows a partial last workgroup, hence the
  // rounding up; HIP launches always give an exact multiple.
  llvm::Value* num_programs(llvm::IRBuilder<>& b, int axis) const override {
    check_axis(axis, "num_programs");
    llvm::Value* packet = call_intrinsic(b, llvm::Intrinsic::amdgcn_dispatch_ptr);
    llvm::Value* wg_size = b.CreateZExt(load_packet_field(b, packet, 4 + 2 * axis, b.getInt16Ty()), b.getInt32Ty());
    llvm::Value* grid_size = load_packet_field(b, packet, 12 + 4 * axis, b.getInt32Ty());
    llvm::Value* rounded = b.CreateAdd(grid_size, b.CreateSub(wg_size, b.getInt32(1)));
    return b.CreateUDiv(rounded, wg_size, "num_programs");
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

  lower::DeviceBinary compile(std::unique_ptr<llvm::Module> m, const std::string& kernel_name) const override {
    std::unique_ptr<llvm::TargetMachine> tm = create_target_machine(amdgpu_triple, arch_, "");
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
