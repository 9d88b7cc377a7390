// Shared LLVM steps of the NVPTX and AMDGPU targets (see backends/llvm_pipeline.hpp).
// It lives in backends/cuda/ only because CMake globs *_target.cpp from backends/cuda and
// backends/hip into tessera_codegen; nothing in it is specific to CUDA.
#include "backends/llvm_pipeline.hpp"

#include <llvm/ADT/SmallVector.h>
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/OptimizationLevel.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CodeGen.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Triple.h>

#include "tessera/error.hpp"

namespace tessera::backend {

std::unique_ptr<llvm::TargetMachine> create_target_machine(const std::string& triple,
                                                           const std::string& cpu,
                                                           const std::string& features) {
  const llvm::Triple tt(triple);
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(tt, error);
  if (target == nullptr)
    throw Error("tessera: LLVM has no target for triple '" + triple + "': " + error);
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      tt, cpu, features, options, llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (tm == nullptr)
    throw Error("tessera: LLVM could not create a target machine for " + triple + " / " + cpu);
  return tm;
}

static void verify_or_throw(const llvm::Module& m) {
  std::string message;
  llvm::raw_string_ostream os(message);
  if (llvm::verifyModule(m, &os))
    throw InternalError("tessera: the lowering produced invalid LLVM IR for module '" +
                        m.getModuleIdentifier() + "':\n" + os.str());
}

void optimize_module(llvm::Module& m, llvm::TargetMachine& tm) {
  m.setTargetTriple(tm.getTargetTriple());
  m.setDataLayout(tm.createDataLayout());
  verify_or_throw(m);

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // A GPU has no libm or libc: without this, O3 may turn math into calls to functions that the
  // device code cannot link against (pow -> exp2 calls, memset loops -> memset).
  llvm::TargetLibraryInfoImpl tlii(tm.getTargetTriple());
  tlii.disableAllFunctions();
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tlii); });

  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(m, mam);
}

std::string emit_code(llvm::Module& m, llvm::TargetMachine& tm, EmitKind kind) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  const auto file_type = kind == EmitKind::object ? llvm::CodeGenFileType::ObjectFile
                                                  : llvm::CodeGenFileType::AssemblyFile;
  // addPassesToEmitFile returns true when the target cannot emit this kind of file.
  if (tm.addPassesToEmitFile(pm, os, nullptr, file_type))
    throw Error("tessera: LLVM target " + tm.getTargetTriple().str() + " cannot emit " +
                (kind == EmitKind::object ? "an object file" : "assembly"));
  pm.run(m);
  return std::string(buffer.data(), buffer.size());
}

}  // namespace tessera::backend
