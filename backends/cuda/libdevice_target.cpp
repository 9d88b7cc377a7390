// CUDA's libdevice: found at run time (no build-time CUDA dependency) and linked into the kernel
// module before optimization, so that its __nv_* functions inline and NVVMReflect folds their
// configuration checks. Where it is absent, or TESSERA_LIBDEVICE=0, tessera's own math is used.
#include <sys/stat.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Module.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Transforms/IPO/Internalize.h>

#include "tessera/error.hpp"

namespace tessera::backend {
namespace {

bool is_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The file's bytes, read once per path per process: every compile parses them into its own context.
const std::string& file_bytes(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, std::string> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(path);
  if (it != cache.end()) return it->second;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (!in) throw Error("tessera: cannot read libdevice at " + path);
  return cache[path] = ss.str();
}

}  // namespace

// $TESSERA_LIBDEVICE (a path; "0" turns libdevice off), else $CUDA_HOME's, else /usr/local/cuda's;
// "" when none is found. Read at every compile, so that a process may switch between the two.
std::string libdevice_path() {
  if (const char* env = std::getenv("TESSERA_LIBDEVICE"); env != nullptr && *env != '\0') {
    const std::string p = env;
    if (p == "0") return "";
    if (!is_file(p)) throw Error("tessera: TESSERA_LIBDEVICE=" + p + " is not a file (set it to libdevice.10.bc, or 0 for tessera's own math)");
    return p;
  }
  if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && *home != '\0') {
    const std::string p = std::string(home) + "/nvvm/libdevice/libdevice.10.bc";
    if (is_file(p)) return p;
  }
  const std::string p = "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc";
  return is_file(p) ? p : "";
}

}  // namespace tessera::backend

namespace tessera::lower {
// The disk cache key must change with the math library a compile links: libdevice (which file, of
// what size) or tessera's own code. AMDGPU targets link none.
std::string device_library_fingerprint(const std::string& target_name) {
  if (target_name.rfind("sm_", 0) != 0) return "";
  const std::string path = backend::libdevice_path();
  if (path.empty()) return "own";
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return path + ":" + std::to_string(ec ? 0 : size);
}
}  // namespace tessera::lower

namespace tessera::backend {

// Links libdevice into `m` when `m` calls any __nv_* function; only what is called is linked, and
// it becomes internal, so the optimizer inlines it and drops the rest.
void link_libdevice(llvm::Module& m) {
  bool needed = false;
  for (const llvm::Function& f : m.functions()) needed |= f.isDeclaration() && f.getName().starts_with("__nv_");
  if (!needed) return;
  const std::string path = libdevice_path();
  if (path.empty()) throw InternalError("tessera: the kernel calls libdevice, but libdevice is not available");
  const std::string& bytes = file_bytes(path);
  auto buffer = llvm::MemoryBuffer::getMemBuffer(bytes, path, /*RequiresNullTerminator=*/false);
  llvm::Expected<std::unique_ptr<llvm::Module>> lib = llvm::parseBitcodeFile(buffer->getMemBufferRef(), m.getContext());
  if (!lib) throw Error("tessera: cannot parse libdevice at " + path + ": " + llvm::toString(lib.takeError()));
  // libdevice says "nvptx64-nvidia-gpulibs" and an old data layout; take the kernel's, as clang
  // does, so that the linker does not warn.
  (*lib)->setTargetTriple(m.getTargetTriple());
  (*lib)->setDataLayout(m.getDataLayout());
  const bool failed = llvm::Linker::linkModules(
      m, std::move(*lib), llvm::Linker::Flags::LinkOnlyNeeded, [](llvm::Module& mod, const llvm::StringSet<>& linked) {
        llvm::internalizeModule(mod, [&linked](const llvm::GlobalValue& gv) {
          return !gv.hasName() || linked.count(gv.getName()) == 0;
        });
      });
  if (failed) throw Error("tessera: linking libdevice from " + path + " failed");
  // NVVMReflect answers libdevice's __nvvm_reflect("__CUDA_FTZ") from this flag: 0 selects the
  // IEEE paths that keep subnormals, matching the rest of tessera's f32 arithmetic.
  if (m.getModuleFlag("nvvm-reflect-ftz") == nullptr) m.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", std::uint32_t{0});
}

}  // namespace tessera::backend
