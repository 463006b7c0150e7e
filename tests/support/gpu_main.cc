// main() of the GPU test programs: exit 77 (CTest's skip code) with a reason when no CUDA
// device is present, unless EPSJOIN_REQUIRE_GPU=1 makes that a failure.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "epsjoin/build_info.hpp"
#include "support/seed.hpp"
#include "support/temp_dir.hpp"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  epsjoin::test::install_temp_dir_cleanup();
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
  // hegjoin keeps its calibrations in a cache folder: a fresh one per run, under $TMPDIR, so the
  // tests neither write into the user's nor read calibrations an earlier run left there.
  const std::filesystem::path cache = epsjoin::test::make_temp_dir("epsjoin-test-cache-");
  setenv("EPSJOIN_CACHE_DIR", cache.c_str(), 1);
  const int status = RUN_ALL_TESTS();
  std::error_code ignored;
  std::filesystem::remove_all(cache, ignored);
  return status;
}
