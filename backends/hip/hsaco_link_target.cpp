// ld.lld as a child process (see hsaco_link.hpp). Named *_target.cpp so that CMake puts it in
// tessera_codegen beside the AMDGPU target, its only user; it does not use LLVM itself.
#include "backends/hip/hsaco_link.hpp"

#include <sys/wait.h>

#include <cstdlib>
#include <vector>

#include "backends/child_process.hpp"
#include "tessera/error.hpp"

namespace tessera::backend {

std::string find_lld(std::string* searched) {
  if (const char* env = std::getenv("TESSERA_LLD"); env != nullptr && *env != '\0') {
    if (!is_executable(env))
      throw Error(std::string("tessera: TESSERA_LLD=") + env + " is not an executable file");
    return env;
  }
  std::vector<std::string> fixed;
  if (const char* rocm = std::getenv("ROCM_PATH"); rocm != nullptr && *rocm != '\0')
    fixed.push_back(std::string(rocm) + "/llvm/bin/ld.lld");
  fixed.push_back("/opt/rocm/llvm/bin/ld.lld");
  for (const std::string& p : fixed)
    if (is_executable(p)) return p;
  // The versioned name first: on Debian a plain `ld.lld` may be an older lld (lld 14 here) that
  // predates the code object LLVM 22 writes.
  for (const char* name : {"ld.lld-22", "ld.lld"})
    if (std::string p = find_on_path(name); !p.empty()) return p;
  if (is_executable("/usr/lib/llvm-22/bin/ld.lld")) return "/usr/lib/llvm-22/bin/ld.lld";
  if (searched != nullptr) {
    *searched = "$TESSERA_LLD (unset), ";
    for (const std::string& p : fixed) *searched += p + ", ";
    *searched += "ld.lld-22 and ld.lld on PATH, /usr/lib/llvm-22/bin/ld.lld";
  }
  return "";
}

std::string link_hsaco(const std::string& object_bytes) {
  std::string searched;
  const std::string lld = find_lld(&searched);
  if (lld.empty())
    throw Error("tessera: cannot link an AMD GPU code object: no ld.lld found (looked at " + searched +
                "). Install lld (e.g. Debian's lld-22) or ROCm, or set TESSERA_LLD=/path/to/ld.lld");
  TempFile input;
  TempFile output;
  TempFile log;
  input.write_all(object_bytes);
  const int status = run_process({lld, "-shared", "-o", output.path(), input.path()}, log);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error("tessera: " + lld + " failed to link the HSACO (" + describe_status(status) + "):\n" +
                log.read_all());
  std::string hsaco = output.read_all();
  if (hsaco.empty()) throw Error("tessera: " + lld + " wrote an empty HSACO");
  return hsaco;
}

}  // namespace tessera::backend
