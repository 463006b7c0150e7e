# `cmake --install BUILD [--prefix DIR]`: the public headers, libepsjoin and the exported target
# epsjoin::epsjoin with epsjoinConfig.cmake and its version file, so a C++ project can
#   find_package(epsjoin CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE epsjoin::epsjoin)
# (tests/install/ builds such a project against an installed tree). Component `devel`; the
# Python wheel installs only its own component, `python`.
include(CMakePackageConfigHelpers)

set(EPSJOIN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/epsjoin)
install(TARGETS epsjoin EXPORT epsjoin-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT devel
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT devel
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT devel)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/epsjoin
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT devel)
install(EXPORT epsjoin-targets NAMESPACE epsjoin:: FILE epsjoinTargets.cmake
  DESTINATION ${EPSJOIN_CMAKE_DIR} COMPONENT devel)

# The config file finds what the exported target names: Threads always; CUDAToolkit where the
# library has the GPU engines, for CUDA::cudart_static (the runtime is linked statically, so
# programs need no toolkit where they run, but their link needs the toolkit's static runtime).
set(EPSJOIN_CONFIG_NEEDS_CUDA ${EPSJOIN_HAS_CUDA})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/epsjoinConfig.cmake.in
  ${PROJECT_BINARY_DIR}/epsjoinConfig.cmake INSTALL_DESTINATION ${EPSJOIN_CMAKE_DIR})
# 0.x: a new minor version may break the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/epsjoinConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/epsjoinConfig.cmake
              ${PROJECT_BINARY_DIR}/epsjoinConfigVersion.cmake
  DESTINATION ${EPSJOIN_CMAKE_DIR} COMPONENT devel)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT devel)
