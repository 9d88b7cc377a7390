// The main of every Catch test program: Catch's own, except that a run in which a test case was
// skipped (tests/skip.hpp) and nothing failed exits 77, which ctest reports as skipped.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "tests/skip.hpp"

int main(int argc, char* argv[]) {
  Catch::Session session;
  if (const int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
  return tessera::test::exit_code_with_skips(session.run());
}
