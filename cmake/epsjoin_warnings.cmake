# Warnings and sanitizers applied to every CPU target of the project.
function(epsjoin_cpu_flags target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wno-unused-parameter -Wno-psabi>)
  if(EPSJOIN_SANITIZE OR EPSJOIN_FUZZ)
    # Every report fatal: UBSan otherwise prints and goes on, and the test that found it passes
    # (and the fuzzer stops at it and keeps the input).
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-sanitize-recover=all
                                -fno-omit-frame-pointer>)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()

# libFuzzer's coverage, on what the fuzz targets read through (the input floor, the argument
# parser) and not on the engines: their inner loops would run the tests of the same build at a
# fraction of their speed, for edges no fuzz target reaches.
function(epsjoin_fuzz_coverage)
  if(EPSJOIN_FUZZ)
    set_property(SOURCE ${ARGN} APPEND PROPERTY COMPILE_OPTIONS -fsanitize=fuzzer-no-link)
  endif()
endfunction()
