// The LLVM steps every target shares: make a TargetMachine, run the O3 pipeline, emit code.
// LLVM types are only forward-declared here so that this header stays LLVM-free (DESIGN.md:
// LLVM headers live in jit/lower/target.hpp and the *_target.cpp files only).
#pragma once
#include <memory>
#include <string>

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace tessera::backend {

// A TargetMachine for `triple`/`cpu` at O3. The LLVM target must already be initialized.
// Throws tessera::Error when LLVM does not know the triple.
std::unique_ptr<llvm::TargetMachine> create_target_machine(const std::string& triple,
                                                           const std::string& cpu,
                                                           const std::string& features);

// Sets triple and data layout from `tm`, verifies the module (a broken module is a tessera bug:
// InternalError with the verifier's message) and runs the new pass manager's O3 pipeline.
void optimize_module(llvm::Module& m, llvm::TargetMachine& tm);

enum class EmitKind { assembly, object };

// Runs code generation and returns the assembly text or the relocatable object bytes.
// Code generation rewrites the IR it runs on: to emit twice, emit from a clone the first time.
std::string emit_code(llvm::Module& m, llvm::TargetMachine& tm, EmitKind kind);

}  // namespace tessera::backend
