#include "summary.hpp"

#include <cstdio>
#include <sstream>

namespace epsjoin::cli {

// 1234567 -> "1,234,567": large counts are read far more easily with separators.
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

std::string general(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", c);
      out += esc;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string json_number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

std::string human_summary(const run_report& r) {
  const join_stats& s = r.stats;
  std::ostringstream out;
  out << "epsjoin: " << (s.self_join ? "self-join" : "join A x B") << " with engine " << s.engine;
  if (!s.engine_reason.empty()) out << " (auto: " << s.engine_reason << ")";
  out << ", " << s.threads << " CPU thread" << (s.threads == 1 ? "" : "s") << "\n";
  out << "  input       " << r.input << "\n";
  out << "  points      N = " << grouped(s.n_data);
  if (!s.self_join) out << " indexed, " << grouped(s.n_queries) << " queries";
  out << ", d = " << s.d << ", eps = " << general(s.eps) << ", computed in "
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
  out << "  time        join " << fixed(s.seconds, 3) << " s";
  if (r.run_seconds.size() > 1) out << " (median of " << r.run_seconds.size() << " runs)";
  for (const stage_time& st : s.stages) out << ", " << st.name << " " << fixed(st.seconds, 3) << " s";
  out << "\n              input " << fixed(r.load_seconds, 3) << " s";
  if (!r.output.empty() && r.streamed) out << ", writing streamed during the join";
  if (!r.output.empty() && !r.streamed) out << ", writing " << fixed(r.write_seconds, 3) << " s";
  out << "; total " << fixed(r.total_seconds, 3) << " s";
  out << "\n";
  for (const auto& [name, value] : s.notes) out << "  " << name << ": " << value << "\n";
  if (!r.output.empty()) out << "  output      " << r.output << " (" << r.format << ")\n";
  return out.str();
}

std::string json_summary(const run_report& r) {
  const join_stats& s = r.stats;
  std::ostringstream out;
  out << "{\"engine\":" << json_string(s.engine) << ",\"self_join\":" << (s.self_join ? "true" : "false")
      << ",\"n\":" << s.n_data << ",\"n_queries\":" << s.n_queries << ",\"d\":" << s.d
      << ",\"eps\":" << json_number(s.eps) << ",\"precision\":" << json_string(std::string(to_string(s.precision)))
      << ",\"threads\":" << s.threads << ",\"pairs\":" << s.pairs
      << ",\"pairs_with_self\":" << (s.self_join ? s.pairs + s.n_data : s.pairs)
      << ",\"selectivity\":" << json_number(s.selectivity()) << ",\"candidates\":" << s.candidates
      << ",\"seconds\":" << json_number(s.seconds)
      << ",\"candidates_per_second\":" << json_number(s.candidates_per_second())
      << ",\"load_seconds\":" << json_number(r.load_seconds)
      << ",\"write_seconds\":" << json_number(r.write_seconds)
      << ",\"total_seconds\":" << json_number(r.total_seconds) << ",\"stages\":{";
  for (std::size_t i = 0; i < s.stages.size(); ++i) {
    out << (i ? "," : "") << json_string(s.stages[i].name) << ":" << json_number(s.stages[i].seconds);
  }
  out << "},\"notes\":{";
  for (std::size_t i = 0; i < s.notes.size(); ++i) {
    out << (i ? "," : "") << json_string(s.notes[i].first) << ":" << json_string(s.notes[i].second);
  }
  out << "},\"input\":" << json_string(r.input) << ",\"output\":" << json_string(r.output)
      << ",\"format\":" << json_string(r.format);
  if (r.run_seconds.size() > 1) {
    out << ",\"run_seconds\":[";
    for (std::size_t i = 0; i < r.run_seconds.size(); ++i) out << (i ? "," : "") << json_number(r.run_seconds[i]);
    out << "]";
  }
  if (!s.engine_reason.empty()) out << ",\"engine_reason\":" << json_string(s.engine_reason);
  out << "}";
  return out.str();
}

}  // namespace epsjoin::cli
