#pragma once
// The property-test harness: any engine against the brute-cpu oracle on many random shapes.
//
// One line gives an engine the whole suite:
//   EPSJOIN_ENGINE_PROPERTY_TESTS(cpu_grid_f64, {"cpu-grid"});
//   EPSJOIN_ENGINE_PROPERTY_TESTS(cpu_grid_full_f32, {"cpu-grid", {{"pattern", "full"}},
//                                                     epsjoin::scalar_type::f32});

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "epsjoin/join.hpp"
#include "support/shapes.hpp"

namespace epsjoin {
class eps_index;
}

namespace epsjoin::test {

/// The eps_index's answer to one query (a self-join when `queries` is null) as sorted ordered
/// pairs; its statistics into `stats` when set.
std::vector<index_pair> index_pairs(const eps_index& index, const dataset* queries, double eps,
                                    join_stats* stats = nullptr, bool include_self = false);

struct engine_config {
  std::string engine;
  std::map<std::string, std::string> params = {};
  scalar_type precision = scalar_type::f64;
};

enum class eps_rule { none, sel1, sel10, sel100, all, lattice };

struct property_case {
  shape_kind kind;
  std::size_t n;          // indexed points (all points of a self-join)
  std::size_t d;
  eps_rule eps;
  bool self_join = true;
  std::size_t n_queries = 0;  // A x B joins only
  std::string name() const;
};

/// The shapes every engine is run on (N from 0 to thousands, d from 1 to 128, ...).
const std::vector<property_case>& property_cases();

/// Every ordered pair an engine delivers, sorted; duplicates kept so tests can see them.
std::vector<index_pair> run_collect(const engine_config& config, dataset_view queries,
                                    dataset_view data, bool self_join, double eps,
                                    join_stats* stats = nullptr, unsigned threads = 3);

/// Compares sorted pair lists, ignoring pairs whose exact distance is within `band * eps` of
/// eps; on failure names the first missing and first extra pair with exact distances.
testing::AssertionResult same_pairs(const std::vector<index_pair>& expected,
                                    const std::vector<index_pair>& actual, dataset_view queries,
                                    dataset_view data, double eps, double band);

/// Relative band inside which an engine of `config` may differ from the oracle in dimension d.
double error_band(const engine_config& config, std::size_t d);

/// Runs the engine on one case and checks it against the oracle: same pairs outside the band,
/// no duplicate, no self pair, ids in range, stats.pairs exact, count-only mode consistent.
void check_against_oracle(const engine_config& config, const property_case& c);

/// How self_join_csr runs its join.
struct csr_run {
  std::map<std::string, std::string> params = {};
  bool approximate = false;
  bool include_self = false;
  unsigned threads = 0;             ///< 0: all hardware threads
  join_stats* stats = nullptr;      ///< receives the join's stats when set
};

/// The self-join of `points` at `eps` with `engine`, as a CSR table with sorted rows.
neighbor_table self_join_csr(const dataset& points, double eps, const std::string& engine,
                             csr_run how = {});

/// |R| (self pairs not counted) of the self-join of `points` at `eps` with `engine`, counts only.
std::uint64_t self_join_count(const dataset& points, double eps, const std::string& engine,
                              std::map<std::string, std::string> params = {});

/// The run note `key` of `stats`, or "" when the engine left none.
std::string note_of(const join_stats& stats, const std::string& key);

class engine_property_test : public testing::TestWithParam<property_case> {};

inline std::string case_name(const testing::TestParamInfo<property_case>& info) {
  return info.param.name();
}

/// GoogleTest prints a failing case's parameter with this (a byte dump otherwise).
inline void PrintTo(const property_case& c, std::ostream* out) { *out << c.name(); }

}  // namespace epsjoin::test

#define EPSJOIN_ENGINE_PROPERTY_TESTS(suite, ...)                                         \
  class suite : public ::epsjoin::test::engine_property_test {};                         \
  TEST_P(suite, matches_oracle) {                                                        \
    ::epsjoin::test::check_against_oracle(::epsjoin::test::engine_config __VA_ARGS__,     \
                                          GetParam());                                   \
  }                                                                                      \
  INSTANTIATE_TEST_SUITE_P(shapes, suite,                                                \
                           ::testing::ValuesIn(::epsjoin::test::property_cases()),        \
                           ::epsjoin::test::case_name)
