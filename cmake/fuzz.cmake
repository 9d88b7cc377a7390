# The IR fuzzer from the main build (include(cmake/fuzz.cmake) in the top-level CMakeLists.txt).
#
# The fuzzer itself is a project of its own (tests/fuzz/CMakeLists.txt): it needs clang for
# libFuzzer and instruments every IR source with ASan and UBSan, which the main build must not.
# tests/fuzz/run_ir_fuzz.sh configures it in <source>/build-fuzz, builds it and runs it; this file
# only makes that reachable from here:
#   cmake --build build --target ir_fuzz        runs it for TESSERA_FUZZ_SECONDS
#   -DTESSERA_FUZZ=ON                           also makes it a ctest test (label "fuzz"), as CI runs it
option(TESSERA_FUZZ "Run the IR fuzzer (libFuzzer, clang) as a ctest test" OFF)
set(TESSERA_FUZZ_SECONDS 120 CACHE STRING "How long the IR fuzzer runs (seconds)")
set(TESSERA_FUZZ_CXX /usr/bin/clang++-22 CACHE FILEPATH "The clang that builds the IR fuzzer")

set(_tessera_fuzz_env TESSERA_FUZZ_CXX=${TESSERA_FUZZ_CXX} TESSERA_FUZZ_BUILD=${PROJECT_BINARY_DIR}/fuzz)
add_custom_target(ir_fuzz
  COMMAND ${CMAKE_COMMAND} -E env ${_tessera_fuzz_env}
          ${PROJECT_SOURCE_DIR}/tests/fuzz/run_ir_fuzz.sh ${TESSERA_FUZZ_SECONDS}
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
  USES_TERMINAL
  COMMENT "Fuzzing the IR parser, verifier and passes for ${TESSERA_FUZZ_SECONDS} s")

if(TESSERA_FUZZ AND TESSERA_BUILD_TESTS)
  if(NOT EXISTS ${TESSERA_FUZZ_CXX})
    message(FATAL_ERROR "TESSERA_FUZZ needs clang (TESSERA_FUZZ_CXX=${TESSERA_FUZZ_CXX} not found; "
                        "Debian: apt-get install clang-22 libclang-rt-22-dev)")
  endif()
  add_test(NAME ir_fuzz
           COMMAND ${CMAKE_COMMAND} -E env ${_tessera_fuzz_env}
                   ${PROJECT_SOURCE_DIR}/tests/fuzz/run_ir_fuzz.sh ${TESSERA_FUZZ_SECONDS})
  # The build of the fuzzer (a few minutes on 2 cores) comes on top of the run.
  math(EXPR _tessera_fuzz_timeout "${TESSERA_FUZZ_SECONDS} + 1200")
  set_tests_properties(ir_fuzz PROPERTIES LABELS fuzz TIMEOUT ${_tessera_fuzz_timeout} RUN_SERIAL TRUE)
endif()
