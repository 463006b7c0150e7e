// lbjoin against the oracle in every configuration kept for the ablation, the row pipeline's
// many-segment path, and the papers' reference counts through the CSR fast path.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "support/harness.hpp"
#include "support/paper_data.hpp"

namespace {

using epsjoin::scalar_type;
using epsjoin::test::paper_expo;
using epsjoin::test::reference_case;

EPSJOIN_ENGINE_PROPERTY_TESTS(lbjoin_f64, {"lbjoin"});
EPSJOIN_ENGINE_PROPERTY_TESTS(lbjoin_f32, {"lbjoin", {}, scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(lbjoin_full_f64, {"lbjoin", {{"pattern", "full"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(lbjoin_full_f32, {"lbjoin", {{"pattern", "full"}}, scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(lbjoin_index2_f64, {"lbjoin", {{"index_dims", "2"}}});
// Rows filled from the counting pass's records at every d, and by a second pass at every d.
EPSJOIN_ENGINE_PROPERTY_TESTS(lbjoin_records_f64, {"lbjoin", {{"fill", "records"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(lbjoin_records_full_f32,
                              {"lbjoin", {{"fill", "records"}, {"pattern", "full"}}, scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(lbjoin_second_pass_f64, {"lbjoin", {{"fill", "second-pass"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(lbjoin_queue_f64, {"lbjoin", {{"queue", "on"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(lbjoin_stage8_f64, {"lbjoin", {{"stage_dims", "8"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(lbjoin_stage8_full_f32,
                              {"lbjoin", {{"stage_dims", "8"}, {"pattern", "full"}}, scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(lbjoin_unsorted_f64, {"lbjoin", {{"sort", "off"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(lbjoin_query1_f64, {"lbjoin", {{"kernel", "query"}, {"lanes", "1"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(lbjoin_query8_f64, {"lbjoin", {{"kernel", "query"}, {"lanes", "8"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(lbjoin_query32_f32,
                              {"lbjoin", {{"kernel", "query"}, {"lanes", "32"}}, scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(lbjoin_query4_lid_queue_f64,
                              {"lbjoin", {{"kernel", "query"}, {"lanes", "4"},
                                          {"pattern", "lid-unicomp"}, {"queue", "on"}}});
// Tiny segments and chunks: every case runs in many segments and pinned chunks, with the work
// queue on; under lid-unicomp the fill falls back to full.
EPSJOIN_ENGINE_PROPERTY_TESTS(lbjoin_segments_queue,
                              {"lbjoin", {{"segment_ids", "64"}, {"chunk_ids", "16"}, {"queue", "on"},
                                          {"pattern", "full"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(lbjoin_segments_lid,
                              {"lbjoin", {{"segment_ids", "200"}, {"chunk_ids", "50"},
                                          {"pattern", "lid-unicomp"}}});

// A small case for compute-sanitizer (scripts/device-check.sh filters on the name).
TEST(lbjoin, sanitizer_case_small_join_in_every_mode) {
  const auto pts = paper_expo(3, 3000);
  epsjoin::resources res;
  epsjoin::join_options opt;
  opt.eps = 0.02;
  opt.engine = "brute-cpu";
  epsjoin::csr_sink oracle(true);
  epsjoin::self_join(res, pts.view(), opt, oracle);
  const std::vector<std::map<std::string, std::string>> modes = {
      {},
      {{"pattern", "full"}},
      {{"queue", "on"}, {"sort", "off"}},
      {{"kernel", "query"}, {"lanes", "8"}, {"pattern", "lid-unicomp"}, {"queue", "on"}},
      {{"segment_ids", "5000"}, {"chunk_ids", "700"}},
      {{"fill", "records"}},
      {{"fill", "records"}, {"segment_ids", "1000"}},  // records overflow: a second pass
  };
  for (const auto& params : modes) {
    opt.engine = "lbjoin";
    opt.params = params;
    epsjoin::csr_sink csr(true);
    const auto stats = epsjoin::self_join(res, pts.view(), opt, csr);
    EXPECT_EQ(csr.table().offsets, oracle.table().offsets);
    EXPECT_TRUE(csr.table().neighbors == oracle.table().neighbors);
    EXPECT_EQ(stats.pairs, oracle.table().n_pairs());
  }
}

class lbjoin_reference : public testing::TestWithParam<reference_case> {};

// The full path: CSR in host memory with self pairs, as the benchmark times it.
TEST_P(lbjoin_reference, csr_has_the_exact_result_size) {
  const auto c = GetParam();
  const auto pts = paper_expo(c.d, c.n);
  epsjoin::resources res;
  epsjoin::join_options opt;
  opt.eps = c.eps;
  opt.engine = "lbjoin";
  opt.include_self = true;
  epsjoin::csr_sink csr;
  epsjoin::self_join(res, pts.view(), opt, csr);
  EXPECT_EQ(csr.table().n_pairs(), c.with_self);
  // Spot-check symmetry on a few rows.
  const auto& t = csr.table();
  for (std::uint32_t i = 0; i < c.n; i += 99991) {
    for (std::uint32_t j : t.row(i)) {
      const auto back = t.row(j);
      ASSERT_NE(std::find(back.begin(), back.end(), i), back.end()) << i << " -> " << j;
    }
  }
}

// Four rows of the table: 2-D near S 50 and 500, 4-D near S 500, 8-D near S 50.
std::vector<reference_case> csr_cases() {
  const auto& all = epsjoin::test::reference_cases();
  return {all[0], all[1], all[3], all[4]};
}

INSTANTIATE_TEST_SUITE_P(lbjoin_table, lbjoin_reference, testing::ValuesIn(csr_cases()),
                         epsjoin::test::reference_case_name);

}  // namespace
