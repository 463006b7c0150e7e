// hegjoin's calibration file (src/hetero/calibration_cache.hpp): fingerprints that tell data sets
// apart, keys on one line, a stored calibration found again (the last for its key), lines that do
// not parse passed over, an unwritable place reported instead of thrown, and the folder chosen
// from the environment.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "hetero/calibration_cache.hpp"
#include "support/temp_dir.hpp"

namespace {

using namespace epsjoin::detail::hetero;
using epsjoin::dataset_view;
using epsjoin::scalar_type;

std::filesystem::path fresh_folder(const char* name) {
  const auto dir = epsjoin::test::temp_dir() / name;
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(calibration_cache, fingerprints_tell_data_apart) {
  std::vector<double> a(3000 * 4), b;
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = 0.001 * static_cast<double>(i % 977);
  b = a;
  const dataset_view va{a.data(), 3000, 4, scalar_type::f64};
  EXPECT_EQ(data_fingerprint(va), data_fingerprint({b.data(), 3000, 4, scalar_type::f64}));
  b.back() += 1;  // the last row is always hashed
  EXPECT_NE(data_fingerprint(va), data_fingerprint({b.data(), 3000, 4, scalar_type::f64}));
  EXPECT_NE(data_fingerprint(va), data_fingerprint({a.data(), 2000, 4, scalar_type::f64}));
  EXPECT_NE(data_fingerprint(va), data_fingerprint({a.data(), 3000, 2, scalar_type::f64}));
  EXPECT_NE(data_fingerprint(va), data_fingerprint({a.data(), 3000, 4, scalar_type::f32}));
  EXPECT_EQ(data_fingerprint({nullptr, 0, 4, scalar_type::f64}),
            data_fingerprint({nullptr, 0, 4, scalar_type::f64}));
}

TEST(calibration_cache, keys_are_one_line_and_differ_by_what_matters) {
  std::vector<float> pts(100 * 3, 0.5f);
  const dataset_view v{pts.data(), 100, 3, scalar_type::f32};
  const std::string k =
      calibration_key(v, v, true, 0.01, scalar_type::f64, "a=1;\tb=2\n", "host/gpu");
  EXPECT_EQ(k.find_first_of("\t\n"), std::string::npos);
  EXPECT_NE(k, calibration_key(v, v, true, 0.02, scalar_type::f64, "a=1;\tb=2\n", "host/gpu"));
  EXPECT_NE(k, calibration_key(v, v, true, 0.01, scalar_type::f32, "a=1;\tb=2\n", "host/gpu"));
  EXPECT_NE(k, calibration_key(v, v, true, 0.01, scalar_type::f64, "a=2;", "host/gpu"));
  EXPECT_NE(k, calibration_key(v, v, true, 0.01, scalar_type::f64, "a=1;\tb=2\n", "other/gpu"));
}

TEST(calibration_cache, stored_calibrations_are_found_again) {
  const auto dir = fresh_folder("store");
  const std::string file = (dir / "sub" / "cal.txt").string();
  EXPECT_FALSE(find_calibration(file, "k1").has_value()) << "no file yet";
  EXPECT_EQ(store_calibration(file, "k1", {0.5, 0.25, 2.0}), "");
  EXPECT_EQ(store_calibration(file, "k2", {0.1, 1e-6, 3.5}), "");
  EXPECT_EQ(store_calibration(file, "k1", {0.5, 0.125, 4.0}), "");
  {
    std::ofstream junk(file, std::ios::app);
    junk << "k2\tnot numbers\n"
         << "k2\t0.1 -1 2\n"
         << "no tab at all\n"
         << "k\t1 2 3\n";
  }
  const auto k1 = find_calibration(file, "k1");
  ASSERT_TRUE(k1.has_value());
  EXPECT_EQ(k1->eps, 0.5);
  EXPECT_EQ(k1->gpu_seconds, 0.125) << "the last line for a key wins";
  EXPECT_EQ(k1->cpu_seconds, 4.0);
  const auto k2 = find_calibration(file, "k2");
  ASSERT_TRUE(k2.has_value()) << "lines that do not parse are passed over";
  EXPECT_EQ(k2->gpu_seconds, 1e-6);
  EXPECT_FALSE(find_calibration(file, "k3").has_value());
  EXPECT_FALSE(find_calibration(file, "k1 ").has_value()) << "keys match whole";
  std::filesystem::remove_all(dir);
}

TEST(calibration_cache, an_unwritable_place_is_reported) {
  const auto dir = fresh_folder("unwritable");
  const auto blocker = dir / "file";
  std::ofstream(blocker) << "x";
  // A folder cannot be made under a plain file.
  const std::string why = store_calibration((blocker / "cal.txt").string(), "k", {1, 1, 1});
  EXPECT_NE(why, "");
  std::filesystem::remove_all(dir);
}

TEST(calibration_cache, the_folder_comes_from_the_environment) {
  const char* saved[3] = {std::getenv("EPSJOIN_CACHE_DIR"), std::getenv("XDG_CACHE_HOME"),
                          std::getenv("HOME")};
  const std::string keep[3] = {saved[0] ? saved[0] : "", saved[1] ? saved[1] : "",
                               saved[2] ? saved[2] : ""};
  setenv("EPSJOIN_CACHE_DIR", "/c", 1);
  setenv("XDG_CACHE_HOME", "/x", 1);
  setenv("HOME", "/h", 1);
  EXPECT_EQ(default_calibration_path(), "/c/hegjoin-calibration.txt");
  unsetenv("EPSJOIN_CACHE_DIR");
  EXPECT_EQ(default_calibration_path(), "/x/epsjoin/hegjoin-calibration.txt");
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(default_calibration_path(), "/h/.cache/epsjoin/hegjoin-calibration.txt");
  unsetenv("HOME");
  EXPECT_EQ(default_calibration_path(), "");
  const char* names[3] = {"EPSJOIN_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  for (int i = 0; i < 3; ++i) {
    if (saved[i] != nullptr) setenv(names[i], keep[i].c_str(), 1);
  }
}

}  // namespace
