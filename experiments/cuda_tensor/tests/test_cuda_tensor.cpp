// cuda-tensor (tensor cores and CUDA cores at once) against the oracle: every shape of the
// property harness (lattices with ties at exactly eps included) with the model's split, every
// cell forced to one side and then the other, and parts to each, in both precisions and both
// fills, indexed and brute force, one stream or two, and over several row segments (whose fill
// launches divide the items differently from the count's: a row must still be counted and filled
// by one kernel); and the notes that say where the work went.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "support/harness.hpp"
#include "support/paper_data.hpp"
#include "support/shapes.hpp"

namespace {

using epsjoin::scalar_type;
using epsjoin::test::paper_expo;

EPSJOIN_ENGINE_PROPERTY_TESTS(cuda_tensor_f64, {"cuda-tensor"});
EPSJOIN_ENGINE_PROPERTY_TESTS(cuda_tensor_f32, {"cuda-tensor", {}, scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(cuda_tensor_all_cuda_f64, {"cuda-tensor", {{"split", "0"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(cuda_tensor_all_tensor_f64, {"cuda-tensor", {{"split", "1"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(cuda_tensor_all_cuda_f32,
                              {"cuda-tensor", {{"split", "0"}}, scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(cuda_tensor_all_tensor_f32,
                              {"cuda-tensor", {{"split", "1"}}, scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(cuda_tensor_half_full_second_pass_f64,
                              {"cuda-tensor",
                               {{"split", "0.5"}, {"pattern", "full"}, {"fill", "second-pass"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(cuda_tensor_half_one_stream_f32,
                              {"cuda-tensor",
                               {{"split", "0.5"}, {"streams", "one"}},
                               scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(cuda_tensor_half_records_f32,
                              {"cuda-tensor",
                               {{"split", "0.5"}, {"fill", "records"}},
                               scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(cuda_tensor_half_second_pass_f64,
                              {"cuda-tensor", {{"split", "0.5"}, {"fill", "second-pass"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(cuda_tensor_brute_f64,
                              {"cuda-tensor", {{"split", "0.5"}, {"mode", "brute-force"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(cuda_tensor_segments_f64,
                              {"cuda-tensor",
                               {{"split", "0.3"}, {"segment_ids", "64"}, {"chunk_ids", "16"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(cuda_tensor_segments_all_cuda_f64,
                              {"cuda-tensor",
                               {{"split", "0"}, {"segment_ids", "64"}, {"chunk_ids", "16"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(cuda_tensor_segments_all_tensor_f64,
                              {"cuda-tensor",
                               {{"split", "1"}, {"segment_ids", "64"}, {"chunk_ids", "16"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(
    cuda_tensor_segments_full_f64,
    {"cuda-tensor",
     {{"split", "0.3"}, {"pattern", "full"}, {"segment_ids", "64"}, {"chunk_ids", "16"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(
    cuda_tensor_segments_second_pass_f64,
    {"cuda-tensor",
     {{"split", "0.3"}, {"fill", "second-pass"}, {"segment_ids", "64"}, {"chunk_ids", "16"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(
    cuda_tensor_segments_one_stream_f64,
    {"cuda-tensor",
     {{"split", "0.3"}, {"streams", "one"}, {"segment_ids", "64"}, {"chunk_ids", "16"}}});

// The second design (one kernel whose blocks are of two kinds), from 9 dimensions; below, the
// property cases run the first.
EPSJOIN_ENGINE_PROPERTY_TESTS(cuda_tensor_blocks_f64, {"cuda-tensor", {{"design", "blocks"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(cuda_tensor_blocks_f32,
                              {"cuda-tensor", {{"design", "blocks"}}, scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(cuda_tensor_blocks_all_cuda_f64,
                              {"cuda-tensor", {{"design", "blocks"}, {"split", "0"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(cuda_tensor_blocks_all_tensor_f64,
                              {"cuda-tensor", {{"design", "blocks"}, {"split", "1"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(cuda_tensor_blocks_tensor_first_f32,
                              {"cuda-tensor",
                               {{"design", "blocks"}, {"order", "tensor-first"}},
                               scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(
    cuda_tensor_blocks_segments_f32,
    {"cuda-tensor",
     {{"design", "blocks"}, {"split", "0.3"}, {"segment_ids", "64"}, {"chunk_ids", "16"}},
     scalar_type::f32});

// The third design (one kernel whose blocks hold warps of both kinds sharing each cell's
// candidate tiles in shared memory), from 9 to 256 dimensions; outside, the property cases run
// the first.
EPSJOIN_ENGINE_PROPERTY_TESTS(cuda_tensor_warps_f64, {"cuda-tensor", {{"design", "warps"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(cuda_tensor_warps_f32,
                              {"cuda-tensor", {{"design", "warps"}}, scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(cuda_tensor_warps_all_cuda_f64,
                              {"cuda-tensor", {{"design", "warps"}, {"split", "0"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(cuda_tensor_warps_all_tensor_f32,
                              {"cuda-tensor",
                               {{"design", "warps"}, {"split", "1"}},
                               scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(cuda_tensor_warps_half_records_f64,
                              {"cuda-tensor",
                               {{"design", "warps"}, {"split", "0.5"}, {"fill", "records"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(
    cuda_tensor_warps_segments_f32,
    {"cuda-tensor",
     {{"design", "warps"}, {"split", "0.3"}, {"segment_ids", "64"}, {"chunk_ids", "16"}},
     scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(cuda_tensor_warps_segments_second_pass_f64, {"cuda-tensor",
                                                                           {{"design", "warps"},
                                                                            {"split", "0.7"},
                                                                            {"fill", "second-pass"},
                                                                            {"segment_ids", "64"},
                                                                            {"chunk_ids", "16"}}});

epsjoin::neighbor_table run_csr(const epsjoin::dataset& pts, double eps,
                                std::map<std::string, std::string> params,
                                epsjoin::join_stats* stats = nullptr,
                                const std::string& engine = "cuda-tensor") {
  return epsjoin::test::self_join_csr(pts, eps, engine,
                                      {.params = std::move(params), .stats = stats});
}

std::string note(const epsjoin::join_stats& stats, const std::string& key) {
  return epsjoin::test::note_of(stats, key);
}

// A small case for compute-sanitizer (scripts/device-check.sh filters on the name): both kernels
// at once on shared counts, cursors and records, in each pattern and fill.
TEST(cuda_tensor, sanitizer_case_small_joins_in_every_mode) {
  const auto pts = paper_expo(16, 1500);
  const double eps = epsjoin::test::eps_for_selectivity(pts.view(), pts.view(), 20) * (1 + 1e-9);
  const auto oracle = run_csr(pts, eps, {}, nullptr, "brute-cpu");
  ASSERT_GT(oracle.n_pairs(), pts.n());
  const std::vector<std::map<std::string, std::string>> modes = {
      {},
      {{"split", "0.5"}, {"fill", "second-pass"}},
      {{"split", "0.5"}, {"fill", "records"}},
      {{"split", "0.5"}, {"streams", "one"}},
      {{"split", "0.5"}, {"mode", "brute-force"}, {"segment_ids", "1000"}},
      {{"split", "0.5"}, {"design", "blocks"}},
      {{"split", "0.5"}, {"design", "blocks"}, {"fill", "records"}},
      {{"split", "0.5"}, {"design", "blocks"}, {"order", "tensor-first"}},
      {{"split", "0.5"}, {"design", "warps"}},
      {{"split", "0.5"}, {"design", "warps"}, {"fill", "records"}},
      {{"split", "0"}, {"design", "warps"}},
      {{"split", "1"}, {"design", "warps"}},
  };
  for (const auto& params : modes) {
    const auto table = run_csr(pts, eps, params);
    EXPECT_EQ(table.offsets, oracle.offsets) << params.size() << " params";
    EXPECT_TRUE(table.neighbors == oracle.neighbors) << params.size() << " params";
  }
}

// split=0 and split=1 put every candidate on one side; auto divides them by the probe's rates,
// and the modelled and measured times are in the notes.
TEST(cuda_tensor, the_notes_say_where_the_work_went) {
  const auto pts = paper_expo(16, 20000);
  const double eps = epsjoin::test::eps_for_selectivity(pts.view(), pts.view(), 50) * (1 + 1e-9);
  const auto oracle = run_csr(pts, eps, {}, nullptr, "brute-cpu");
  for (const char* split : {"0", "1", "auto"}) {
    epsjoin::join_stats stats;
    const auto table = run_csr(pts, eps, {{"split", split}}, &stats);
    EXPECT_EQ(table.offsets, oracle.offsets) << "split " << split;
    EXPECT_TRUE(table.neighbors == oracle.neighbors) << "split " << split;
    const std::string tensor = note(stats, "split tensor"), cuda = note(stats, "split cuda");
    SCOPED_TRACE(std::string("split ") + split + ": tensor " + tensor + "; cuda " + cuda);
    EXPECT_NE(note(stats, "split measured seconds"), "");
    if (std::string(split) == "0") {
      EXPECT_EQ(tensor.rfind("0 candidates", 0), 0u);
      EXPECT_NE(cuda.rfind("0 candidates", 0), 0u);
    } else if (std::string(split) == "1") {
      EXPECT_NE(tensor.rfind("0 candidates", 0), 0u);
      EXPECT_EQ(cuda.rfind("0 candidates", 0), 0u);
    } else {
      EXPECT_NE(note(stats, "split model").find("probe of"), std::string::npos);
      EXPECT_NE(note(stats, "split modelled seconds"), "");
    }
  }
}

// design=blocks at 16-D: one kernel, each side timed by its blocks' stamps, the same table; and
// the one-stream ablation, which belongs to the first design, refused with it.
TEST(cuda_tensor, the_kernel_of_two_kinds_of_blocks_times_each_side) {
  const auto pts = paper_expo(16, 20000);
  const double eps = epsjoin::test::eps_for_selectivity(pts.view(), pts.view(), 50) * (1 + 1e-9);
  const auto oracle = run_csr(pts, eps, {}, nullptr, "brute-cpu");
  epsjoin::join_stats stats;
  const auto table = run_csr(pts, eps, {{"design", "blocks"}, {"split", "0.5"}}, &stats);
  EXPECT_EQ(table.offsets, oracle.offsets);
  EXPECT_TRUE(table.neighbors == oracle.neighbors);
  EXPECT_NE(note(stats, "kernel").find("one kernel of two kinds of blocks (interleaved)"),
            std::string::npos)
      << note(stats, "kernel");
  const std::string tensor = note(stats, "split tensor"), cuda = note(stats, "split cuda");
  EXPECT_NE(tensor.rfind("0 candidates", 0), 0u) << tensor;
  EXPECT_NE(cuda.rfind("0 candidates", 0), 0u) << cuda;
  EXPECT_GT(std::stod(note(stats, "split overlap")), 0.0);
  try {
    run_csr(pts, eps, {{"design", "blocks"}, {"streams", "one"}});
    FAIL() << "streams=one was accepted with design=blocks";
  } catch (const epsjoin::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("streams applies to design=streams"), std::string::npos)
        << e.what();
  }
  try {
    run_csr(pts, eps, {{"order", "tensor-first"}});
    FAIL() << "order=tensor-first was accepted with design=streams";
  } catch (const epsjoin::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("order applies to design=blocks"), std::string::npos)
        << e.what();
  }
}

// design=warps at 16-D and 64-D: the same table, both sides busy and timed by their warps'
// stamps, and most warps on tiles shared with the rest of their block; at 300-D, past the
// shared tile's limit, the two streams run instead, which the kernel note says.
TEST(cuda_tensor, the_kernel_of_two_kinds_of_warps_shares_tiles) {
  for (const int d : {16, 64}) {
    SCOPED_TRACE(d);
    const auto pts = paper_expo(d, 20000);
    const double eps = epsjoin::test::eps_for_selectivity(pts.view(), pts.view(), 50) * (1 + 1e-9);
    const auto oracle = run_csr(pts, eps, {}, nullptr, "brute-cpu");
    for (const char* split : {"0.5", "auto"}) {
      epsjoin::join_stats stats;
      const auto table = run_csr(pts, eps, {{"design", "warps"}, {"split", split}}, &stats);
      EXPECT_EQ(table.offsets, oracle.offsets) << split;
      EXPECT_TRUE(table.neighbors == oracle.neighbors) << split;
      EXPECT_NE(note(stats, "kernel").find("blocks hold warps of both kinds"), std::string::npos)
          << note(stats, "kernel");
      const std::string warps = note(stats, "split warps");
      EXPECT_NE(warps.find("of them on one cell's shared tiles"), std::string::npos) << warps;
      EXPECT_EQ(warps.find(" 0 of them"), std::string::npos) << warps;
      const std::string tensor = note(stats, "split tensor"), cuda = note(stats, "split cuda");
      EXPECT_NE(tensor.rfind("0 candidates", 0), 0u) << tensor;
      EXPECT_NE(cuda.rfind("0 candidates", 0), 0u) << cuda;
      EXPECT_GT(std::stod(note(stats, "split overlap")), 0.0);
    }
  }
  const auto wide = paper_expo(300, 2000);
  const double eps = epsjoin::test::eps_for_selectivity(wide.view(), wide.view(), 10) * (1 + 1e-9);
  epsjoin::join_stats stats;
  const auto table = run_csr(wide, eps, {{"design", "warps"}, {"split", "0.5"}}, &stats);
  const auto oracle = run_csr(wide, eps, {}, nullptr, "brute-cpu");
  EXPECT_EQ(table.offsets, oracle.offsets);
  EXPECT_TRUE(table.neighbors == oracle.neighbors);
  EXPECT_NE(note(stats, "kernel").find("to 256 dimensions"), std::string::npos)
      << note(stats, "kernel");
  try {
    run_csr(wide, eps, {{"design", "warps"}, {"order", "tensor-first"}});
    FAIL() << "order=tensor-first was accepted with design=warps";
  } catch (const epsjoin::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("order applies to design=blocks"), std::string::npos)
        << e.what();
  }
}

TEST(cuda_tensor, lid_unicomp_is_refused_with_the_reason) {
  const auto pts = paper_expo(4, 100);
  try {
    run_csr(pts, 0.1, {{"pattern", "lid-unicomp"}});
    FAIL() << "pattern=lid-unicomp was accepted";
  } catch (const epsjoin::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cuda-tensor runs pattern=full only"), std::string::npos)
        << e.what();
  }
}

TEST(cuda_tensor, a_bad_split_is_refused_clearly) {
  const auto pts = paper_expo(4, 100);
  for (const char* split : {"1.5", "-0.1", "half"}) {
    try {
      run_csr(pts, 0.1, {{"split", split}});
      FAIL() << "split=" << split << " was accepted";
    } catch (const epsjoin::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("split must be auto or a number from 0 to 1"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
