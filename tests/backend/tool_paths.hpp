// Finding and running the external tools that backend tests check their output with (ptxas,
// llvm-readelf), and temporary files for their inputs. Header-only so any test can include it.
// A test case that needs a tool gets it from ptxas_or_skip() / readelf_or_skip(): where the tool is
// missing, the case is marked skipped (tests/skip.hpp), so that ctest shows it as not run.
#pragma once
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "tests/skip.hpp"

namespace tessera::test {

// How PTX spells the bytes of a string constant: "{112, 105, ...}", here without the braces.
inline std::string as_ptx_bytes(const std::string& text) {
  std::string out;
  for (unsigned char c : text) out += (out.empty() ? "" : ", ") + std::to_string(c);
  return out;
}

inline bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// The first of `names` found on PATH, then the first of `fallbacks` that exists; "" if none.
inline std::string find_tool(std::initializer_list<const char*> names, std::initializer_list<const char*> fallbacks) {
  const char* path = std::getenv("PATH");
  for (const char* name : names) {
    std::stringstream dirs(path != nullptr ? path : "");
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (!dir.empty() && is_executable_file(dir + "/" + name)) return dir + "/" + name;
  }
  for (const char* p : fallbacks)
    if (is_executable_file(p)) return p;
  return "";
}

// CUDA's PTX assembler; TESSERA_PTXAS overrides, and TESSERA_PTXAS=0 means none (as for the
// runtime: README, "Environment").
inline std::string find_ptxas() {
  if (const char* env = std::getenv("TESSERA_PTXAS"); env != nullptr && std::string(env) == "0") return "";
  if (const char* env = std::getenv("TESSERA_PTXAS"); env != nullptr && is_executable_file(env)) return env;
  return find_tool({"ptxas"}, {"/usr/local/cuda/bin/ptxas"});
}

// ptxas, or "" after marking the running test case skipped.
inline std::string ptxas_or_skip() {
  std::string p = find_ptxas();
  if (p.empty()) skip("ptxas not found (TESSERA_PTXAS=0, or not on PATH nor at /usr/local/cuda/bin/ptxas)");
  return p;
}

// llvm-readelf; the versioned name first, because Debian's plain llvm-readelf may be an older LLVM
// that does not know the newest AMDGPU processors.
inline std::string find_readelf() {
  return find_tool({"llvm-readelf-22", "llvm-readelf"}, {"/usr/lib/llvm-22/bin/llvm-readelf"});
}

// llvm-readelf, or "" after marking the running test case skipped.
inline std::string readelf_or_skip() {
  std::string p = find_readelf();
  if (p.empty()) skip("llvm-readelf not found (llvm-readelf-22 / llvm-readelf on PATH, /usr/lib/llvm-22/bin)");
  return p;
}

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `command` through the shell; arguments must already be quoted where needed.
inline CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buf{};
  for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;) result.output.append(buf.data(), n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// A file with the given contents, removed when this goes out of scope.
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& contents, const std::string& suffix = "") {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/tessera-test-XXXXXX" + suffix;
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    const int fd = ::mkstemps(buf.data(), static_cast<int>(suffix.size()));
    if (fd >= 0) ::close(fd);
    path_ = buf.data();
    std::ofstream(path_, std::ios::binary) << contents;
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  ~ScratchFile() { ::unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// `ptx` assembled by `ptxas` for `arch` (output discarded): the exit code and ptxas's messages.
// ptxas on `ptx` for `arch`, its warnings errors (a warning such as C7515, a wgmma serialized
// because its accumulators are read early, is a defect of ours), its performance notes (C7510,
// C7511: wgmma serialized) turned into a failure too.
inline CommandResult assemble_ptx(const std::string& ptxas, const std::string& ptx, const std::string& arch) {
  ScratchFile file(ptx, ".ptx");
  CommandResult r = run_command(ptxas + " --warning-as-error -arch=" + arch + " " + file.path() + " -o /dev/null");
  if (r.exit_code == 0 && r.output.find("Performance Loss") != std::string::npos) r.exit_code = 1;
  return r;
}

}  // namespace tessera::test
