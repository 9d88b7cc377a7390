// The small interface between the common lowering (tile IR -> LLVM IR) and one GPU target.
// Adding a target means implementing this interface in backends/<target>/; the common lowering
// in jit/lower/ never names a target.
//
// This header includes LLVM: include it only from jit/lower and backends/*_target.cpp.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "jit/lower/codegen.hpp"

namespace tessera::lower {


class Target {
 public:
  virtual ~Target() = default;
  virtual std::string name() const = 0;          // "sm_90a", "sm_80", "gfx942", "gfx90a"
  virtual std::string triple() const = 0;
  virtual std::string data_layout() const = 0;
  virtual int warp_size() const = 0;
  virtual unsigned global_address_space() const = 0;   // where kernel pointer arguments live
  virtual unsigned shared_address_space() const = 0;

  // Special registers and synchronization, emitted at the builder's insertion point.
  virtual llvm::Value* thread_id(llvm::IRBuilder<>& b) const = 0;           // i32, x only
  virtual llvm::Value* program_id(llvm::IRBuilder<>& b, int axis) const = 0; // i32
  virtual llvm::Value* num_programs(llvm::IRBuilder<>& b, int axis) const = 0;
  virtual void barrier(llvm::IRBuilder<>& b) const = 0;
  // Marks `f` as a kernel entry run by `num_threads` threads per program.
  virtual void mark_kernel(llvm::Function* f, int num_threads) const = 0;
  // Optional target math (e.g. fast exp2 / sqrt); null means "use the LLVM intrinsic".
  virtual llvm::Value* math(llvm::IRBuilder<>& b, const std::string& fn, llvm::Value* x) const { return nullptr; }
  // A load of `type` from `ptr` performed only where `pred` (i1) holds, else `other`; and the
  // matching store. The defaults (jit/lower/target_defaults.cpp) branch around the access; a
  // target may emit predicated instructions instead.
  virtual llvm::Value* predicated_load(llvm::IRBuilder<>& b, llvm::Type* type, llvm::Value* ptr, llvm::Value* pred,
                                       llvm::Value* other, unsigned align) const;
  virtual void predicated_store(llvm::IRBuilder<>& b, llvm::Value* value, llvm::Value* ptr, llvm::Value* pred,
                                unsigned align) const;

  // Runs LLVM's optimization pipeline and code generation; takes ownership of the module.
  virtual DeviceBinary compile(std::unique_ptr<llvm::Module> m, const std::string& kernel_name) const = 0;
};

// "sm_80", "sm_90a", "gfx90a", "gfx942". Throws tessera::Error for an unknown name.
std::unique_ptr<Target> make_target(const std::string& name);

}  // namespace tessera::lower
