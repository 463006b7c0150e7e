#include "summary.hpp"

#include <charconv>
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

namespace epsjoin::cli {

std::string grouped(std::uint64_t value) {
  const std::string digits = std::to_string(value);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string shortest(double value) {
  char text[64];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  return std::string(text, end);
}

std::string duration(double seconds) {
  char text[64];
  std::snprintf(text, sizeof text, seconds >= 1 ? "%.3f" : "%.3g", seconds);
  return text;
}

std::string general(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

// A file name need not be UTF-8: what is not is replaced rather than failing after the join.
constexpr auto invalid_utf8 = nlohmann::ordered_json::error_handler_t::replace;

std::string json_string(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, invalid_utf8);
}

std::string json_number(double value) { return nlohmann::json(value).dump(); }

std::string human_summary(const run_report& r) {
  const join_stats& s = r.stats;
  std::ostringstream out;
  out << "epsjoin: " << (s.self_join ? "self-join" : "join A x B") << " with engine " << s.engine;
  if (!s.engine_reason.empty()) out << " (auto: " << s.engine_reason << ")";
  out << ", " << s.threads << " CPU thread" << (s.threads == 1 ? "" : "s") << "\n";
  out << "  input       " << r.input << "\n";
  out << "  points      N = " << grouped(s.n_data);
  if (!s.self_join) out << " indexed, " << grouped(s.n_queries) << " queries";
  out << ", d = " << s.d << ", eps = " << shortest(s.eps) << ", computed in "
      << to_string(s.precision) << "\n";
  if (s.self_join) {
    out << "  result      |R| = " << grouped(s.pairs + s.n_data) << " pairs incl. self, "
        << grouped(s.pairs) << " excl. self (" << grouped(s.pairs / 2) << " unique)\n";
  } else {
    out << "  result      |R| = " << grouped(s.pairs) << " pairs (a, b)\n";
  }
  out << "  selectivity S = " << fixed(s.selectivity(), 2) << " neighbours per point\n";
  out << "  candidates  " << grouped(s.candidates) << " refined, "
      << general(s.candidates_per_second()) << " per second\n";
  out << "  time        join " << duration(s.seconds) << " s";
  if (r.run_seconds.size() > 1) out << " (median of " << r.run_seconds.size() << " runs)";
  for (const stage_time& st : s.stages) {
    out << ", " << st.name << " " << duration(st.seconds) << " s";
  }
  out << "\n              input " << duration(r.load_seconds) << " s";
  if (!r.output.empty() && r.streamed) out << ", writing streamed during the join";
  if (!r.output.empty() && !r.streamed) out << ", writing " << duration(r.write_seconds) << " s";
  out << "; total " << duration(r.total_seconds) << " s";
  out << "\n";
  for (const auto& [name, value] : s.notes) out << "  " << name << ": " << value << "\n";
  if (!r.output.empty()) out << "  output      " << r.output << " (" << r.format << ")\n";
  return out.str();
}

std::string json_summary(const run_report& r) {
  const join_stats& s = r.stats;
  // ordered_json keeps the fields in this order; numbers are written shortest round-trip, a
  // non-finite one as null, so the object is valid JSON whatever the run measured.
  nlohmann::ordered_json out;
  out["engine"] = s.engine;
  out["self_join"] = s.self_join;
  out["n"] = s.n_data;
  out["n_queries"] = s.n_queries;
  out["d"] = s.d;
  out["eps"] = s.eps;
  out["precision"] = std::string(to_string(s.precision));
  out["threads"] = s.threads;
  out["pairs"] = s.pairs;
  out["pairs_with_self"] = s.self_join ? s.pairs + s.n_data : s.pairs;
  out["selectivity"] = s.selectivity();
  out["candidates"] = s.candidates;
  out["seconds"] = s.seconds;
  out["candidates_per_second"] = s.candidates_per_second();
  out["load_seconds"] = r.load_seconds;
  out["write_seconds"] = r.write_seconds;
  out["total_seconds"] = r.total_seconds;
  out["stages"] = nlohmann::ordered_json::object();
  for (const stage_time& st : s.stages) out["stages"][st.name] = st.seconds;
  out["notes"] = nlohmann::ordered_json::object();
  for (const auto& [name, value] : s.notes) out["notes"][name] = value;
  out["input"] = r.input;
  out["output"] = r.output;
  out["format"] = r.format;
  if (r.run_seconds.size() > 1) out["run_seconds"] = r.run_seconds;
  if (!s.engine_reason.empty()) out["engine_reason"] = s.engine_reason;
  return out.dump(-1, ' ', false, invalid_utf8);
}

}  // namespace epsjoin::cli
