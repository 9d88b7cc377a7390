# Installs the build tree into a scratch prefix, builds examples/${CONSUMER} (default: consumer)
# against it with find_package(tessera), and runs the program it builds (named as the folder) on
# the interpreter.
if(NOT CONSUMER)
  set(CONSUMER consumer)
endif()
set(prefix ${BUILD_DIR}/install-test-${CONSUMER})
set(build ${BUILD_DIR}/${CONSUMER}-build)
file(REMOVE_RECURSE ${prefix} ${build})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "cmake --install failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/${CONSUMER} -B ${build} -G Ninja
                        -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release
                        "-DCMAKE_CXX_FLAGS=${CONSUMER_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_FLAGS}"
                        RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configuring the consumer project with find_package(tessera) failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${build} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building the consumer project failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env TESSERA_INTERPRET=1 ${build}/${CONSUMER} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "the consumer program failed")
endif()
