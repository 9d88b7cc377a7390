// Running external tools (ld.lld for AMDGPU, ptxas for NVIDIA) as child processes through
// temporary files that are always removed. No LLVM here.
#pragma once
#include <string>
#include <vector>

namespace tessera::backend {

bool is_executable(const std::string& path);
// `name` in the directories of PATH, or "".
std::string find_on_path(const std::string& name);

// A temporary file made with mkstemp and removed when this goes out of scope, so that no
// failure path leaves files behind.
class TempFile {
 public:
  TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile();
  const std::string& path() const { return path_; }
  int fd() const { return fd_; }
  void write_all(const std::string& bytes) const;
  std::string read_all() const;

 private:
  int fd_ = -1;
  std::string path_;
};

// Runs args[0] with stdin from /dev/null and stdout and stderr into `log`; returns the wait status.
int run_process(const std::vector<std::string>& args, const TempFile& log);
// "exit code 1", "killed by signal 9".
std::string describe_status(int status);

}  // namespace tessera::backend
