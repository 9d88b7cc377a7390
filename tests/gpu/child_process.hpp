// GPU tests of launches that trap (device_assert, debug mode's checks): a trap leaves the CUDA
// context unusable, so the failing launch runs in a child process, this test binary run again with
// a hidden case's tag, and the test reads the child's exit code and output.
#pragma once
#include <catch2/catch.hpp>

#include <unistd.h>

#include <string>
#include <vector>

#include "tests/backend/tool_paths.hpp"

namespace tessera::test {

// This test binary run again with `tag`, in its own process: its exit code and output.
inline CommandResult run_child(const std::string& tag) {
  std::vector<char> self(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size() - 1);
  REQUIRE(n > 0);
  return run_command("CUDA_CACHE_DISABLE=1 '" + std::string(self.data(), static_cast<std::size_t>(n)) + "' '" + tag + "'");
}

// The child with `tag` failed, its output holding each of `expected` and CUDA_ERROR_ASSERT (the
// device assert that stopped it).
inline void check_child_trapped(const std::string& tag, const std::vector<std::string>& expected) {
  const CommandResult r = run_child(tag);
  INFO(r.output);
  CHECK(r.exit_code != 0);
  for (const std::string& text : expected) {
    INFO(text);
    CHECK(r.output.find(text) != std::string::npos);
  }
  CHECK(r.output.find("CUDA_ERROR_ASSERT") != std::string::npos);
}

}  // namespace tessera::test
