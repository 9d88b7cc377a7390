// The NVPTX target: tile-IR lowering hooks for NVIDIA GPUs and code generation to PTX text.
// The PTX is handed to the driver (cuModuleLoadDataEx), which compiles it for the device.
#include <mutex>
#include <string>

#include <llvm/IR/Attributes.h>
#include <llvm/IR/CallingConv.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>

#include "backends/llvm_pipeline.hpp"
#include "backends/target_factories.hpp"
#include "jit/lower/target.hpp"
#include "tessera/error.hpp"

namespace tessera::backend {
namespace {

// Shared-memory addresses fit in 32 bits, but NVPTX makes every pointer 64 bits unless its
// nvptx-short-ptr option is set (a command-line option of LLVM's, global to the process; the
// target machines made after this take it into their data layout, "p3:32:32"). With 64-bit shared
// pointers every address that a kernel keeps live through a loop (a copy's destination in a
// ring, an operand's base) holds two registers: the 4-warp matmul's K loop used 8 more than with
// 32 bits (ptxas -v). Triton sets the same option.
void use_32_bit_shared_pointers() {
  auto& options = llvm::cl::getRegisteredOptions();
  auto it = options.find("nvptx-short-ptr");
  if (it == options.end()) throw InternalError("tessera: this LLVM's NVPTX backend has no nvptx-short-ptr option");
  auto* short_pointers = static_cast<llvm::cl::opt<bool>*>(it->second);
  short_pointers->setValue(true);
}

// Only NVPTX: initializing all targets would drag every backend's registration into startup.
void initialize_nvptx_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    use_32_bit_shared_pointers();
  });
}

constexpr const char* nvptx_triple = "nvptx64-nvidia-cuda";

// A call to a non-overloaded intrinsic, declared in the builder's module on first use.
llvm::Value* call_intrinsic(llvm::IRBuilder<>& b, llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Value*> args = {}) {
  llvm::Function* decl = llvm::Intrinsic::getOrInsertDeclaration(b.GetInsertBlock()->getModule(), id);
  return b.CreateCall(decl, args);
}

llvm::Intrinsic::ID ctaid_intrinsic(int axis) {
  switch (axis) {
    case 0: return llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x;
    case 1: return llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y;
    case 2: return llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z;
  }
  throw InternalError("tessera: program_id axis must be 0, 1 or 2, got " + std::to_string(axis));
}

llvm::Intrinsic::ID nctaid_intrinsic(int axis) {
  switch (axis) {
    case 0: return llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x;
    case 1: return llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y;
    case 2: return llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z;
  }
  throw InternalError("tessera: num_programs axis must be 0, 1 or 2, got " + std::to_string(axis));
}

}  // namespace

// Inline-PTX predicated accesses (nvptx_memory_target.cpp); null / false where they do not
// apply, and the Target default (a branch) is used instead.
llvm::Value* nvptx_predicated_load(llvm::IRBuilder<>& b, llvm::Type* type, llvm::Value* ptr, llvm::Value* pred,
                                   llvm::Value* other, unsigned align, const lower::AccessHints& hints);
bool nvptx_predicated_store(llvm::IRBuilder<>& b, llvm::Value* value, llvm::Value* ptr, llvm::Value* pred,
                            unsigned align, const lower::AccessHints& hints);
// wgmma as inline PTX with tied accumulators (nvptx_wgmma_target.cpp).
std::vector<llvm::Value*> nvptx_wgmma(llvm::IRBuilder<>& b, const lower::Target::Wgmma& shape, llvm::Value* desc_a,
                                      const std::vector<llvm::Value*>& a_words, llvm::Value* desc_b,
                                      const std::vector<llvm::Value*>& acc);
std::vector<llvm::Value*> nvptx_wgmma_wait(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& acc, int pending);
llvm::Value* nvptx_opaque_copy(llvm::IRBuilder<>& b, llvm::Value* v);
// Math (nvptx_math_target.cpp) and libdevice (libdevice_target.cpp).
llvm::Value* nvptx_math(llvm::IRBuilder<>& b, const std::string& fn, llvm::ArrayRef<llvm::Value*> args);
void link_libdevice(llvm::Module& m);

