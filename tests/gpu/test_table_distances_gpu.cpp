// A CSR table with its distances (csr_sink made with_distances) from every GPU engine: the same
// rows and the same distances, bit for bit, as the brute-force CPU oracle's. The GPU engines
// leave the distances to the sink, which computes them from the caller's points once the rows
// are whole, however the rows arrived (in place, in blocks, as pairs, from a device table).
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "epsjoin/epsjoin.hpp"
#include "support/seed.hpp"

namespace {

// Coordinates on a 0.125 lattice: distances at exactly eps = 0.25, and every one exact.
epsjoin::dataset lattice(std::size_t n, std::size_t d, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(n * d);
  for (double& x : v) x = static_cast<double>(rng() % 24) * 0.125;
  return epsjoin::dataset(std::move(v), d);
}

epsjoin::neighbor_table table_of(const std::string& engine,
                                 const std::map<std::string, std::string>& params,
                                 const epsjoin::dataset& data, const epsjoin::dataset* queries,
                                 bool include_self) {
  epsjoin::resources res;
  epsjoin::join_options opt;
  opt.eps = 0.25;
  opt.engine = engine;
  opt.params = params;
  opt.include_self = include_self;
  epsjoin::csr_sink sink(true, 0, true);
  if (queries == nullptr) {
    epsjoin::self_join(res, data.view(), opt, sink);
  } else {
    epsjoin::join(res, queries->view(), data.view(), opt, sink);
  }
  return sink.release();
}

struct engine_case {
  const char* engine;
  std::map<std::string, std::string> params;
};

TEST(gpu_table_distances, equal_the_oracle_on_every_engine) {
  const std::vector<engine_case> engines = {
      {"lbjoin", {}},   {"lbjoin", {{"chunk_ids", "7"}}}, {"gds-join", {}}, {"ted-join", {}},
      {"meta-16q", {}}, {"gpu-sj", {}},                   {"brute-gpu", {}}, {"hegjoin", {}}};
  for (const std::size_t d : {2u, 3u, 9u}) {
    const auto data = lattice(2500, d, epsjoin::test::test_seed() + d);
    const auto queries = lattice(700, d, epsjoin::test::test_seed() + 100 + d);
    for (const bool cross : {false, true}) {
      const epsjoin::dataset* q = cross ? &queries : nullptr;
      for (const bool include_self : {false, true}) {
        if (cross && include_self) continue;
        const epsjoin::neighbor_table want = table_of("brute-cpu", {}, data, q, include_self);
        for (const engine_case& c : engines) {
          const std::string what = std::string(c.engine) + (c.params.empty() ? "" : " +params") +
                                   " d " + std::to_string(d) + (cross ? " A x B" : " self") +
                                   (include_self ? " +self" : "");
          const epsjoin::neighbor_table got = table_of(c.engine, c.params, data, q, include_self);
          EXPECT_EQ(got.offsets, want.offsets) << what;
          EXPECT_TRUE(got.neighbors == want.neighbors) << what;
          EXPECT_TRUE(got.distances == want.distances) << what;
        }
      }
    }
  }
}

}  // namespace
