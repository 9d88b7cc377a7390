// Skipped test cases, for Catch2 v2 (which has no SKIP): a case that cannot check what it claims,
// because a tool it needs is missing (ptxas, ld.lld, llvm-readelf), calls tessera::test::skip(why)
// and returns (or goes on with the checks it can still make). The test program's main
// (tests/catch_main.cpp) then exits with kSkipExitCode instead of 0 when nothing failed, and ctest,
// which runs each test case in a process of its own (catch_discover_tests) with
// SKIP_RETURN_CODE 77, shows the case as "Not Run (skipped)" rather than "Passed". A failed
// check still fails the case.
#pragma once
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <utility>

namespace tessera::test {

inline constexpr int kSkipExitCode = 77;

inline std::atomic<int>& skipped_count() {
  static std::atomic<int> count{0};
  return count;
}

// Marks the running test case as (at least partly) skipped, and says why in its output (once per
// test case and reason, however often a case's helpers call it).
inline void skip(const std::string& why) {
  static std::mutex mutex;
  static std::set<std::pair<std::string, std::string>> seen;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!seen.emplace(Catch::getResultCapture().getCurrentTestName(), why).second) return;
  }
  ++skipped_count();
  WARN("SKIPPED: " << why);
}

// What main returns for a run whose Catch result is `catch_result` (the number of failed
// assertions, at most 255): a failure stays a failure, never 77 (77 failed assertions exit 78);
// a run without failures that skipped something exits kSkipExitCode.
inline int exit_code_with_skips(int catch_result) {
  if (catch_result != 0) return catch_result == kSkipExitCode ? kSkipExitCode + 1 : catch_result;
  if (skipped_count() == 0) return 0;
  std::fprintf(stderr, "SKIPPED: %d skip(s) (the SKIPPED warnings above say which and why); exit code %d\n",
               skipped_count().load(), kSkipExitCode);
  return kSkipExitCode;
}

}  // namespace tessera::test
