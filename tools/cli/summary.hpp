#pragma once
// The run summary: a human-readable block, or one JSON object for scripts.

#include <cstdint>
#include <string>
#include <vector>

#include "epsjoin/stats.hpp"

namespace epsjoin::cli {

struct run_report {
  join_stats stats;
  std::string input;        // file name or generator spec
  std::string output;       // file written, empty if none
  std::string format;       // csr, pairs, csv, count
  double load_seconds = 0;  // reading or generating the input
  double write_seconds = 0; // writing the output file after the join (pair files: during it)
  bool streamed = false;    // the output was written during the join (pair files)
  double total_seconds = 0; // the whole command: input, every run, writing (what `time` sees)
  std::vector<double> run_seconds;  // every run's join time (--repeat); stats is the median run
};

/// Formatting the summaries share: 1234567 -> "1,234,567"; fixed decimals; the shortest text
/// that reads back as the same double (eps 0.1 as 0.1, not 0.10000000000000001); a time in
/// seconds to a millisecond from 1 s up and to three significant digits below (0.000343, not
/// 0.000); six significant digits (rates); a JSON string literal (escaped, what is not UTF-8
/// replaced); a JSON number, shortest round-trip, null when not finite.
std::string grouped(std::uint64_t value);
std::string fixed(double value, int decimals);
std::string shortest(double value);
std::string duration(double seconds);
std::string general(double value);
std::string json_string(const std::string& s);
std::string json_number(double value);

std::string human_summary(const run_report& report);
/// One JSON object; fields engine, n, d, eps, pairs, selectivity, candidates, seconds are stable.
std::string json_summary(const run_report& report);

}  // namespace epsjoin::cli
