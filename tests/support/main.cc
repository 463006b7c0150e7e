#include <gtest/gtest.h>

#include <cstdio>

#include "support/seed.hpp"
#include "support/temp_dir.hpp"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  epsjoin::test::install_temp_dir_cleanup();
  if (!GTEST_FLAG_GET(list_tests)) {
    std::printf("epsjoin tests: seed %llu (set EPSJOIN_TEST_SEED to change it)\n",
                static_cast<unsigned long long>(epsjoin::test::test_seed()));
  }
  return RUN_ALL_TESTS();
}
