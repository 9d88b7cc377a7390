// The LLVM-free face of code generation: tile IR in, a device binary out. The runtime includes
// this header; only jit/lower and backends/*_target.cpp see LLVM.
#pragma once
#include <string>

#include "jit/ir/ir.hpp"

namespace tessera::lower {

// What a compile produces for the runtime to load.
struct DeviceBinary {
  std::string format;           // "ptx" (text) or "hsaco" (ELF bytes)
  std::string data;
  std::string kernel_name;
  std::string assembly;         // PTX text or AMDGCN assembly, for TESSERA_DUMP and tests
  std::string llvm_ir;          // the LLVM IR before optimization, when asked for
  int num_threads = 0;
  int shared_bytes = 0;
};

// Warp (wavefront) size of a named target: 32 for sm_*, 64 for gfx*.
int target_warp_size(const std::string& target_name);

// Code generation settings that change the device code (part of every cache key).
struct CodegenOptions {
  int max_registers = 0;   // 0: no cap; else .maxnreg on NVIDIA
  bool line_info = false;  // debug locations of the ops' source lines: .file/.loc in PTX
  bool fp_fusion = false;  // float mul/add may contract to fma (where the target allows it)
  bool debug = false;      // asserts and signed-overflow checks compiled in (else asserts are dropped)
  bool keep_llvm_ir = false;
};

// The symbol of a kernel named `name` in PTX and in an AMDGPU ELF: the name itself when it is a
// valid identifier ([A-Za-z_][A-Za-z0-9_]*), else the name with every other byte replaced by '_'
// (and '_' in front of a leading digit), so that "ns::f<T>", "my kernel" or "norm.fwd" compile.
// Names longer than 256 bytes keep 240 and a hash of the whole. Each module holds one kernel, so
// two names that map to one symbol never meet. An empty name is refused before (runtime checks).
std::string kernel_symbol(const std::string& name);

// Lowers a module whose tiles already carry layouts (transforms::assign_layouts) and compiles it
// for `target_name` ("sm_80", "sm_90a", "gfx90a", "gfx942").
DeviceBinary compile_to_device(const ir::Module& m, const std::string& target_name, const CodegenOptions& options = {});

// "22.1.0": part of the disk cache key (another LLVM may generate other code).
std::string llvm_version();
// Which device math library a compile for `target_name` links now ("<libdevice path>:<bytes>",
// "own", or "" for targets without one): part of the disk cache key.
std::string device_library_fingerprint(const std::string& target_name);

}  // namespace tessera::lower
