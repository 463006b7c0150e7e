// main() of the GPU test programs: exit 77 (CTest's skip code) with a reason when no CUDA
// device is present, unless EPSJOIN_REQUIRE_GPU=1 makes that a failure.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "epsjoin/build_info.hpp"
#include "support/seed.hpp"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (GTEST_FLAG_GET(list_tests)) return RUN_ALL_TESTS();
  if (epsjoin::cuda_devices().empty()) {
    const char* require = std::getenv("EPSJOIN_REQUIRE_GPU");
    if (require != nullptr && std::strcmp(require, "1") == 0) {
      std::fprintf(stderr, "FAIL: EPSJOIN_REQUIRE_GPU=1 but no CUDA device is visible\n");
      return 1;
    }
    std::printf("SKIP: no CUDA device is visible (set EPSJOIN_REQUIRE_GPU=1 to fail instead)\n");
    return 77;
  }
  std::printf("epsjoin GPU tests: seed %llu\n",
              static_cast<unsigned long long>(epsjoin::test::test_seed()));
  return RUN_ALL_TESTS();
}
