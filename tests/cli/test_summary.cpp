// The run summary's numbers and JSON, from reports the program could not easily be made to
// produce (a NaN, an infinite rate, a note and a file name no JSON string may hold as they are).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>

#include "summary.hpp"

namespace {

epsjoin::cli::run_report sample_report() {
  epsjoin::cli::run_report r;
  epsjoin::join_stats& s = r.stats;
  s.engine = "cpu-grid";
  s.n_data = s.n_queries = 1000;
  s.d = 3;
  s.eps = 0.1;
  s.pairs = 2468;
  s.candidates = 123456;
  s.seconds = 0.0090490259999999999;
  s.stages = {{"index", 0.001}, {"execute", 1.0 / 3}};
  s.notes = {{"quote \" and backslash \\", "tab\there, newline\nthere"}};
  r.input = "generated uniform:3:1000";
  r.format = "count";
  r.load_seconds = 0.25;
  r.total_seconds = 0.3;
  return r;
}

// Any decimal with more significant digits than a double holds (17) is a formatting artefact.
bool has_overlong_number(const std::string& text) {
  return std::regex_search(text, std::regex(R"(\d\.?\d{17,})"));
}

TEST(json_summary, is_valid_json_with_the_stable_fields) {
  const std::string text = epsjoin::cli::json_summary(sample_report());
  const auto j = nlohmann::json::parse(text);
  for (const char* field : {"engine", "n", "d", "eps", "pairs", "selectivity", "candidates",
                            "seconds", "total_seconds", "stages", "notes"}) {
    EXPECT_TRUE(j.contains(field)) << field;
  }
  EXPECT_EQ(j["engine"], "cpu-grid");
  EXPECT_EQ(j["pairs"], 2468u);
  EXPECT_EQ(j["notes"]["quote \" and backslash \\"], "tab\there, newline\nthere");
  EXPECT_EQ(j["stages"]["execute"].get<double>(), 1.0 / 3);
}

TEST(json_summary, numbers_are_shortest_round_trip) {
  const std::string text = epsjoin::cli::json_summary(sample_report());
  EXPECT_NE(text.find("\"eps\":0.1,"), std::string::npos) << text;
  EXPECT_NE(text.find("\"seconds\":0.009049026,"), std::string::npos) << text;
  EXPECT_FALSE(has_overlong_number(text)) << text;
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["stages"]["execute"].get<double>(), 1.0 / 3);  // shortest, yet exact
}

TEST(json_summary, non_finite_numbers_are_null) {
  auto r = sample_report();
  r.stats.seconds = std::numeric_limits<double>::quiet_NaN();
  r.load_seconds = std::numeric_limits<double>::infinity();
  r.stats.stages.push_back({"broken", -std::numeric_limits<double>::infinity()});
  const auto j = nlohmann::json::parse(epsjoin::cli::json_summary(r));  // throws if invalid
  EXPECT_TRUE(j["seconds"].is_null());
  EXPECT_TRUE(j["load_seconds"].is_null());
  EXPECT_TRUE(j["stages"]["broken"].is_null());
}

TEST(json_summary, a_name_that_is_not_utf8_still_gives_valid_json) {
  auto r = sample_report();
  r.input = "points-\xff\xfe.csv";
  const auto j = nlohmann::json::parse(epsjoin::cli::json_summary(r));
  EXPECT_EQ(j["input"].get<std::string>().rfind("points-", 0), 0u);
}

TEST(json_helpers, numbers_and_strings_other_summaries_share) {
  EXPECT_EQ(epsjoin::cli::json_number(0.1), "0.1");
  EXPECT_EQ(epsjoin::cli::json_number(1e-7), "1e-07");
  EXPECT_EQ(epsjoin::cli::json_number(std::nan("")), "null");
  EXPECT_EQ(epsjoin::cli::json_number(-std::numeric_limits<double>::infinity()), "null");
  const std::string awkward = "a \"quoted\" \\ name\twith\ncontrols\x01";
  EXPECT_EQ(nlohmann::json::parse(epsjoin::cli::json_string(awkward)), awkward);
  EXPECT_EQ(epsjoin::cli::shortest(0.1), "0.1");
  EXPECT_EQ(epsjoin::cli::duration(0.000343), "0.000343");
  EXPECT_EQ(epsjoin::cli::duration(12.34567), "12.346");
}

TEST(human_summary, prints_eps_as_given_and_no_overlong_numbers) {
  const std::string text = epsjoin::cli::human_summary(sample_report());
  EXPECT_NE(text.find("eps = 0.1,"), std::string::npos) << text;
  EXPECT_FALSE(has_overlong_number(text)) << text;
  auto r = sample_report();
  r.stats.eps = 0.000141421356237;
  EXPECT_NE(epsjoin::cli::human_summary(r).find("eps = 0.000141421356237,"), std::string::npos);
}

}  // namespace
