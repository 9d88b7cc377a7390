# A rebuilt compiler has another build identity: hash the compiler's sources as the build does
# (cmake/build_id.cmake), then a copy of them (same identity), then the copy with one byte of the
# lowering changed (another identity). The disk-cache key holds the identity
# (tests/pipeline/build_identity_test.cpp), so the changed compiler misses every old entry.
#   cmake -DSOURCE_DIR=... -DBUILD_DIR=... -P build_identity_test.cmake
set(work ${BUILD_DIR}/build-identity-test)
file(REMOVE_RECURSE ${work})
file(STRINGS ${BUILD_DIR}/compiler_files.txt files)
foreach(f ${files})
  configure_file(${SOURCE_DIR}/${f} ${work}/src/${f} COPYONLY)
endforeach()
function(identity root out)
  execute_process(COMMAND ${CMAKE_COMMAND} -DROOT=${root} -DLIST=${BUILD_DIR}/compiler_files.txt
                          -DOUT=${work}/id.cpp -DPRINT=1 -P ${SOURCE_DIR}/cmake/build_id.cmake
                  ERROR_VARIABLE id ERROR_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  if(rc OR NOT id MATCHES "^[0-9a-f]+$")
    message(FATAL_ERROR "build_id.cmake failed: ${rc} ${id}")
  endif()
  set(${out} ${id} PARENT_SCOPE)
endfunction()
identity(${SOURCE_DIR} original)
identity(${work}/src copy)
file(APPEND ${work}/src/jit/lower/lowering.cpp " ")
identity(${work}/src changed)
message(STATUS "identities: original ${original}, copy ${copy}, changed ${changed}")
if(NOT original STREQUAL copy)
  message(FATAL_ERROR "the same sources gave two identities")
endif()
if(original STREQUAL changed)
  message(FATAL_ERROR "a changed lowering kept the build identity")
endif()
file(REMOVE_RECURSE ${work})
