#pragma once
// Every file a test writes lives in that test's own temporary folder, so a test run leaves
// nothing behind and never meets another run's files (scripts/run-tests.sh checks it: it runs
// the tests with TMPDIR set to an empty folder and fails if anything is left in it).

#include <filesystem>
#include <string>
#include <string_view>

namespace epsjoin::test {

/// The running test's own folder, empty when first asked for: made with mkdtemp under $TMPDIR
/// (std::filesystem::temp_directory_path, so /tmp when TMPDIR is unset) on the first call in a
/// test, and removed with everything in it when the test ends, passed or failed (the listener
/// that install_temp_dir_cleanup() adds), or when the program exits. Only a crash leaves it.
std::filesystem::path temp_dir();

/// A path in temp_dir() ending in `name`.
std::string temp_path(std::string_view name);

/// A new empty folder `prefix` + six random characters under $TMPDIR, made with mkdtemp; the
/// caller removes it. Throws std::system_error when it cannot be made.
std::filesystem::path make_temp_dir(std::string_view prefix);

/// Adds the listener that removes each test's temp_dir() when the test ends; main() calls it
/// after InitGoogleTest.
void install_temp_dir_cleanup();

}  // namespace epsjoin::test
