#!/usr/bin/env bash
# Builds the IR fuzzer (tests/fuzz/ir_fuzz.cpp) with clang and runs it for SECONDS on a copy of the
# seed corpus: the input and the expected output of every golden test in tests/ir/*.tir, each a
# whole kernel, plus tests/fuzz/seeds/*.tir. Prints the executions and their rate at the end.
# Exits nonzero on any finding (its input is saved under build-fuzz/findings/).
#
#   tests/fuzz/run_ir_fuzz.sh SECONDS
#
# Environment: TESSERA_FUZZ_CXX (default /usr/bin/clang++-22), TESSERA_FUZZ_BUILD (default
# <repo>/build-fuzz), TESSERA_FUZZ_JOBS (build jobs, default 2).
# Reproduce a finding: build-fuzz/ir_fuzz build-fuzz/findings/crash-<hash>
set -euo pipefail

if [[ $# -ne 1 || ! $1 =~ ^[0-9]+$ ]]; then
  echo "usage: $0 SECONDS" >&2
  exit 2
fi
seconds=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${TESSERA_FUZZ_BUILD:-$root/build-fuzz}
cxx=${TESSERA_FUZZ_CXX:-/usr/bin/clang++-22}

launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$root/tests/fuzz" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" >/dev/null
cmake --build "$build" --target ir_fuzz -j "${TESSERA_FUZZ_JOBS:-2}"

# A golden file is "// RUN: ..." + input + "// EXPECT:" + expected output: two seeds.
corpus=$build/corpus
rm -rf "$corpus"
mkdir -p "$corpus" "$build/findings"
for f in "$root"/tests/ir/*.tir; do
  name=$(basename "$f" .tir)
  awk -v a="$corpus/$name.in.tir" -v b="$corpus/$name.out.tir" \
    '/^\/\/ EXPECT:/ { out = 1; next } { print > (out ? b : a) }' "$f"
done
if compgen -G "$root/tests/fuzz/seeds/*.tir" >/dev/null; then cp "$root"/tests/fuzz/seeds/*.tir "$corpus/"; fi

log=$build/fuzz.log
set +e
"$build/ir_fuzz" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=4096 \
  -dict="$root/tests/fuzz/ir.dict" -artifact_prefix="$build/findings/" -print_final_stats=1 \
  "$corpus" 2>&1 | tee "$log" | grep -E "^#[0-9]+[[:space:]]+(INITED|pulse|DONE)|ERROR|finding|SUMMARY|^Done"
status=${PIPESTATUS[0]}
set -e

runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
echo "ir_fuzz: ${runs:-?} executions in ${seconds} s (${rate:-?} exec/s), exit status $status (log: $log)"
if [[ $status -ne 0 ]]; then
  echo "ir_fuzz: FINDING; inputs under $build/findings/" >&2
fi
exit "$status"
