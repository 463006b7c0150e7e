// Engine parameters: every engine's keys are declared with a kind and a description, parse to
// their defaults, accept each documented value and reject bad values and unknown keys with the
// messages users and scripts see (the same text as before the parse was typed).

#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <string>
#include <vector>

#include "core/engine.hpp"
#include "epsjoin/join.hpp"
#include "support/harness.hpp"

namespace epsjoin::detail {
namespace {

const engine& engine_named(const std::string& name) {
  const engine* e = find_engine(name);
  if (e == nullptr) throw std::runtime_error("no engine " + name);
  return *e;
}

// The message parse_params throws for `values`, or "" when it accepts them.
std::string parse_error(const std::string& engine_name, const param_map& values) {
  try {
    const auto p = engine_named(engine_name).parse_params(values);
    EXPECT_NE(p, nullptr);
    return "";
  } catch (const invalid_argument& e) {
    return e.what();
  }
}

bool has_cuda_engines() {
  // Without CUDA the GPU engines are registered as stand-ins that take no parameters.
  return !engine_named("lbjoin").param_specs().empty();
}

TEST(engine_params, every_engine_declares_each_key_once_with_kind_and_description) {
  const std::set<std::string> memory_overrides = {"segment_ids", "chunk_ids", "batch_pairs",
                                                  "batches"};
  for (const auto& e : registered_engines()) {
    SCOPED_TRACE(std::string(e->name()));
    std::set<std::string> seen;
    for (const param_spec& s : e->param_specs()) {
      EXPECT_TRUE(seen.insert(s.key).second) << s.key << " declared twice";
      EXPECT_FALSE(s.description.empty()) << s.key;
      EXPECT_EQ(s.description.find('\n'), std::string::npos) << s.key << ": one line";
      // The debug kind is exactly the memory budget's overrides, which dispatch reads.
      EXPECT_EQ(s.kind == param_kind::debug, memory_overrides.contains(s.key)) << s.key;
    }
    // Defaults: the empty map parses.
    EXPECT_NE(e->parse_params({}), nullptr);
  }
}

TEST(engine_params, public_listing_matches_the_declarations) {
  for (const engine_info& info : engines()) {
    const std::vector<param_spec> specs = engine_named(info.name).param_specs();
    ASSERT_EQ(info.params.size(), specs.size()) << info.name;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      EXPECT_EQ(info.params[i].key, specs[i].key);
      EXPECT_EQ(info.params[i].kind, kind_name(specs[i].kind));
      EXPECT_EQ(info.params[i].description, specs[i].description);
    }
  }
}

TEST(engine_params, unknown_keys_name_the_accepted_ones_grouped_by_kind) {
  EXPECT_EQ(parse_error("brute-cpu", {{"tile", "8"}}),
            "engine 'brute-cpu' has no parameter 'tile' (it takes none)");
  EXPECT_EQ(parse_error("cpu-grid", {{"nope", "1"}}),
            "engine 'cpu-grid' has no parameter 'nope'; it takes: tuning: max_indexed_dims, "
            "early_exit, layout, gather, fill; ablation: pattern, lookup, masks, reorder, simd");
  EXPECT_EQ(parse_error("super-ego", {{"nope", "1"}}),
            "engine 'super-ego' has no parameter 'nope'; it takes: tuning: leaf, chunk; "
            "ablation: reorder, sort, prune, simd");
  EXPECT_EQ(parse_error("cpu-rtree", {{"nope", "1"}}),
            "engine 'cpu-rtree' has no parameter 'nope'; it takes: tuning: index_dims");
  // An unknown key is reported before a bad value of a known one.
  EXPECT_EQ(parse_error("cpu-rtree", {{"index_dims", "99"}, {"a", "1"}}),
            "engine 'cpu-rtree' has no parameter 'a'; it takes: tuning: index_dims");
  if (!has_cuda_engines()) return;
  EXPECT_EQ(parse_error("brute-gpu", {{"pattern", "full"}}),
            "engine 'brute-gpu' has no parameter 'pattern'; it takes: debug: batch_pairs, "
            "batches");
  // hegjoin has no work queue: its batches on two streams cannot share one counter.
  EXPECT_EQ(parse_error("ted-join", {{"nope", "1"}}),
            "engine 'ted-join' has no parameter 'nope'; it takes: tuning: index_dims, tile_cols, "
            "kernel, mma; ablation: sort, queue, pattern, fill, mode, short_circuit; debug: "
            "segment_ids, chunk_ids");
  EXPECT_EQ(parse_error("meta-16q", {{"nope", "1"}}),
            "engine 'meta-16q' has no parameter 'nope'; it takes: tuning: warp_rows, kernel, "
            "index_dims; ablation: accumulate, sort, queue, pattern, fill, mode; debug: "
            "segment_ids, chunk_ids");
  EXPECT_EQ(parse_error("meta-1q", {{"nope", "1"}}),
            "engine 'meta-1q' has no parameter 'nope'; it takes: tuning: index_dims; ablation: "
            "accumulate, sort, queue, pattern, fill, mode; debug: segment_ids, chunk_ids");
  EXPECT_NE(parse_error("hegjoin", {{"queue", "on"}}).find("has no parameter 'queue'"),
            std::string::npos);
  EXPECT_NE(parse_error("hegjoin", {{"lanes", "8"}}).find("has no parameter 'lanes'"),
            std::string::npos);
}

struct value_case {
  std::string engine;
  std::string key;
  std::vector<std::string> accepted;
  std::string bad;
  std::string message;  ///< exact
};

std::vector<value_case> cpu_cases() {
  return {
      {"cpu-grid", "pattern", {"lid-unicomp", "unicomp", "full"}, "halved",
       "cpu-grid: pattern must be lid-unicomp, unicomp or full, got 'halved'"},
      {"cpu-grid", "lookup", {"rows", "tree", "binary"}, "hash",
       "cpu-grid: lookup must be rows, tree or binary, got 'hash'"},
      {"cpu-grid", "masks", {"on", "off", "1", "0", "true", "false"}, "yes",
       "cpu-grid: masks must be on or off, got 'yes'"},
      {"cpu-grid", "reorder", {"on", "off"}, "maybe",
       "cpu-grid: reorder must be on or off, got 'maybe'"},
      {"cpu-grid", "max_indexed_dims", {"0", "3", "8"}, "9",
       "cpu-grid: max_indexed_dims must be 0 to 8, got '9'"},
      {"cpu-grid", "early_exit", {"0", "8", "16"}, "4",
       "cpu-grid: early_exit must be 0, 8 or 16 (dimensions between checks; 0 never), got '4'"},
      {"cpu-grid", "layout", {"auto", "columns", "rows"}, "tiles",
       "cpu-grid: layout must be auto, columns or rows, got 'tiles'"},
      {"cpu-grid", "simd", {"auto", "baseline"}, "avx512",
       "cpu-grid: simd must be auto or baseline, got 'avx512'"},
      {"cpu-grid", "gather", {"off", "1", "9"}, "0",
       "cpu-grid: gather must be off or 1 to 9 (the fewest candidate ranges of a task copied "
       "into one buffer), got '0'"},
      {"cpu-grid", "fill", {"auto", "halved", "full"}, "both",
       "cpu-grid: fill must be auto, halved or full, got 'both'"},
      {"super-ego", "leaf", {"1", "64", "65536"}, "0",
       "super-ego: parameter leaf must be an integer in [1, 65536], got '0'"},
      {"super-ego", "chunk", {"1", "1024"}, "x",
       "super-ego: parameter chunk must be an integer in [1, 2147483648], got 'x'"},
      {"super-ego", "reorder", {"selectivity", "on", "variance", "off"}, "pca",
       "super-ego: reorder must be selectivity, variance or off, got 'pca'"},
      {"super-ego", "sort", {"radix", "merge"}, "quick",
       "super-ego: sort must be radix or merge, got 'quick'"},
      {"super-ego", "prune", {"box", "ego"}, "none",
       "super-ego: prune must be box or ego, got 'none'"},
      {"super-ego", "simd", {"on", "off"}, "auto",
       "super-ego: simd must be on or off, got 'auto'"},
      {"cpu-rtree", "index_dims", {"1", "4", "8"}, "0",
       "cpu-rtree: index_dims must be an integer from 1 to 8, got '0'"},
  };
}

std::vector<value_case> gpu_cases() {
  std::vector<value_case> cases = {
      {"gpu-sj", "pattern", {"full", "unicomp", "lid-unicomp"}, "x",
       "parameter pattern must be one of full, unicomp, lid-unicomp; got 'x'"},
      {"brute-gpu", "batch_pairs", {"1", "500"}, "any", ""},
      {"lbjoin", "kernel", {"tiled", "query"}, "tensor",
       "parameter kernel must be one of tiled, query; got 'tensor'"},
      {"lbjoin", "lanes", {"1", "2", "4", "8", "16", "32"}, "3",
       "parameter lanes must be 1, 2, 4, 8, 16 or 32, got 3"},
      {"lbjoin", "stage_dims", {"8", "16"}, "4",
       "parameter stage_dims must be one of 8, 16; got '4'"},
      {"gds-join", "lanes", {"1", "32"}, "64",
       "parameter lanes must be an integer in [1, 32], got '64'"},
      {"gds-join", "arithmetic", {"join", "fp16", "fp16-fp32"}, "fp8",
       "parameter arithmetic must be one of join, fp16, fp16-fp32; got 'fp8'"},
      {"hegjoin", "partition", {"dynamic", "static-queries", "static-candidates"}, "random",
       "parameter partition must be one of dynamic, static-queries, static-candidates; got "
       "'random'"},
      {"hegjoin", "cpu_engine", {"grid", "super-ego"}, "rtree",
       "parameter cpu_engine must be one of grid, super-ego; got 'rtree'"},
      {"hegjoin", "cpu_threads", {"0", "4096"}, "4097",
       "parameter cpu_threads must be an integer in [0, 4096], got '4097'"},
      {"hegjoin", "cpu_yield", {"on", "off"}, "auto",
       "parameter cpu_yield must be one of on, off; got 'auto'"},
  };
  for (const char* e : {"ted-join", "meta-16q"}) {
    cases.push_back({e, "kernel", {"auto", "tiles", "gemm"}, "cublas",
                     "parameter kernel must be one of auto, tiles, gemm; got 'cublas'"});
  }
  cases.push_back({"ted-join", "short_circuit", {"on", "off"}, "yes",
                   "parameter short_circuit must be one of on, off; got 'yes'"});
  cases.push_back({"ted-join", "tile_cols", {"auto", "16", "32"}, "8",
                   "parameter tile_cols must be one of auto, 16, 32; got '8'"});
  cases.push_back({"ted-join", "mma", {"auto", "m8n8k4", "m16n8k4", "m16n8k8", "m16n8k16"},
                   "m8n8k8",
                   "parameter mma must be one of auto, m8n8k4, m16n8k4, m16n8k8, m16n8k16; got "
                   "'m8n8k8'"});
  cases.push_back({"meta-16q", "warp_rows", {"auto", "32", "64"}, "16",
                   "parameter warp_rows must be one of auto, 32, 64; got '16'"});
  cases.push_back({"meta-16q", "accumulate", {"fp32"}, "fp64",
                   "parameter accumulate must be one of fp32, fp16; got 'fp64'"});
  cases.push_back({"meta-1q", "accumulate", {"fp32", "fp16"}, "fp64",
                   "parameter accumulate must be one of fp32, fp16; got 'fp64'"});
  for (const char* e : {"gds-join", "ted-join", "meta-16q", "meta-1q"}) {
    cases.push_back({e, "mode", {"indexed", "brute-force"}, "grid",
                     "parameter mode must be one of indexed, brute-force; got 'grid'"});
  }
  // The row-join switches, in every engine that embeds them.
  for (const char* e : {"lbjoin", "gds-join", "hegjoin", "ted-join", "meta-16q", "meta-1q"}) {
    cases.push_back({e, "sort", {"on", "off"}, "1", "parameter sort must be one of on, off; got '1'"});
    cases.push_back({e, "fill", {"auto", "records", "second-pass"}, "none",
                     "parameter fill must be one of auto, records, second-pass; got 'none'"});
    cases.push_back({e, "index_dims", {"1", "8"}, "9",
                     "parameter index_dims must be an integer in [1, 8], got '9'"});
    cases.push_back({e, "segment_ids", {"1", "1000"}, "", ""});
  }
  for (const char* e : {"lbjoin", "gds-join", "ted-join", "meta-16q", "meta-1q"}) {
    cases.push_back({e, "queue", {"on", "off"}, "yes",
                     "parameter queue must be one of on, off; got 'yes'"});
    cases.push_back({e, "pattern", {"full", "lid-unicomp"}, "unicomp",
                     "parameter pattern must be one of full, lid-unicomp; got 'unicomp'"});
  }
  return cases;
}

void check_values(const std::vector<value_case>& cases) {
  for (const value_case& c : cases) {
    SCOPED_TRACE(c.engine + " " + c.key);
    for (const std::string& v : c.accepted) {
      EXPECT_EQ(parse_error(c.engine, {{c.key, v}}), "") << v;
    }
    // Memory overrides are only accepted here; dispatch checks their values.
    if (!c.message.empty()) {
      EXPECT_EQ(parse_error(c.engine, {{c.key, c.bad}}), c.message);
    }
  }
}

TEST(engine_params, cpu_engines_accept_their_values_and_reject_bad_ones) { check_values(cpu_cases()); }

TEST(engine_params, gpu_engines_accept_their_values_and_reject_bad_ones) {
  if (!has_cuda_engines()) GTEST_SKIP() << "built without CUDA";
  check_values(gpu_cases());
}

TEST(engine_params, hegjoin_checks_what_applies_to_its_configuration) {
  if (!has_cuda_engines()) GTEST_SKIP() << "built without CUDA";
  EXPECT_EQ(parse_error("hegjoin", {{"ego_leaf", "64"}}),
            "hegjoin: parameter ego_leaf applies to cpu_engine=super-ego only");
  EXPECT_EQ(parse_error("hegjoin", {{"cpu_engine", "super-ego"}, {"ego_leaf", "64"}}), "");
  EXPECT_EQ(parse_error("hegjoin", {{"cpu_engine", "super-ego"}, {"pattern", "lid-unicomp"}}),
            "hegjoin: cpu_engine=super-ego computes full rows; it needs pattern=full, not "
            "lid-unicomp");
  EXPECT_EQ(parse_error("hegjoin", {{"gpu_fraction", "0.5"}}),
            "parameter gpu_fraction applies to the static partitions only (partition=dynamic)");
  EXPECT_EQ(parse_error("hegjoin", {{"partition", "static-queries"}, {"gpu_fraction", "0.5"}}),
            "");
  EXPECT_EQ(parse_error("hegjoin", {{"partition", "static-queries"}, {"gpu_fraction", "2"}}),
            "parameter gpu_fraction must be a number in [0, 1], got '2'");
  EXPECT_EQ(parse_error("hegjoin", {{"partition", "static-queries"}, {"ref_gpu_seconds", "1"}}),
            "the static model needs both ref_gpu_seconds and ref_cpu_seconds");
  EXPECT_EQ(parse_error("hegjoin", {{"partition", "static-queries"}, {"cpu_yield", "on"}}),
            "parameter cpu_yield applies to partition=dynamic only (a static partition's CPU "
            "part is the CPU's to finish)");
  EXPECT_EQ(parse_error("gds-join", {{"mode", "brute-force"}, {"index_dims", "4"}}),
            "parameter index_dims means nothing with mode=brute-force (no index)");
}

TEST(engine_params, tensor_engines_check_what_applies_to_their_kernels) {
  if (!has_cuda_engines()) GTEST_SKIP() << "built without CUDA";
  // A tiles parameter asks for the tiles kernel; naming gemm with it is refused.
  for (const char* key : {"short_circuit", "tile_cols"}) {
    const std::string value = std::string(key) == "tile_cols" ? "32" : "on";
    EXPECT_EQ(parse_error("ted-join", {{key, value}, {"kernel", "gemm"}}),
              "short_circuit and tile_cols are the tiles kernel's (kernel=tiles), not gemm's");
    EXPECT_EQ(parse_error("ted-join", {{key, value}, {"kernel", "tiles"}}), "");
  }
  EXPECT_EQ(parse_error("meta-16q", {{"warp_rows", "64"}, {"kernel", "tiles"}}),
            "warp_rows is the gemm kernel's, not the tiles kernel's");
  EXPECT_EQ(parse_error("meta-16q", {{"warp_rows", "64"}, {"kernel", "gemm"}}), "");
  EXPECT_EQ(parse_error("meta-16q", {{"accumulate", "fp16"}}),
            "meta-16q does not accumulate in FP16: the expanded formula |q|^2 + |c|^2 - 2 q.c "
            "cancels catastrophically there (dissertation ch. 6; tests/unit/test_half_bound.cpp "
            "shows most squared distances off by more than a quarter), so only accumulate=fp32 "
            "is offered");
  for (const char* e : {"ted-join", "meta-16q", "meta-1q"}) {
    EXPECT_EQ(parse_error(e, {{"mode", "brute-force"}, {"index_dims", "4"}}),
              "parameter index_dims means nothing with mode=brute-force (no index)");
  }
}

TEST(engine_params, tensor_engines_declare_their_kinds) {
  if (!has_cuda_engines()) GTEST_SKIP() << "built without CUDA";
  const auto kinds_of = [](const std::string& name) {
    std::vector<std::pair<std::string, param_kind>> kinds;
    for (const param_spec& s : engine_named(name).param_specs()) kinds.emplace_back(s.key, s.kind);
    return kinds;
  };
  using k = param_kind;
  const std::vector<std::pair<std::string, param_kind>> rows = {
      {"sort", k::ablation},     {"queue", k::ablation},      {"pattern", k::ablation},
      {"fill", k::ablation},     {"index_dims", k::tuning},   {"segment_ids", k::debug},
      {"chunk_ids", k::debug},   {"mode", k::ablation}};
  auto ted = rows;
  ted.insert(ted.end(), {{"short_circuit", k::ablation},
                         {"tile_cols", k::tuning},
                         {"kernel", k::tuning},
                         {"mma", k::tuning}});
  EXPECT_EQ(kinds_of("ted-join"), ted);
  std::vector<std::pair<std::string, param_kind>> meta16q = {
      {"accumulate", k::ablation}, {"warp_rows", k::tuning}, {"kernel", k::tuning}};
  meta16q.insert(meta16q.end(), rows.begin(), rows.end());
  EXPECT_EQ(kinds_of("meta-16q"), meta16q);
  std::vector<std::pair<std::string, param_kind>> meta1q = {{"accumulate", k::ablation}};
  meta1q.insert(meta1q.end(), rows.begin(), rows.end());
  EXPECT_EQ(kinds_of("meta-1q"), meta1q);
}

struct other_params final : engine_params {};

TEST(engine_params, a_request_hands_out_only_its_own_engines_params) {
  resources res(1);
  join_options options;
  count_sink sink;
  join_stats stats;
  const auto typed = engine_named("cpu-rtree").parse_params({});
  join_request req{res, {}, {}, true, options, sink, stats, {}, typed.get()};
  EXPECT_THROW(req.params_as<other_params>(), error);
  req.params = nullptr;
  EXPECT_THROW(req.params_as<other_params>(), error);
}

}  // namespace
}  // namespace epsjoin::detail

namespace epsjoin::test {
namespace {

// Typed parameters reach the engines: joins with parameters still give the oracle's answer
// (cpu-grid's fill pass parses its own parameters, with pattern=full added).
TEST(engine_params, joins_with_parameters_match_the_oracle) {
  const std::vector<engine_config> configs = {
      {"cpu-grid", {{"pattern", "unicomp"}, {"lookup", "tree"}, {"gather", "off"}}},
      {"cpu-grid", {{"layout", "rows"}, {"early_exit", "8"}, {"max_indexed_dims", "3"}}},
      {"super-ego", {{"leaf", "16"}, {"sort", "merge"}, {"prune", "ego"}}},
      {"cpu-rtree", {{"index_dims", "2"}}},
  };
  const auto& cases = property_cases();
  for (const engine_config& config : configs) {
    for (std::size_t i = 0; i < cases.size(); i += 7) {
      SCOPED_TRACE(config.engine + " " + cases[i].name());
      check_against_oracle(config, cases[i]);
    }
  }
}

}  // namespace
}  // namespace epsjoin::test
