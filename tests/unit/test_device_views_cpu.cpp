// Without CUDA, points marked as device memory and device sinks are refused with `unavailable`
// (a CUDA build joins them: tests/gpu/test_device_views.cpp). With CUDA, CPU engines refuse
// device points whatever the machine.
#include <gtest/gtest.h>

#include <vector>

#include "epsjoin/epsjoin.hpp"

namespace {

TEST(device_views_cpu, cpu_builds_and_cpu_engines_refuse_device_memory) {
  epsjoin::resources res;
  std::vector<double> coords = {0, 0, 1, 1, 0.5, 0.5};
  epsjoin::dataset_view v{coords.data(), 3, 2};
  v.space = epsjoin::memory_space::device;
  epsjoin::join_options opt;
  opt.eps = 1;
  opt.engine = "cpu-grid";
  epsjoin::count_sink counts;
  if (!epsjoin::build().cuda) {
    EXPECT_THROW(epsjoin::self_join(res, v, opt, counts), epsjoin::unavailable);
    epsjoin::device_csr_sink table;
    EXPECT_THROW(epsjoin::self_join(res, epsjoin::dataset_view{coords.data(), 3, 2}, opt, table),
                 epsjoin::unavailable);
  } else {
    // The pointer is host memory: refused as such or, before that is looked at, for the engine.
    EXPECT_THROW(epsjoin::self_join(res, v, opt, counts), epsjoin::error);
  }
}

TEST(device_views_cpu, cpu_builds_refuse_the_device_table_steps) {
  if (epsjoin::build().cuda) GTEST_SKIP() << "a CUDA build runs them: tests/gpu/test_device_table.cpp";
  epsjoin::resources res;
  const epsjoin::device_csr table;
  const epsjoin::dataset_view none;
  EXPECT_THROW(epsjoin::device_distances(res, table, none, none), epsjoin::unavailable);
  EXPECT_THROW(epsjoin::sort_device_rows(res, table), epsjoin::unavailable);
  EXPECT_THROW(epsjoin::device_pairs(res, table, epsjoin::pair_selection::neighbor_above),
               epsjoin::unavailable);
}

}  // namespace
