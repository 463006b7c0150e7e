// The text form of generator specs: distribution:d:N[:key=value...].
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expects.hpp"
#include "data/count_parse.hpp"
#include "data/generate_detail.hpp"
#include "epsjoin/generate.hpp"

namespace epsjoin {

namespace {

constexpr std::string_view expected_form =
    "expected distribution:d:N[:key=value...] with distribution uniform, expo or gauss, "
    "e.g. expo:2:2M or gauss:8:100000:clusters=32:sigma=0.02:seed=7";

// Every message names the whole spec, the part at fault and the form expected.
[[noreturn]] void reject(std::string_view text, const std::string& problem) {
  throw invalid_argument(
      detail::concat("bad generator spec \"", text, "\": ", problem, "; ", expected_form));
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  for (;;) {
    const std::size_t at = text.find(sep);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<distribution> distribution_named(std::string_view name) {
  const std::string n = lower(name);
  if (n == "uniform") return distribution::uniform;
  if (n == "expo" || n == "exponential") return distribution::exponential;
  if (n == "gauss" || n == "gaussian") return distribution::gaussian_clusters;
  return std::nullopt;
}

std::string_view canonical_name(distribution dist) {
  switch (dist) {
    case distribution::uniform:
      return "uniform";
    case distribution::exponential:
      return "expo";
    case distribution::gaussian_clusters:
      return "gauss";
  }
  return "?";
}

std::string_view keys_of(distribution dist) {
  switch (dist) {
    case distribution::uniform:
      return "seed";
    case distribution::exponential:
      return "seed, lambda, paper";
    case distribution::gaussian_clusters:
      return "seed, clusters, sigma";
  }
  return "";
}

bool key_applies(std::string_view key, distribution dist) {
  if (key == "seed") return true;
  if (key == "lambda" || key == "paper") return dist == distribution::exponential;
  if (key == "clusters" || key == "sigma") return dist == distribution::gaussian_clusters;
  return false;
}

std::optional<double> parse_real(std::string_view s) {
  double value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || end != s.data() + s.size() || !std::isfinite(value)) return {};
  return value;
}

std::optional<std::uint64_t> parse_u64(std::string_view s) {
  std::uint64_t value = 0;
  if (s.empty() || s.front() < '0' || s.front() > '9') return {};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || end != s.data() + s.size()) return {};
  return value;
}

// One key[=value] field applied to `spec`.
void apply_key(std::string_view text, std::string_view field, generator_spec& spec) {
  const std::size_t eq = field.find('=');
  const std::string_view key = field.substr(0, eq);
  const bool bare = eq == std::string_view::npos;
  const std::string_view value = bare ? std::string_view{} : field.substr(eq + 1);
  const auto bad_value = [&](std::string_view wanted) {
    reject(text, detail::concat("value \"", value, "\" of ", key, " is not ", wanted));
  };
  if (key.empty()) reject(text, detail::concat("empty key in \"", field, "\""));
  if (!key_applies(key, spec.dist)) {
    reject(text, detail::concat("key \"", key, "\" does not apply to ", canonical_name(spec.dist),
                                " (its keys: ", keys_of(spec.dist), ")"));
  }
  if (bare && key != "paper") reject(text, detail::concat("key ", key, " needs =value"));
  if (key == "seed") {
    const auto v = parse_u64(value);
    if (!v) bad_value("an integer in [0, 2^64 - 1]");
    spec.seed = *v;
  } else if (key == "lambda") {
    const auto v = parse_real(value);
    if (!v || !(*v >= detail::min_lambda)) {
      bad_value(detail::concat("a number >= ", detail::min_lambda));
    }
    spec.lambda = *v;
  } else if (key == "clusters") {
    const auto v = detail::parse_count(value);
    if (!v.value || *v.value == 0 || *v.value > detail::max_generated_n) {
      bad_value(detail::concat("a whole number in [1, 2^32 - 1]", v.problem));
    }
    spec.clusters = static_cast<std::size_t>(*v.value);
  } else if (key == "sigma") {
    const auto v = parse_real(value);
    if (!v || !(*v >= 0 && *v <= detail::max_sigma)) bad_value("a number in [0, 1e300]");
    spec.sigma = *v;
  } else if (key == "paper") {
    if (!bare && value != "0" && value != "1") bad_value("0 or 1 (or give paper alone)");
    spec.paper = bare || value == "1";
  }
}

}  // namespace

generator_spec parse_generator_spec(std::string_view text) {
  const std::vector<std::string_view> fields = split(text, ':');
  if (fields.size() < 3) reject(text, "it has fewer than three ':'-separated fields");
  generator_spec spec;
  const auto dist = distribution_named(fields[0]);
  if (!dist) reject(text, detail::concat("unknown distribution \"", fields[0], "\""));
  spec.dist = *dist;

  const auto d = parse_u64(fields[1]);
  if (!d || *d == 0 || *d > detail::max_generated_d) {
    reject(text, detail::concat("d \"", fields[1], "\" is not a whole number in [1, ",
                                detail::max_generated_d, "]"));
  }
  spec.d = static_cast<std::size_t>(*d);

  const auto n = detail::parse_count(fields[2]);
  if (!n.value || *n.value > detail::max_generated_n) {
    reject(text, detail::concat("N \"", fields[2], "\" is not a whole number in [0, 2^32 - 1]",
                                n.problem, " (forms: 2000000, 2e6, 2M, 500k, 1.5G)"));
  }
  spec.n = static_cast<std::size_t>(*n.value);

  std::vector<std::string_view> seen;
  for (std::size_t k = 3; k < fields.size(); ++k) {
    const std::string_view key = fields[k].substr(0, fields[k].find('='));
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      reject(text, detail::concat("key \"", key, "\" is given twice"));
    }
    seen.push_back(key);
    apply_key(text, fields[k], spec);
  }
  try {
    detail::validate(spec);
  } catch (const invalid_argument& e) {
    std::string_view why = e.what();
    if (why.starts_with("generator: ")) why.remove_prefix(11);
    reject(text, std::string(why));
  }
  return spec;
}

