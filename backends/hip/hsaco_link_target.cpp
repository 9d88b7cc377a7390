// ld.lld as a child process (see hsaco_link.hpp). Named *_target.cpp so that CMake puts it in
// tessera_codegen beside the AMDGPU target, its only user; it does not use LLVM itself.
#include "backends/hip/hsaco_link.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "tessera/error.hpp"

extern char** environ;

namespace tessera::backend {
namespace {

bool is_executable(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (is_executable(candidate)) return candidate;
  }
  return "";
}

// A temporary file made with mkstemp and removed when this goes out of scope, so that no
// failure path leaves files behind.
class TempFile {
 public:
  TempFile() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/tessera-lld-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    fd_ = ::mkstemp(buf.data());
    if (fd_ < 0)
      throw Error("tessera: cannot create a temporary file " + pattern + ": " + std::strerror(errno));
    path_ = buf.data();
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    ::unlink(path_.c_str());
  }
  const std::string& path() const { return path_; }
  int fd() const { return fd_; }

  void write_all(const std::string& bytes) const {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw Error("tessera: cannot write " + path_ + ": " + std::strerror(errno));
      done += static_cast<size_t>(n);
    }
  }
  std::string read_all() const {
    std::ifstream in(path_, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

 private:
  int fd_ = -1;
  std::string path_;
};

// Runs argv[0] with stdout and stderr into `log`; returns the wait status.
int run_process(const std::vector<std::string>& args, const TempFile& log) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, log.fd(), 1);
  posix_spawn_file_actions_adddup2(&actions, log.fd(), 2);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw Error("tessera: cannot run " + args[0] + ": " + std::strerror(rc));

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw Error("tessera: waiting for " + args[0] + ": " + std::strerror(errno));
  }
  return status;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

}  // namespace

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
