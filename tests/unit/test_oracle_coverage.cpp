// Every registered engine has an oracle suite (EPSJOIN_ENGINE_PROPERTY_TESTS), so registering an
// engine without one, or deleting an engine's last suite, fails here.
//
// Why the suites are found by reading their sources rather than by a list the macro fills at
// static-initialisation time: GPU suites live in another program (epsjoin_gpu_tests), built only
// with CUDA and run only on a GPU machine, so no one program sees every suite; and a checked-in
// list would only move the question to whether the list matches the suites. The registry, on the
// other hand, lists every engine in every build (those not compiled in as unavailable), so this
// test, on a CPU-only machine too, covers the GPU engines' suites.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "epsjoin/join.hpp"

namespace {

namespace fs = std::filesystem;

// The engine name each suite passes first, from the test sources in `dir` (comments skipped, so
// a suite commented out does not count).
void collect_suites(const fs::path& dir, std::set<std::string>& engines) {
  static const std::regex suite(R"(EPSJOIN_ENGINE_PROPERTY_TESTS\(\s*\w+\s*,\s*\{\s*"([^"]+)\")");
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".cpp") continue;
    std::ifstream in(entry.path());
    std::ostringstream code;
    for (std::string line; std::getline(in, line);) {
      code << line.substr(0, line.find("//")) << '\n';
    }
    const std::string text = code.str();
    for (std::sregex_iterator m(text.begin(), text.end(), suite), end; m != end; ++m) {
      engines.insert((*m)[1].str());
    }
  }
}

TEST(oracle_coverage, every_registered_engine_has_an_oracle_suite) {
  const fs::path tests = EPSJOIN_TESTS_DIR;
  std::set<std::string> with_suite;
  for (const char* dir : {"engines", "gpu"}) {
    ASSERT_TRUE(fs::is_directory(tests / dir)) << "no test sources at " << (tests / dir);
    collect_suites(tests / dir, with_suite);
  }
#ifdef EPSJOIN_EXPERIMENT_TESTS_DIR
  collect_suites(EPSJOIN_EXPERIMENT_TESTS_DIR, with_suite);  // experiments/, built in
#endif
  for (const auto& e : epsjoin::engines()) {
    // brute-cpu is the oracle the suites compare against (support/harness.cpp).
    if (e.name == "brute-cpu") continue;
    EXPECT_TRUE(with_suite.count(e.name) > 0)
        << "engine '" << e.name << "' is registered but has no EPSJOIN_ENGINE_PROPERTY_TESTS suite "
        << "under tests/engines or tests/gpu";
  }
}

}  // namespace