std::string to_string(const generator_spec& spec) {
  // Every parameter of the distribution is written, defaults included, so the text pins the
  // data down even if a default changes one day. Reals use the shortest round-trip form.
  const auto real = [](double v) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
  };
  std::string out =
      detail::concat(canonical_name(spec.dist), ':', spec.d, ':', spec.n, ":seed=", spec.seed);
  switch (spec.dist) {
    case distribution::uniform:
      break;
    case distribution::exponential:
      out += ":lambda=" + real(spec.lambda);
      if (spec.paper) out += ":paper=1";
      break;
    case distribution::gaussian_clusters:
      out += detail::concat(":clusters=", spec.clusters, ":sigma=", real(spec.sigma));
      break;
  }
  return out;
}

namespace detail {

void validate(const generator_spec& spec) {
  EPSJOIN_EXPECTS(spec.d >= 1 && spec.d <= max_generated_d, "generator: d = ", spec.d,
                  " is outside [1, ", max_generated_d, "]");
  EPSJOIN_EXPECTS(spec.n <= max_generated_n, "generator: N = ", spec.n,
                  " exceeds 2^32 - 1 (point ids are 32-bit)");
  if (spec.dist == distribution::exponential) {
    EPSJOIN_EXPECTS(std::isfinite(spec.lambda) && spec.lambda >= min_lambda,
                    "generator: lambda = ", spec.lambda, " is not a finite number >= ", min_lambda,
                    " (smaller values make redrawing above 1 endless)");
  }
  if (spec.dist == distribution::gaussian_clusters) {
    EPSJOIN_EXPECTS(spec.clusters >= 1 && spec.clusters <= max_generated_n,
                    "generator: clusters = ", spec.clusters, " is outside [1, 2^32 - 1]");
    EPSJOIN_EXPECTS(spec.sigma >= 0 && spec.sigma <= max_sigma, "generator: sigma = ", spec.sigma,
                    " is not a number in [0, 1e300]");
  }
  EPSJOIN_EXPECTS(!spec.paper || spec.dist == distribution::exponential,
                  "generator: paper mode exists for the exponential distribution only");
  EPSJOIN_EXPECTS(!spec.paper || spec.seed <= 0xFFFFFFFFu, "generator: seed ", spec.seed,
                  " does not fit the 32-bit std::mt19937 of paper mode");
}

}  // namespace detail

}  // namespace epsjoin
