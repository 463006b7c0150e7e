// The text form of generator specs: what parses, what is refused and why, canonical round trips.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "data/count_parse.hpp"
#include "epsjoin/error.hpp"
#include "epsjoin/generate.hpp"

namespace {

using epsjoin::distribution;
using epsjoin::generator_spec;
using epsjoin::parse_generator_spec;

void expect_same(const generator_spec& a, const generator_spec& b) {
  EXPECT_EQ(a.dist, b.dist);
  EXPECT_EQ(a.d, b.d);
  EXPECT_EQ(a.n, b.n);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.lambda, b.lambda);
  EXPECT_EQ(a.clusters, b.clusters);
  EXPECT_EQ(a.sigma, b.sigma);
  EXPECT_EQ(a.paper, b.paper);
}

// The message of the invalid_argument `text` raises; fails the test if it parses.
std::string rejection(const std::string& text) {
  try {
    parse_generator_spec(text);
  } catch (const epsjoin::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "\"" << text << "\" parsed but should have been refused";
  return {};
}

TEST(generator_spec_parse, defaults_and_names) {
  const generator_spec s = parse_generator_spec("expo:2:2000000");
  EXPECT_EQ(s.dist, distribution::exponential);
  EXPECT_EQ(s.d, 2u);
  EXPECT_EQ(s.n, 2000000u);
  EXPECT_EQ(s.seed, 2137834274u);
  EXPECT_EQ(s.lambda, 40.0);
  EXPECT_FALSE(s.paper);
  EXPECT_EQ(parse_generator_spec("exponential:2:1").dist, distribution::exponential);
  EXPECT_EQ(parse_generator_spec("Expo:2:1").dist, distribution::exponential);
  EXPECT_EQ(parse_generator_spec("uniform:4:1").dist, distribution::uniform);
  EXPECT_EQ(parse_generator_spec("gauss:8:1").dist, distribution::gaussian_clusters);
  EXPECT_EQ(parse_generator_spec("gaussian:8:1").dist, distribution::gaussian_clusters);
  EXPECT_EQ(parse_generator_spec("uniform:4096:1").d, 4096u);
}

TEST(generator_spec_parse, count_forms) {
  // clang-format off
  const std::vector<std::pair<std::string, std::size_t>> cases = {
      {"0", 0},          {"7", 7},           {"2000000", 2000000}, {"2e6", 2000000},
      {"2E6", 2000000},  {"2e+6", 2000000},  {"2M", 2000000},      {"2m", 2000000},
      {"500k", 500000},  {"500K", 500000},   {"2.5M", 2500000},    {"1.5e3", 1500},
      {"2000e-3", 2},    {"0.5k", 500},      {".5k", 500},         {"1.", 1},
      {"007", 7},        {"1G", 1000000000}, {"4294967295", 4294967295u},
      {"4.294967295G", 4294967295u}};
  // clang-format on
  for (const auto& [text, n] : cases) {
    EXPECT_EQ(parse_generator_spec("uniform:2:" + text).n, n) << text;
  }
}

TEST(generator_spec_parse, count_rejections) {
  const std::vector<std::string> bad = {"1.5e0", "1.5",  "-5",  "4294967296", "5G",        "1e20",
                                        "",      "abc",  "2MM", "2 M",        "0x10",      "1e",
                                        "e5",    "1e-1", "+5",  "2k5",        "1e99999999"};
  for (const std::string& text : bad) {
    const std::string message = rejection("uniform:2:" + text);
    EXPECT_NE(message.find("N \"" + text + "\""), std::string::npos) << message;
    EXPECT_NE(message.find("expected distribution:d:N"), std::string::npos) << message;
  }
  EXPECT_NE(rejection("uniform:2:1.5e0").find("not a whole number"), std::string::npos);
  EXPECT_NE(rejection("uniform:2:-5").find("negative"), std::string::npos);
  EXPECT_NE(rejection("uniform:2:5G").find("2^32 - 1"), std::string::npos);
}

TEST(generator_spec_parse, count_parser_beyond_32_bits) {
  EXPECT_EQ(*epsjoin::detail::parse_count("18446744073709551615").value, UINT64_MAX);
  EXPECT_FALSE(epsjoin::detail::parse_count("18446744073709551616").value);
  EXPECT_EQ(*epsjoin::detail::parse_count("1.8e19").value, 18000000000000000000u);
  EXPECT_FALSE(epsjoin::detail::parse_count("1e20").value);
}

TEST(generator_spec_parse, dimension_rejections) {
  for (const std::string d : {"0", "-1", "4097", "2.0", "x", "", "2e0", " 2"}) {
    const std::string message = rejection("expo:" + d + ":10");
    EXPECT_NE(message.find("d \"" + d + "\""), std::string::npos) << message;
    EXPECT_NE(message.find("[1, 4096]"), std::string::npos) << message;
  }
}

TEST(generator_spec_parse, shape_rejections) {
  EXPECT_NE(rejection("").find("fewer than three"), std::string::npos);
  EXPECT_NE(rejection("expo:2").find("fewer than three"), std::string::npos);
  EXPECT_NE(rejection("poisson:2:10").find("unknown distribution \"poisson\""), std::string::npos);
  EXPECT_NE(rejection("expo:2:10:").find("empty key"), std::string::npos);
  EXPECT_NE(rejection("expo:2:10::seed=1").find("empty key"), std::string::npos);
}

TEST(generator_spec_parse, keys) {
  const generator_spec g = parse_generator_spec("gauss:8:100000:clusters=32:sigma=0.02:seed=7");
  EXPECT_EQ(g.clusters, 32u);
  EXPECT_EQ(g.sigma, 0.02);
  EXPECT_EQ(g.seed, 7u);
  EXPECT_EQ(parse_generator_spec("gauss:2:1:clusters=1k").clusters, 1000u);
  EXPECT_EQ(parse_generator_spec("gauss:2:1:sigma=0").sigma, 0.0);
  EXPECT_EQ(parse_generator_spec("expo:2:1:lambda=2.5").lambda, 2.5);
  EXPECT_EQ(parse_generator_spec("expo:2:1:lambda=0.01").lambda, 0.01);
  EXPECT_EQ(parse_generator_spec("uniform:2:1:seed=18446744073709551615").seed, UINT64_MAX);
  EXPECT_EQ(parse_generator_spec("uniform:2:1:seed=0").seed, 0u);
}

TEST(generator_spec_parse, paper_key) {
  const generator_spec p = parse_generator_spec("expo:2:2M:paper");
  EXPECT_TRUE(p.paper);
  EXPECT_EQ(p.seed, 2137834274u);  // the papers' seed unless another is given
  EXPECT_EQ(p.lambda, 40.0);
  EXPECT_TRUE(parse_generator_spec("expo:2:2M:paper=1").paper);
  EXPECT_FALSE(parse_generator_spec("expo:2:2M:paper=0").paper);
  EXPECT_EQ(parse_generator_spec("expo:2:2M:paper:seed=7").seed, 7u);
  EXPECT_EQ(parse_generator_spec("expo:2:2M:paper:seed=4294967295").seed, 4294967295u);
  EXPECT_NE(rejection("expo:2:2M:paper:seed=4294967296").find("32-bit"), std::string::npos);
  EXPECT_NE(rejection("expo:2:2M:paper=2").find("0 or 1"), std::string::npos);
  EXPECT_NE(rejection("expo:2:2M:paper=yes").find("0 or 1"), std::string::npos);
  EXPECT_NE(rejection("uniform:2:2M:paper").find("does not apply to uniform"), std::string::npos);
  EXPECT_NE(rejection("gauss:2:2M:paper=0").find("does not apply to gauss"), std::string::npos);
}

TEST(generator_spec_parse, key_rejections) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"expo:2:10:colour=red", "key \"colour\" does not apply to expo (its keys: seed, lambda"},
      {"uniform:2:10:lambda=3", "key \"lambda\" does not apply to uniform (its keys: seed)"},
      {"expo:2:10:sigma=0.1", "key \"sigma\" does not apply to expo"},
      {"expo:2:10:clusters=3", "key \"clusters\" does not apply to expo"},
      {"expo:2:10:seed=1:seed=2", "key \"seed\" is given twice"},
      {"expo:2:10:seed", "key seed needs =value"},
      {"expo:2:10:seed=", "value \"\" of seed"},
      {"expo:2:10:seed=-1", "value \"-1\" of seed"},
      {"expo:2:10:seed=1.5", "value \"1.5\" of seed"},
      {"expo:2:10:seed=18446744073709551616", "of seed is not an integer in [0, 2^64 - 1]"},
      {"expo:2:10:lambda=0", "value \"0\" of lambda is not a number >= 0.01"},
      {"expo:2:10:lambda=-1", "of lambda"},
      {"expo:2:10:lambda=0.001", "of lambda"},
      {"expo:2:10:lambda=inf", "of lambda"},
      {"expo:2:10:lambda=nan", "of lambda"},
      {"expo:2:10:lambda=1e999", "of lambda"},
      {"expo:2:10:lambda=4x", "of lambda"},
      {"gauss:2:10:clusters=0", "value \"0\" of clusters is not a whole number in [1, 2^32 - 1]"},
      {"gauss:2:10:clusters=1.5", "not a whole number in [1, 2^32 - 1] (it is not a whole"},
      {"gauss:2:10:clusters=5G", "of clusters"},
      {"gauss:2:10:sigma=-0.1", "value \"-0.1\" of sigma is not a number in [0, 1e300]"},
      // Found by fuzz_generate_spec: points this far out overflowed to infinity.
      {"gauss:3:15:sigma=1e308", "value \"1e308\" of sigma is not a number in [0, 1e300]"},
      {"gauss:2:10:sigma=abc", "of sigma"},
  };
  for (const auto& [text, part] : cases) {
    const std::string message = rejection(text);
    EXPECT_NE(message.find(part), std::string::npos) << text << " gave: " << message;
    EXPECT_NE(message.find("bad generator spec \"" + text + "\""), std::string::npos) << message;
  }
}

