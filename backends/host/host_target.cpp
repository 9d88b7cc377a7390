// The host SIMT target ("host": warps of 32, "host64": warps of 64): the common lowering's LLVM IR
// for x86-64, with every special register, barrier and shuffle a call to a runtime hook of the host
// executor (backends/host/host_abi.hpp), run there as one fiber per thread. Its purpose is testing:
// the IR a GPU target would get, compiled and executed in CI, so that layout and lowering bugs the
// interpreter cannot see (it ignores layouts) change results.
//
// This target has no X86 backend: it lives in libtessera.so, which carries NVPTX and AMDGPU only.
// compile() instruments the module (host_checks_target.cpp) and hands it over as LLVM IR text; the
// host executor (libtessera_host.so, its own LLVM with X86 and ORC) optimizes it, compiles it for
// the CPU and runs it. Text, not an llvm::Module: the two libraries carry separate, hidden LLVMs.
#include <llvm/IR/DebugInfo.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/Support/raw_ostream.h>

#include "backends/host/host_abi.hpp"
#include "backends/target_factories.hpp"
#include "jit/lower/target.hpp"
#include "tessera/error.hpp"

namespace tessera::backend {

// host_checks_target.cpp: the module rewrites that make the IR safe to run on the host.
void instrument_memory_accesses(llvm::Module& m, int num_args);
void guard_integer_division(llvm::Module& m);

namespace {

// x86-64 Linux, as LLVM 22's X86 target describes it (the executor checks that its own target
// machine agrees before it compiles; the lowering itself only reads pointer and type sizes).
constexpr const char* host_triple = "x86_64-unknown-linux-gnu";
constexpr const char* host_data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128";

void check_axis(int axis, const char* what) {
  if (axis < 0 || axis > 2)
    throw InternalError(std::string("tessera: ") + what + " axis must be 0, 1 or 2, got " + std::to_string(axis));
}

// A call to hook `name` of type `type`, declared in the builder's module on first use.
llvm::CallInst* call_hook(llvm::IRBuilder<>& b, const char* name, llvm::FunctionType* type,
                          llvm::ArrayRef<llvm::Value*> args = {}) {
  llvm::FunctionCallee hook = b.GetInsertBlock()->getModule()->getOrInsertFunction(name, type);
  return b.CreateCall(hook, args);
}

// A hook whose result depends only on its arguments and the running thread: LLVM may merge two
// calls but never move one into another thread, so the value stays right.
llvm::Value* call_register(llvm::IRBuilder<>& b, const char* name, llvm::ArrayRef<llvm::Value*> args = {}) {
  std::vector<llvm::Type*> params(args.size(), b.getInt32Ty());
  llvm::CallInst* call = call_hook(b, name, llvm::FunctionType::get(b.getInt32Ty(), params, false), args);
  call->setDoesNotThrow();
  call->setOnlyReadsMemory();
  return call;
}

class HostTarget final : public lower::Target {
 public:
  HostTarget(std::string name, int warp_size) : name_(std::move(name)), warp_size_(warp_size) {}

  std::string name() const override { return name_; }
  std::string triple() const override { return host_triple; }
  std::string data_layout() const override { return host_data_layout; }
  int warp_size() const override { return warp_size_; }
  // One flat address space: the checks tell shared from global memory by the pointer's origin
  // (host_checks_target.cpp), and x86 gives non-zero address spaces meanings of its own.
  unsigned global_address_space() const override { return 0; }
  unsigned shared_address_space() const override { return 0; }

  llvm::Value* thread_id(llvm::IRBuilder<>& b) const override { return call_register(b, host_abi::kThreadId); }
  llvm::Value* program_id(llvm::IRBuilder<>& b, int axis) const override {
    check_axis(axis, "program_id");
    return call_register(b, host_abi::kProgramId, {b.getInt32(static_cast<std::uint32_t>(axis))});
  }
  llvm::Value* num_programs(llvm::IRBuilder<>& b, int axis) const override {
    check_axis(axis, "num_programs");
    return call_register(b, host_abi::kNumPrograms, {b.getInt32(static_cast<std::uint32_t>(axis))});
  }
  bool can_print() const override { return true; }
  // printf(format, args...) through the host's print hook (host_hooks.cpp), a C variadic call.
  void print(llvm::IRBuilder<>& b, const std::string& format, const std::vector<llvm::Value*>& args) const override {
    std::vector<llvm::Value*> call_args{b.CreateGlobalString(format, "printf.format")};
    call_args.insert(call_args.end(), args.begin(), args.end());
    call_hook(b, host_abi::kPrint, llvm::FunctionType::get(b.getInt32Ty(), {b.getPtrTy()}, true), call_args)
        ->setDoesNotThrow();
  }
  bool can_fail_checks() const override { return true; }
  // The failure through the host's hook (host_hooks.cpp), which records the formatted line for the
  // launch; the launch throws once the program is done. The site is in the line already.
  void fail_check(llvm::IRBuilder<>& b, const std::string& format, const std::vector<llvm::Value*>& args,
                  const CheckSite&) const override {
    std::vector<llvm::Value*> call_args{b.CreateGlobalString(format, "check.format")};
    call_args.insert(call_args.end(), args.begin(), args.end());
    call_hook(b, host_abi::kFailCheck, llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy()}, true), call_args)
        ->setDoesNotThrow();
  }
  // An opaque call: the optimizer keeps every memory access on its side of it.
  void barrier(llvm::IRBuilder<>& b) const override {
    call_hook(b, host_abi::kBarrier, llvm::FunctionType::get(b.getVoidTy(), false))->setDoesNotThrow();
  }

