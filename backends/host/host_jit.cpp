#include "backends/host/host_jit.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/ExecutionEngine/Orc/AbsoluteSymbols.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectTransformLayer.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Passes/OptimizationLevel.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/LEB128.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#include "backends/host/host_abi.hpp"
#include "backends/host/fibers.hpp"
#include "backends/host/host_runtime.hpp"
#include "tessera/error.hpp"

namespace tessera::host {
namespace {

// LLVM reports what it cannot compile through a fatal-error handler that would end the process:
// turn it into an exception (as libtessera does for its own LLVM).
[[noreturn]] void throw_llvm_error(void*, const char* reason, bool) {
  throw InternalError(std::string("tessera: LLVM could not compile a kernel for the host: ") + reason);
}

std::string message_of(llvm::Error e) { return llvm::toString(std::move(e)); }

template <class T>
T take(llvm::Expected<T> v, const char* what) {
  if (!v) throw InternalError(std::string("tessera: host executor: ") + what + ": " + message_of(v.takeError()));
  if constexpr (std::is_reference_v<T>)
    return *v;
  else
    return std::move(*v);
}

// A kernel that synchronizes runs each thread on a fiber stack of FiberStacks::stack_bytes, below
// a guard page: frames beyond it fault. The bound: every frame of the module at once (the entry,
// the kernel, the emulation functions it calls; none recursive), plus kRuntimeReserve for the
// runtime hooks they call (barrier, shuffles, print, check reports: C++ of a few KB).
constexpr std::uint64_t kRuntimeReserve = 16 * 1024;

// The stack frames of one compiled module: their sum and the largest (the .stack_sizes section).
struct Frames {
  std::uint64_t total = 0, largest = 0;
};

void check_fits_fiber_stack(const KernelImage& image, const Frames& frames) {
  const std::uint64_t total = frames.total + kRuntimeReserve;
  if (total <= FiberStacks::stack_bytes) return;
  throw LaunchError("kernel '" + image.kernel + "' needs " + std::to_string(total / 1024) +
                    " KB of stack per thread on the host targets (its largest frame is " + std::to_string(frames.largest / 1024) +
                    " KB), more than a host thread's " + std::to_string(FiberStacks::stack_bytes / 1024) +
                    " KB: fewer elements per thread (smaller blocks or more warps) fit, or run it on the interpreter or a GPU");
}

bool host_has_v3() {
  const llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  for (const char* f : {"avx2", "fma", "f16c", "bmi", "bmi2", "lzcnt", "movbe", "popcnt", "sse4.2", "cx16"}) {
    auto it = features.find(f);
    if (it == features.end() || !it->second) return false;
  }
  return true;
}

// One LLJIT for the process, never destroyed: kernels may be released during static destruction.
class HostJit {
 public:
  static HostJit& get() {
    static HostJit* jit = new HostJit();
    return *jit;
  }

