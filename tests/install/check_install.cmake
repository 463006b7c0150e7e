# The installed C++ package, as a user meets it: `cmake --install` of this build into a prefix,
# then tests/install/consumer configured with find_package(epsjoin CONFIG REQUIRED) against that
# prefix alone, built and run. Everything lives in one new folder under TMPDIR, removed at the
# end whatever happened.
# cmake -DBUILD_DIR=... -DCONSUMER_DIR=... -DGENERATOR=... -DCXX=... -DVERSION=... -P this file
string(RANDOM LENGTH 8 suffix)
set(tmp_root "$ENV{TMPDIR}")
if(NOT tmp_root)
  set(tmp_root /tmp)
endif()
set(work "${tmp_root}/epsjoin-install-${suffix}")
file(MAKE_DIRECTORY "${work}")

function(run what)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY "${work}" RESULT_VARIABLE status
                  OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT status EQUAL 0)
    file(REMOVE_RECURSE "${work}")
    message(FATAL_ERROR "${what} failed (${status}):\n${out}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

# Only the library's component: the program is not what a C++ consumer links.
run("cmake --install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${work}/prefix"
    --component devel)
run("configuring the consumer" ${CMAKE_COMMAND} -S "${CONSUMER_DIR}" -B "${work}/build"
    -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX}
    -DCMAKE_PREFIX_PATH=${work}/prefix -DCMAKE_FIND_PACKAGE_PREFER_CONFIG=ON)
run("building the consumer" ${CMAKE_COMMAND} --build "${work}/build")
run("running the consumer" "${work}/build/consumer")
file(REMOVE_RECURSE "${work}")
string(STRIP "${last_output}" last_output)
message(STATUS "consumer: ${last_output}")
if(NOT last_output MATCHES "^epsjoin ${VERSION} pairs [1-9]")
  message(FATAL_ERROR "the consumer printed '${last_output}', not epsjoin ${VERSION} and its pairs")
endif()