  void mark_kernel(llvm::Function* f, int) const override { f->setLinkage(llvm::GlobalValue::ExternalLinkage); }
  // The host has no registers to cap: an autotuning config with maxnreg runs as it is (the host
  // measures nothing a cap would change).
  void set_max_registers(llvm::Function*, int) const override {}
  // The host executors check the generated code against the interpreter bit for bit, and an x86
  // fma would not round as the GPU's does anyway: no contraction here.
  bool allows_fp_contraction() const override { return false; }

  // f32: null, so that exp, exp2, log, log2 and sqrt are LLVM's intrinsics (libm's correctly
  // rounded expf ... on x86, as the interpreter computes them) and sin, cos, tanh, erf, pow and
  // rsqrt are tessera's own implementations (lower_math.cpp), tested here in CI. f64: libm, as
  // the interpreter, since tessera has no f64 implementations of its own.
  llvm::Value* math(llvm::IRBuilder<>& b, const std::string& fn, llvm::Value* x) const override {
    if (!x->getType()->isDoubleTy()) return nullptr;
    const std::pair<const char*, llvm::Intrinsic::ID> intrinsics[] = {
        {"exp", llvm::Intrinsic::exp}, {"exp2", llvm::Intrinsic::exp2}, {"log", llvm::Intrinsic::log},
        {"log2", llvm::Intrinsic::log2}, {"sin", llvm::Intrinsic::sin}, {"cos", llvm::Intrinsic::cos},
        {"tanh", llvm::Intrinsic::tanh}};
    for (const auto& [name, id] : intrinsics)
      if (fn == name) return b.CreateUnaryIntrinsic(id, x);
    if (fn == "erf") {
      llvm::FunctionType* type = llvm::FunctionType::get(x->getType(), {x->getType()}, false);
      return call_hook(b, "erf", type, {x});
    }
    return nullptr;  // sqrt, rsqrt: llvm.sqrt
  }
  llvm::Value* math_binary(llvm::IRBuilder<>& b, const std::string& fn, llvm::Value* x, llvm::Value* y) const override {
    if (fn == "pow" && x->getType()->isDoubleTy()) return b.CreateBinaryIntrinsic(llvm::Intrinsic::pow, x, y);
    return nullptr;  // fdiv, fdiv_approx: the IEEE division, as the interpreter's
  }

  llvm::Value* shuffle_xor(llvm::IRBuilder<>& b, llvm::Value* v32, int lane_mask) const override {
    return shuffle(b, host_abi::kShuffleXor, v32, b.getInt32(static_cast<std::uint32_t>(lane_mask)));
  }
  llvm::Value* shuffle_up(llvm::IRBuilder<>& b, llvm::Value* v32, int delta) const override {
    return shuffle(b, host_abi::kShuffleUp, v32, b.getInt32(static_cast<std::uint32_t>(delta)));
  }
  llvm::Value* shuffle_down(llvm::IRBuilder<>& b, llvm::Value* v32, int delta) const override {
    return shuffle(b, host_abi::kShuffleDown, v32, b.getInt32(static_cast<std::uint32_t>(delta)));
  }
  llvm::Value* shuffle_idx(llvm::IRBuilder<>& b, llvm::Value* v32, llvm::Value* src_lane) const override {
    return shuffle(b, host_abi::kShuffleIdx, v32, src_lane);
  }

  // The module as IR text, instrumented: the executor compiles it (see the top of this file).
  lower::DeviceBinary compile(std::unique_ptr<llvm::Module> m, const std::string& kernel_name) const override {
    if (llvm::GlobalVariable* smem = m->getGlobalVariable(host_abi::kSharedMemory, /*AllowInternal=*/true))
      smem->setLinkage(llvm::GlobalValue::ExternalLinkage);
    guard_integer_division(*m);
    llvm::Function* kernel = m->getFunction(kernel_name);
    instrument_memory_accesses(*m, kernel ? static_cast<int>(kernel->arg_size()) : 0);  // reads the line info
    llvm::StripDebugInfo(*m);
    lower::DeviceBinary out;
    out.format = "llvm";
    llvm::raw_string_ostream os(out.data);
    m->print(os, nullptr);
    os.flush();
    out.assembly = out.data;
    out.kernel_name = kernel_name;
    return out;
  }

 private:
  // A shuffle is a rendezvous of the warp: an opaque call that reads and writes memory, so that
  // nothing is moved across it.
  static llvm::Value* shuffle(llvm::IRBuilder<>& b, const char* hook, llvm::Value* v32, llvm::Value* operand) {
    llvm::FunctionType* type = llvm::FunctionType::get(b.getInt32Ty(), {b.getInt32Ty(), b.getInt32Ty()}, false);
    llvm::CallInst* call = call_hook(b, hook, type, {v32, operand});
    call->setDoesNotThrow();
    return call;
  }

  std::string name_;
  int warp_size_;
};

}  // namespace

std::unique_ptr<lower::Target> make_host_target(const std::string& name) {
  if (name == host_abi::kTarget32) return std::make_unique<HostTarget>(name, 32);
  if (name == host_abi::kTarget64) return std::make_unique<HostTarget>(name, 64);
  throw Error("tessera: unknown host target '" + name + "' (known: host, host64)");
}

}  // namespace tessera::backend