  JitCode compile(const KernelImage& image) {
    auto ctx = std::make_unique<llvm::LLVMContext>();
    llvm::SMDiagnostic diag;
    std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(image.llvm_ir, diag, *ctx);
    if (!m) {
      std::string text;
      llvm::raw_string_ostream os(text);
      diag.print("host target", os);
      throw InternalError("tessera: the host target's IR of kernel '" + image.kernel + "' does not parse: " + text);
    }
    std::unique_ptr<llvm::TargetMachine> tm = take(jtmb_.createTargetMachine(), "no target machine");
    if (m->getDataLayout() != tm->createDataLayout())
      throw InternalError("tessera: the host target's data layout '" + m->getDataLayoutStr() +
                          "' is not this CPU's '" + tm->createDataLayout().getStringRepresentation() + "'");
    m->setTargetTriple(tm->getTargetTriple());
    JitCode code;
    for (const char* hook : {host_abi::kBarrier, host_abi::kShuffleXor, host_abi::kShuffleUp, host_abi::kShuffleDown,
                             host_abi::kShuffleIdx})
      code.synchronizes |= m->getFunction(hook) != nullptr;
    add_entry(*m, image);
    optimize(*m, *tm);
    const std::string object_name = "tessera_kernel_" + std::to_string(++modules_);
    m->setModuleIdentifier(object_name);  // names its object, whose frames record_frames notes

    llvm::orc::JITDylib& jd = take(jit_->createJITDylib(object_name), "no JITDylib");
    jd.addToLinkOrder(*runtime_);
    if (llvm::Error e = jit_->addIRModule(jd, llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx)))) {
      release(&jd);
      throw InternalError("tessera: host executor: cannot add kernel '" + image.kernel + "': " + message_of(std::move(e)));
    }
    try {
      code.entry = take(jit_->lookup(jd, host_abi::kEntry), "compiling the kernel").toPtr<void (*)(void* const*)>();
      if (image.shared_bytes > 0)
        code.shared = take(jit_->lookup(jd, host_abi::kSharedMemory), "no shared memory").toPtr<std::byte*>();
      if (!image.arg_names.empty())
        code.arg_bounds = take(jit_->lookup(jd, host_abi::kArgBounds), "no argument bounds").toPtr<std::uint64_t*>();
      const std::optional<Frames> frames = take_frames(object_name);  // the lookups compiled the module
      if (!frames) throw InternalError("tessera: host executor: no stack sizes recorded for kernel '" + image.kernel + "'");
      if (code.synchronizes) check_fits_fiber_stack(image, *frames);
    } catch (...) {
      take_frames(object_name);
      release(&jd);
      throw;
    }
    code.dylib = &jd;
    return code;
  }

  void release(void* dylib) noexcept {
    if (llvm::Error e = jit_->getExecutionSession().removeJITDylib(*static_cast<llvm::orc::JITDylib*>(dylib)))
      llvm::consumeError(std::move(e));
  }

  const std::string& cpu() const { return cpu_; }

