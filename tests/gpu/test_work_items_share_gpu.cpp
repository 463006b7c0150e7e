// join_options::share on the GPU engines that count a share of their work items (the row-join
// engines): the shares' counts, one share a run as mpi-join's ranks count them, add up to the
// oracle's per point and in total; 2-D and 16-D, ties at exactly eps (the lattice), A x B.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "epsjoin/join.hpp"
#include "support/shapes.hpp"
#include "support/share_check.hpp"

namespace epsjoin::test {
namespace {

std::vector<std::string> sharing_gpu_engines() {
  std::vector<std::string> names;
  for (const engine_info& e : engines()) {
    if (e.processor != "cpu" && e.available && e.shares_work_items) names.push_back(e.name);
  }
  return names;
}

TEST(work_items_share_gpu, shares_add_up_to_the_oracle) {
  const dataset uniform = make_shape(shape_kind::uniform, 20000, 2, 21);
  const dataset lattice = make_shape(shape_kind::lattice, 1600, 2, 22);
  const dataset skewed = make_shape(shape_kind::skewed, 4000, 16, 23);
  const dataset queries = make_shape(shape_kind::skewed, 1500, 16, 24);
  const double eps_uniform = eps_for_selectivity(uniform.view(), uniform.view(), 40);
  const double eps_skewed = eps_for_selectivity(skewed.view(), skewed.view(), 30);
  const std::vector<std::string> names = sharing_gpu_engines();
  ASSERT_FALSE(names.empty());
  for (const std::string& engine : names) {
    SCOPED_TRACE(engine);
    expect_shares_add_up(engine, uniform, nullptr, eps_uniform, {2, 3});
    expect_shares_add_up(engine, lattice, nullptr, 0.25, {2}, /*include_self=*/true);
    expect_shares_add_up(engine, skewed, nullptr, eps_skewed, {2});
    expect_shares_add_up(engine, skewed, &queries, eps_skewed, {3});
  }
}

}  // namespace
}  // namespace epsjoin::test