TEST(generator_spec_to_string, canonical_forms) {
  EXPECT_EQ(to_string(parse_generator_spec("expo:2:2M")),
            "expo:2:2000000:seed=2137834274:lambda=40");
  EXPECT_EQ(to_string(parse_generator_spec("Exponential:2:2e6:paper")),
            "expo:2:2000000:seed=2137834274:lambda=40:paper=1");
  EXPECT_EQ(to_string(parse_generator_spec("uniform:4:1e6:seed=9")), "uniform:4:1000000:seed=9");
  EXPECT_EQ(to_string(parse_generator_spec("gaussian:8:100000:sigma=0.02:clusters=32:seed=7")),
            "gauss:8:100000:seed=7:clusters=32:sigma=0.02");
}

TEST(generator_spec_to_string, round_trips) {
  const std::vector<std::string> texts = {
      "uniform:1:0",
      "uniform:4096:4294967295:seed=18446744073709551615",
      "expo:2:2M",
      "expo:3:10:lambda=0.1:seed=0",
      "expo:3:10:lambda=3.3333333333333335",
      "expo:2:2M:paper:seed=4294967295:lambda=12.5",
      "gauss:8:1000:clusters=4294967295:sigma=0.1",
      "gauss:3:1:sigma=1e-300:clusters=1",
  };
  for (const std::string& text : texts) {
    const generator_spec spec = parse_generator_spec(text);
    const std::string canonical = to_string(spec);
    SCOPED_TRACE(text + " -> " + canonical);
    expect_same(parse_generator_spec(canonical), spec);
    EXPECT_EQ(to_string(parse_generator_spec(canonical)), canonical);
  }
}

}  // namespace
