// What the process writes to a file descriptor (stdout: 1, stderr: 2) while a function runs: the
// descriptor is pointed at a temporary file and restored afterwards, also when the function throws.
// Works for output the C library, the CUDA driver (device printf) or anything else writes there.
#pragma once
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace test_output {

template <class F>
std::string capture_fd(int fd, F&& f) {
  std::FILE* stream = fd == 1 ? stdout : stderr;
  std::fflush(stream);
  std::FILE* tmp = std::tmpfile();
  if (!tmp) throw std::runtime_error("capture_fd: no temporary file");
  const int saved = ::dup(fd);
  ::dup2(::fileno(tmp), fd);
  auto restore = [&] {
    std::fflush(stream);
    ::dup2(saved, fd);
    ::close(saved);
  };
  try {
    f();
  } catch (...) {
    restore();
    std::fclose(tmp);
    throw;
  }
  restore();
  std::rewind(tmp);
  std::string text;
  for (int c; (c = std::fgetc(tmp)) != EOF;) text += static_cast<char>(c);
  std::fclose(tmp);
  return text;
}

}  // namespace test_output