namespace {

class NvptxTarget final : public lower::Target {
 public:
  explicit NvptxTarget(std::string arch) : arch_(std::move(arch)) {
    initialize_nvptx_once();
    // Made once here only to answer data_layout(); compile() makes its own machine, because a
    // TargetMachine is not safe to share between threads that compile at the same time.
    data_layout_ = create_target_machine(nvptx_triple, arch_, ptx_features())->createDataLayout().getStringRepresentation();
  }

  std::string name() const override { return arch_; }
  std::string triple() const override { return nvptx_triple; }
  std::string data_layout() const override { return data_layout_; }
  int warp_size() const override { return 32; }
  unsigned global_address_space() const override { return 1; }
  unsigned shared_address_space() const override { return 3; }
  bool dynamic_shared_memory() const override { return true; }

  llvm::Value* thread_id(llvm::IRBuilder<>& b) const override {
    return call_intrinsic(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  }
  // An inline-asm read with side effects: LLVM neither merges it with the intrinsic's read nor
  // moves it.
  llvm::Value* thread_id_unshared(llvm::IRBuilder<>& b) const override {
    auto* type = llvm::FunctionType::get(b.getInt32Ty(), false);
    return b.CreateCall(llvm::InlineAsm::get(type, "mov.u32 $0, %tid.x;", "=r", /*hasSideEffects=*/true));
  }
  llvm::Value* program_id(llvm::IRBuilder<>& b, int axis) const override {
    return call_intrinsic(b, ctaid_intrinsic(axis));
  }
  llvm::Value* num_programs(llvm::IRBuilder<>& b, int axis) const override {
    return call_intrinsic(b, nctaid_intrinsic(axis));
  }
  // LLVM 22 auto-upgrades llvm.nvvm.barrier0 to this intrinsic: bar.sync 0 for the whole CTA.
  void barrier(llvm::IRBuilder<>& b) const override {
    call_intrinsic(b, llvm::Intrinsic::nvvm_barrier_cta_sync_aligned_all, {b.getInt32(0)});
  }

  // LLVM 22 reads launch bounds from function attributes (formerly nvvm.annotations metadata);
  // .maxntid lets ptxas budget registers for exactly this many threads.
  void mark_kernel(llvm::Function* f, int num_threads) const override {
    f->setCallingConv(llvm::CallingConv::PTX_Kernel);
    f->setLinkage(llvm::GlobalValue::ExternalLinkage);
    f->addFnAttr("nvvm.maxntid", std::to_string(num_threads));
  }
  void set_max_registers(llvm::Function* f, int max_registers) const override {
    f->addFnAttr("nvvm.maxnreg", std::to_string(max_registers));
  }

  // MUFU fast paths, libdevice calls or null (tessera's own IR): nvptx_math_target.cpp.
  llvm::Value* math(llvm::IRBuilder<>& b, const std::string& fn, llvm::Value* x) const override {
    return nvptx_math(b, fn, {x});
  }
  llvm::Value* math_binary(llvm::IRBuilder<>& b, const std::string& fn, llvm::Value* x, llvm::Value* y) const override {
    // f32 division as Triton does it: div.full.f32 (2 ulp, full range) rather than the IEEE
    // div.rn.f32, whose software sequence costs memory-bound kernels like softmax their last percent.
    if (fn == "fdiv") return x->getType()->isFloatTy() ? b.CreateIntrinsic(llvm::Intrinsic::nvvm_div_full, {}, {x, y}) : nullptr;
    // fast_dividef: div.approx.ftz.f32, a reciprocal and a product (the verifier admits f32 only).
    // Not div.approx.f32: ptxas scales a subnormal divisor around its reciprocal (a compare, a
    // predicated multiply and a select), which fast_dividef's bounds (2^-126 <= |b|) leave out.
    if (fn == "fdiv_approx") return b.CreateIntrinsic(llvm::Intrinsic::nvvm_div_approx_ftz_f, {}, {x, y});
    return nvptx_math(b, fn, {x, y});
  }
  void link_device_library(llvm::Module& m) const override { link_libdevice(m); }

  llvm::Value* predicated_load(llvm::IRBuilder<>& b, llvm::Type* type, llvm::Value* ptr, llvm::Value* pred,
                               llvm::Value* other, unsigned align, const lower::AccessHints& hints = {}) const override {
    if (llvm::Value* v = nvptx_predicated_load(b, type, ptr, pred, other, align, hints)) return v;
    return Target::predicated_load(b, type, ptr, pred, other, align);
  }
  void predicated_store(llvm::IRBuilder<>& b, llvm::Value* value, llvm::Value* ptr, llvm::Value* pred,
                        unsigned align, const lower::AccessHints& hints = {}) const override {
    if (!nvptx_predicated_store(b, value, ptr, pred, align, hints)) Target::predicated_store(b, value, ptr, pred, align);
  }

  llvm::Value* shuffle_xor(llvm::IRBuilder<>& b, llvm::Value* v32, int lane_mask) const override {
    return b.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, {},
                             {b.getInt32(0xffffffffu), v32, b.getInt32(static_cast<std::uint32_t>(lane_mask)), b.getInt32(0x1f)});
  }
  llvm::Value* shuffle_up(llvm::IRBuilder<>& b, llvm::Value* v32, int delta) const override {
    // c = 0: lanes below `delta` keep their own value (PTX shfl.up clamps at lane 0).
    return b.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_up_i32, {},
                             {b.getInt32(0xffffffffu), v32, b.getInt32(static_cast<std::uint32_t>(delta)), b.getInt32(0)});
  }
  llvm::Value* shuffle_down(llvm::IRBuilder<>& b, llvm::Value* v32, int delta) const override {
    // c = 0x1f: lanes past 31 - delta keep their own value.
    return b.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_down_i32, {},
                             {b.getInt32(0xffffffffu), v32, b.getInt32(static_cast<std::uint32_t>(delta)), b.getInt32(0x1f)});
  }
  llvm::Value* shuffle_idx(llvm::IRBuilder<>& b, llvm::Value* v32, llvm::Value* src_lane) const override {
    return b.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_idx_i32, {},
                             {b.getInt32(0xffffffffu), v32, src_lane, b.getInt32(0x1f)});
  }

  std::vector<llvm::Value*> ldmatrix_x4(llvm::IRBuilder<>& b, llvm::Value* row_address, bool trans) const override {
    const auto id = trans ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16
                          : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16;
    llvm::Value* r = b.CreateIntrinsic(id, {row_address->getType()}, {row_address});  // overloaded on the pointer
    std::vector<llvm::Value*> out;
    for (unsigned i = 0; i < 4; ++i) out.push_back(b.CreateExtractValue(r, {i}));
    return out;
  }
  std::vector<llvm::Value*> mma_m16n8(llvm::IRBuilder<>& b, MmaType type, const std::vector<llvm::Value*>& a,
                                      const std::vector<llvm::Value*>& bm,
                                      const std::vector<llvm::Value*>& c) const override {
    // f16 takes <2 x half> operands, the others i32 ones: cast each to what the intrinsic declares.
    llvm::Intrinsic::ID id = llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_f32_f32;
    if (type == MmaType::BF16) id = llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_bf16;
    if (type == MmaType::TF32) id = llvm::Intrinsic::nvvm_mma_m16n8k8_row_col_tf32;
    if (type == MmaType::S8) id = llvm::Intrinsic::nvvm_mma_m16n8k32_row_col_s8;
    llvm::Function* f = llvm::Intrinsic::getOrInsertDeclaration(b.GetInsertBlock()->getModule(), id);
    std::vector<llvm::Value*> args;
    for (auto* v : a) args.push_back(v);
    for (auto* v : bm) args.push_back(v);
    for (auto* v : c) args.push_back(v);
    for (unsigned i = 0; i < args.size(); ++i) args[i] = b.CreateBitCast(args[i], f->getFunctionType()->getParamType(i));
    llvm::Value* r = b.CreateCall(f, args);
    std::vector<llvm::Value*> d;
    for (unsigned i = 0; i < 4; ++i) d.push_back(b.CreateExtractValue(r, {i}));
    return d;
  }

  std::vector<llvm::Value*> wgmma(llvm::IRBuilder<>& b, const Wgmma& shape, llvm::Value* desc_a,
                                  const std::vector<llvm::Value*>& a_words, llvm::Value* desc_b,
                                  const std::vector<llvm::Value*>& acc, llvm::Value*) const override {
    return nvptx_wgmma(b, shape, desc_a, a_words, desc_b, acc);
  }
  llvm::Value* shared_window_address(llvm::IRBuilder<>& b, llvm::Value* p) const override {
    return b.CreatePtrToInt(p, b.getInt32Ty());  // a shared (addrspace 3) pointer is 32 bits
  }
  llvm::Value* wgmma_descriptor_base(llvm::IRBuilder<>& b, llvm::Value* desc) const override {
    return nvptx_opaque_copy(b, desc);
  }
  void wgmma_fence(llvm::IRBuilder<>& b) const override {
    call_intrinsic(b, llvm::Intrinsic::nvvm_wgmma_fence_sync_aligned);
  }
  void wgmma_commit(llvm::IRBuilder<>& b) const override {
    call_intrinsic(b, llvm::Intrinsic::nvvm_wgmma_commit_group_sync_aligned);
  }
  std::vector<llvm::Value*> wgmma_wait(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& acc, int pending) const override {
    return nvptx_wgmma_wait(b, acc, pending);
  }
  void fence_proxy_async(llvm::IRBuilder<>& b) const override {
    if (arch_ == "sm_80") return;  // no async proxy before sm_90 (no wgmma, no TMA): nothing to order
    call_intrinsic(b, llvm::Intrinsic::nvvm_fence_proxy_async_shared_cta);
  }

  void async_copy(llvm::IRBuilder<>& b, llvm::Value* shared, llvm::Value* global, int bytes, llvm::Value* pred) const override {
    // 16-byte copies bypass L1 (.cg), as Triton's do. Where `pred` is false the copy writes zeros
    // and reads nothing, through cp.async's ignore-src predicate, which ptxas makes the LDGSTS's own
    // predicate. The source-size form (0 bytes where masked; LLVM's intrinsics) cost a SEL and an
    // ISETP per copy that turn the size back into that predicate: with ignore-src a 128x256x64/w8/s4
    // bf16 matmul ran 4-5% faster (H100, session 29: 4096^3 647 -> 680 TFLOP/s, 16384x1024x1024
    // 517 -> 537; Triton 679 and 542 on that machine), 14 more registers (184 -> 198).
    async_copy_ignoring_source(b, shared, global, bytes, b.CreateNot(pred));
  }
  // cp.async with the ignore-src predicate `ignore` (zeros where it holds), as inline PTX: LLVM has
  // no intrinsic for that form.
  static void async_copy_ignoring_source(llvm::IRBuilder<>& b, llvm::Value* shared, llvm::Value* global, int bytes,
                                         llvm::Value* ignore) {
    auto* fty = llvm::FunctionType::get(b.getVoidTy(), {shared->getType(), global->getType(), b.getInt1Ty()}, false);
    const std::string text = std::string("cp.async.") + (bytes == 16 ? "cg" : "ca") + ".shared.global [$0], [$1], " +
                             std::to_string(bytes) + ", $2;";
    const bool short_shared = b.GetInsertBlock()->getModule()->getDataLayout().getPointerSizeInBits(3) == 32;
    const std::string constraints = std::string(short_shared ? "r" : "l") + ",l,b,~{memory}";
    b.CreateCall(llvm::InlineAsm::get(fty, text, constraints, /*hasSideEffects=*/true), {shared, global, ignore});
  }
  void async_commit(llvm::IRBuilder<>& b) const override {
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, llvm::ArrayRef<llvm::Type*>{}, llvm::ArrayRef<llvm::Value*>{});
  }
  void async_wait(llvm::IRBuilder<>& b, int pending) const override {
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {}, {b.getInt32(static_cast<std::uint32_t>(pending))});
  }

  bool can_print() const override { return true; }
  // vprintf(format, buffer): the CUDA printf, a system call that ptxas resolves. The format lives in
  // global memory; the arguments in a local buffer laid out as a struct of them (each at its
  // natural alignment, as vprintf reads them); both are passed as generic pointers.
  void print(llvm::IRBuilder<>& b, const std::string& format, const std::vector<llvm::Value*>& args) const override {
    llvm::Module* m = b.GetInsertBlock()->getModule();
    llvm::PointerType* generic = b.getPtrTy(0);
    llvm::Value* text = b.CreateAddrSpaceCast(b.CreateGlobalString(format, "printf.format", global_address_space()), generic);
    llvm::Value* buffer = llvm::ConstantPointerNull::get(generic);
    if (!args.empty()) {
      std::vector<llvm::Type*> types;
      for (llvm::Value* a : args) types.push_back(a->getType());
      llvm::StructType* layout = llvm::StructType::get(b.getContext(), types);
      llvm::BasicBlock& entry = b.GetInsertBlock()->getParent()->getEntryBlock();
      llvm::IRBuilder<> at_entry(&entry, entry.begin());  // allocas in the entry block stay static
      llvm::AllocaInst* slot = at_entry.CreateAlloca(layout, m->getDataLayout().getAllocaAddrSpace(), nullptr, "printf.args");
      for (unsigned i = 0; i < args.size(); ++i) b.CreateStore(args[i], b.CreateStructGEP(layout, slot, i));
      buffer = slot->getType() == generic ? static_cast<llvm::Value*>(slot) : b.CreateAddrSpaceCast(slot, generic);
    }
    llvm::FunctionCallee vprintf =
        m->getOrInsertFunction("vprintf", llvm::FunctionType::get(b.getInt32Ty(), {generic, generic}, false));
    b.CreateCall(vprintf, {text, buffer});
  }

  // NVPTX's syncscope names (NVPTXUtilities: "block", "cluster", "device"; "" is .sys).
  bool can_fail_checks() const override { return true; }
  bool checks_bounds_in_kernel() const override { return true; }
  bool runs_inline_asm() const override { return true; }
  // The line through vprintf, then CUDA's device assert: __assertfail(message, file, line,
  // function, char size), the system call behind assert() in CUDA C++, which the driver reports
  // ("file:line: function: block: [...], thread: [...] Assertion `message` failed.") and which
  // traps: the launch ends with CUDA_ERROR_ASSERT.
  void fail_check(llvm::IRBuilder<>& b, const std::string& format, const std::vector<llvm::Value*>& args,
                  const CheckSite& site) const override {
    print(b, format, args);
    llvm::Module* m = b.GetInsertBlock()->getModule();
    llvm::PointerType* generic = b.getPtrTy(0);
    auto text = [&](const std::string& s, const char* name) {
      return b.CreateAddrSpaceCast(b.CreateGlobalString(s, name, global_address_space()), generic);
    };
    llvm::FunctionCallee assert_fail = m->getOrInsertFunction(
        "__assertfail",
        llvm::FunctionType::get(b.getVoidTy(), {generic, generic, b.getInt32Ty(), generic, b.getInt64Ty()}, false));
    b.CreateCall(assert_fail, {text(site.message, "assert.message"), text(site.file, "assert.file"),
                               b.getInt32(static_cast<std::uint32_t>(site.line)), text(site.function, "assert.function"),
                               b.getInt64(1)});
  }

  std::string sync_scope(const std::string& scope) const override {
    return scope == "cta" ? "block" : scope == "gpu" ? "device" : "";
  }

  lower::DeviceBinary compile(std::unique_ptr<llvm::Module> m, const std::string& kernel_name) const override {
    std::unique_ptr<llvm::TargetMachine> tm = create_target_machine(nvptx_triple, arch_, ptx_features());
    link_device_library(*m);
    optimize_module(*m, *tm);
    lower::DeviceBinary out;
    out.format = "ptx";
    out.data = emit_code(*m, *tm, EmitKind::assembly);
    out.kernel_name = kernel_name;
    out.assembly = out.data;
    return out;
  }

 private:
  // The PTX ISA version: LLVM's least for the arch (7.0 for sm_80), but at least 7.5, which
  // cp.async's ignore-src predicate needs (async_copy), as do (from 7.4) the eviction-priority
  // qualifiers of hinted loads and stores (ld.global.L1::evict_last); ptxas refuses them in older
  // PTX. Every driver since CUDA 11.5 reads PTX 7.5.
  std::string ptx_features() const { return arch_ == "sm_80" ? "+ptx75" : ""; }

  std::string arch_;
  std::string data_layout_;
};

}  // namespace

std::unique_ptr<lower::Target> make_nvptx_target(const std::string& arch) {
  return std::make_unique<NvptxTarget>(arch);
}

}  // namespace tessera::backend
