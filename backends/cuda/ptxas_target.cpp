// ptxas as a child process (see ptxas.hpp). Named *_target.cpp so that CMake puts it in
// tessera_codegen; it does not use LLVM.
#include "backends/cuda/ptxas.hpp"

#include <sys/wait.h>

#include <cstdlib>
#include <vector>

#include "backends/child_process.hpp"
#include "tessera/error.hpp"

namespace tessera::backend {

std::string find_ptxas() {
  if (const char* env = std::getenv("TESSERA_PTXAS"); env != nullptr && *env != '\0') {
    if (std::string(env) == "0") return "";
    if (!is_executable(env)) throw Error(std::string("tessera: TESSERA_PTXAS=") + env + " is not an executable file");
    return env;
  }
  if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && *home != '\0')
    if (const std::string p = std::string(home) + "/bin/ptxas"; is_executable(p)) return p;
  if (is_executable("/usr/local/cuda/bin/ptxas")) return "/usr/local/cuda/bin/ptxas";
  return find_on_path("ptxas");
}

PtxasResult run_ptxas(const std::string& ptxas, const std::string& ptx, const std::string& arch, int opt_level,
                      int max_registers, bool line_info) {
  TempFile input, output, log;
  input.write_all(ptx);
  std::vector<std::string> args{ptxas, "-arch=" + arch, "-O" + std::to_string(opt_level), "-v"};
  if (max_registers > 0) args.push_back("--maxrregcount=" + std::to_string(max_registers));
  if (line_info) args.push_back("-lineinfo");
  args.insert(args.end(), {"-o", output.path(), input.path()});
  const int status = run_process(args, log);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error("tessera: " + ptxas + " failed to assemble the kernel (" + describe_status(status) + "):\n" + log.read_all());
  PtxasResult r{output.read_all(), log.read_all()};
  if (r.cubin.empty()) throw Error("tessera: " + ptxas + " wrote an empty cubin");
  return r;
}

}  // namespace tessera::backend
