#!/usr/bin/env bash
# The hardening checks CI runs after the test suite (issue "Hardening"): the whole ctest suite
# built with AddressSanitizer and UndefinedBehaviorSanitizer (any report fails its test), then the
# IR fuzzer for FUZZ_SECONDS (default 120) from the golden .tir corpus.
#   bash tests/ci/sanitize.sh            # from the repository root or anywhere
set -euo pipefail
cd "$(dirname "$0")/../.."
FUZZ_SECONDS=${FUZZ_SECONDS:-120}
start=$(date +%s)
cmake --preset sanitize >/dev/null
cmake --build build-sanitize
built=$(date +%s)
# halt_on_error: a UBSan report is a failure, not a line in a log; leaks are reported at exit.
# allocator_may_return_null: tests ask for impossible sizes on purpose and expect a tessera::Error.
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# glibc's own dlerror buffer is the one leak suppressed; lsan.supp says why.
export LSAN_OPTIONS=suppressions=$PWD/tests/ci/lsan.supp
ctest --test-dir build-sanitize --output-on-failure
tested=$(date +%s)
bash tests/fuzz/run_ir_fuzz.sh "$FUZZ_SECONDS"
echo "sanitize.sh: build $((built - start)) s, ctest under ASan+UBSan $((tested - built)) s, fuzz $(( $(date +%s) - tested )) s"