 private:
  HostJit() {
    llvm::install_fatal_error_handler(throw_llvm_error, nullptr);
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    const char* env = std::getenv("TESSERA_HOST_CPU");
    cpu_ = env && *env ? env : host_has_v3() ? "x86-64-v3" : "x86-64";
    jtmb_ = take(llvm::orc::JITTargetMachineBuilder::detectHost(), "no host target");
    jtmb_.setCPU(cpu_);
    jtmb_.getFeatures() = llvm::SubtargetFeatures();  // what the CPU name implies, nothing more
    // Fast instruction selection and register allocation: a test compiles hundreds of kernels, and
    // their run time goes to the checks and the fibers' rendezvous, which better code does not
    // shorten (measured on the examples: O2 with full code generation compiled 5 times slower and
    // ran no faster).
    jtmb_.setCodeGenOptLevel(llvm::CodeGenOptLevel::None);
    // Each object lists its functions' stack frames (.stack_sizes), for check_fits_fiber_stack.
    jtmb_.getOptions().EmitStackSizeSection = true;
    // Concurrent compilation: kernels are loaded from several threads at once (the autotuner's
    // parallel compiles), and the default compiler shares one TargetMachine, which is not safe.
    jit_ = take(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(jtmb_).setSupportConcurrentCompilation(true).create(),
                "cannot start the JIT");
    jit_->getObjTransformLayer().setTransform(
        [this](std::unique_ptr<llvm::MemoryBuffer> object) -> llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> {
          record_frames(*object);
          return std::move(object);
        });
    runtime_ = &take(jit_->createJITDylib("tessera_host_runtime"), "no JITDylib");
    llvm::orc::SymbolMap symbols;
    for (const RuntimeSymbol& s : runtime_symbols())
      symbols[jit_->mangleAndIntern(s.name)] = {llvm::orc::ExecutorAddr::fromPtr(s.address),
                                                llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
    if (llvm::Error e = runtime_->define(llvm::orc::absoluteSymbols(std::move(symbols))))
      throw InternalError("tessera: host executor: cannot define its runtime: " + message_of(std::move(e)));
  }

  // void kEntry(ptr params): loads each argument from the bytes params[i] points to, calls the kernel.
  static void add_entry(llvm::Module& m, const KernelImage& image) {
    llvm::Function* kernel = m.getFunction(image.function);
    if (kernel == nullptr)
      throw InternalError("tessera: the host target's IR has no function '" + image.function + "'");
    llvm::LLVMContext& ctx = m.getContext();
    llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
    auto* entry = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false),
                                         llvm::GlobalValue::ExternalLinkage, host_abi::kEntry, m);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "", entry));
    std::vector<llvm::Value*> args;
    for (unsigned i = 0; i < kernel->arg_size(); ++i) {
      llvm::Value* slot = b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, entry->getArg(0), i));
      args.push_back(b.CreateLoad(kernel->getFunctionType()->getParamType(i), slot));
    }
    b.CreateCall(kernel, args);
    b.CreateRetVoid();
  }

  // O1: the optimizer runs over the lowering's IR (undefined behaviour it relies on would show),
  // at a third of O2's compile time (a test compiles hundreds of specializations).
  static void optimize(llvm::Module& m, llvm::TargetMachine& tm) {
    m.setDataLayout(tm.createDataLayout());
    std::string err;
    llvm::raw_string_ostream os(err);
    if (llvm::verifyModule(m, &os)) throw InternalError("tessera: the host target produced invalid LLVM IR: " + err);
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(&tm);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O1).run(m, mam);
  }

  // An object's .stack_sizes: per function its address (8 bytes, relocated) and its frame's bytes
  // (ULEB128). Kept under the object's name (its module's, with ORC's suffix) until take_frames.
  void record_frames(const llvm::MemoryBuffer& object) {
    Frames f;
    auto file = llvm::object::ObjectFile::createObjectFile(object.getMemBufferRef());
    if (!file) {
      llvm::consumeError(file.takeError());
      return;
    }
    for (const llvm::object::SectionRef& section : (*file)->sections()) {
      auto name = section.getName();
      if (!name || *name != ".stack_sizes") {
        if (!name) llvm::consumeError(name.takeError());
        continue;
      }
      auto contents = section.getContents();
      if (!contents) {
        llvm::consumeError(contents.takeError());
        continue;
      }
      const auto* p = reinterpret_cast<const std::uint8_t*>(contents->data());
      const auto* end = p + contents->size();
      while (end - p > 8) {
        p += 8;
        unsigned n = 0;
        const std::uint64_t bytes = llvm::decodeULEB128(p, &n, end);
        if (n == 0) break;
        p += n;
        f.total += bytes;
        f.largest = std::max(f.largest, bytes);
      }
    }
    std::lock_guard<std::mutex> lock(frames_mutex_);
    frames_[object.getBufferIdentifier().str()] = f;
  }
  std::optional<Frames> take_frames(const std::string& module_name) {
    std::lock_guard<std::mutex> lock(frames_mutex_);
    for (auto it = frames_.begin(); it != frames_.end(); ++it)
      if (it->first.rfind(module_name + "-", 0) == 0 || it->first == module_name) {
        Frames f = it->second;
        frames_.erase(it);
        return f;
      }
    return std::nullopt;
  }

  std::mutex frames_mutex_;
  std::map<std::string, Frames> frames_;
  std::string cpu_;
  llvm::orc::JITTargetMachineBuilder jtmb_{llvm::Triple()};
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  llvm::orc::JITDylib* runtime_ = nullptr;
  std::atomic<std::uint64_t> modules_{0};
};

}  // namespace

JitCode jit_compile(const KernelImage& image) { return HostJit::get().compile(image); }

void jit_release(void* dylib) noexcept { HostJit::get().release(dylib); }

const char* jit_cpu() { return HostJit::get().cpu().c_str(); }

}  // namespace tessera::host
