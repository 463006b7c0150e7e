# Warnings and sanitizers applied to every CPU target of the project.
function(epsjoin_cpu_flags target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wno-unused-parameter -Wno-psabi>)
  if(EPSJOIN_SANITIZE)
    # Every report fatal: UBSan otherwise prints and goes on, and the test that found it passes.
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-sanitize-recover=all
                                -fno-omit-frame-pointer>)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
  if(EPSJOIN_FUZZ)
    # Coverage for libFuzzer, and every sanitizer report fatal so the fuzzer stops at it and
    # keeps the input.
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link,address,undefined
                           -fno-sanitize-recover=all -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()
