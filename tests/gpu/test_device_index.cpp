// The GPU-built eps-grid index equals the host-built one, array for array.
#include <gtest/gtest.h>

#include <sstream>

#include "grid/device_index.hpp"
#include "grid/host_index.hpp"
#include "grid/plan.hpp"
#include "support/seed.hpp"
#include "support/shapes.hpp"
#include "support/test_names.hpp"

namespace {

using epsjoin::test::shape_kind;

void expect_same_index(epsjoin::dataset_view data, const epsjoin::detail::grid::grid_plan& plan) {
  epsjoin::resources res(2);
  epsjoin::detail::grid::build_options opt;
  opt.threads = 2;
  const auto host = epsjoin::detail::grid::build_host_index(data, plan.geo, plan.dim_order, opt);
  const auto gpu = epsjoin::detail::grid::snapshot_device_index(res, data, plan.geo, plan.dim_order);
  EXPECT_EQ(gpu.cell_ids, host.cell_ids);
  EXPECT_EQ(gpu.cell_begin, host.cell_begin);
  EXPECT_EQ(gpu.permutation, host.permutation);
  EXPECT_EQ(gpu.points, host.points);
  EXPECT_EQ(gpu.masks, host.masks);
  EXPECT_EQ(gpu.outside, host.outside);
}

class device_index_vs_host
    : public testing::TestWithParam<std::tuple<shape_kind, std::size_t, std::size_t, double>> {};

std::string index_case_name(const testing::TestParamInfo<device_index_vs_host::ParamType>& info) {
  const auto [kind, n, d, selectivity] = info.param;
  std::ostringstream name;
  name << to_string(kind) << "_n" << n << "_d" << d << "_sel"
       << epsjoin::test::name_number(selectivity);
  return name.str();
}

TEST_P(device_index_vs_host, identical) {
  const auto [kind, n, d, selectivity] = GetParam();
  const auto data = epsjoin::test::make_shape(kind, n, d, epsjoin::test::test_seed());
  epsjoin::detail::grid::plan_options popt;
  popt.eps = kind == shape_kind::lattice
                 ? 0.25
                 : epsjoin::test::eps_for_selectivity(data.view(), data.view(), selectivity);
  const auto plan = epsjoin::detail::grid::plan_grid(data.view(), popt, 2);
  expect_same_index(data.view(), plan);
}

INSTANTIATE_TEST_SUITE_P(
    shapes, device_index_vs_host,
    testing::Values(std::tuple{shape_kind::uniform, 5000, 2, 10.0},
                    std::tuple{shape_kind::skewed, 20000, 2, 50.0},
                    std::tuple{shape_kind::skewed, 8000, 3, 20.0},
                    std::tuple{shape_kind::clusters, 6000, 4, 30.0},
                    std::tuple{shape_kind::lattice, 3000, 2, 0.0},
                    std::tuple{shape_kind::duplicates, 2000, 5, 5.0},
                    std::tuple{shape_kind::uniform, 3000, 8, 10.0},
                    std::tuple{shape_kind::uniform, 1000, 40, 10.0},
                    std::tuple{shape_kind::uniform, 1, 2, 1.0}),
    index_case_name);

TEST(device_index_vs_host, query_points_outside_the_grid) {
  const auto data = epsjoin::test::make_shape(shape_kind::uniform, 4000, 3, 7);
  // Queries spread over [-1, 2]^3: many fall outside the data's grid.
  auto queries = epsjoin::test::make_shape(shape_kind::uniform, 3000, 3, 8);
  for (std::size_t k = 0; k < queries.n() * 3; ++k) queries.f64()[k] = 3 * queries.f64()[k] - 1;
  epsjoin::detail::grid::plan_options popt;
  popt.eps = 0.05;
  const auto plan = epsjoin::detail::grid::plan_grid(data.view(), popt, 2);
  expect_same_index(queries.view(), plan);
}

// Inputs of 128 MiB and more go to the device through the pinned chunk pair (base/upload.cuh),
// filled by the resource's threads; 160 MB here, the last chunk a partial one.
TEST(device_index_vs_host, large_inputs_upload_through_pinned_chunks) {
  const auto data = epsjoin::test::make_shape(shape_kind::uniform, 1'000'003, 20, 9);
  epsjoin::detail::grid::plan_options popt;
  popt.eps = 0.5;
  const auto plan = epsjoin::detail::grid::plan_grid(data.view(), popt, 2);
  expect_same_index(data.view(), plan);
}

}  // namespace
