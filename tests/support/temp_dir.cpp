#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <system_error>

namespace epsjoin::test {
namespace {

// The folder of the test running now. One object, so that its destructor (at exit, for a folder
// asked for outside any test) never outlives the path it removes.
struct current_folder {
  std::filesystem::path dir;
  pid_t owner = 0;  // a child that exits (fork, death tests) must not remove its parent's folder

  void remove() noexcept {
    if (!dir.empty() && owner == ::getpid()) {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
    dir.clear();
  }
  ~current_folder() { remove(); }
};

current_folder& current() {
  static current_folder folder;
  return folder;
}

// The test's name in the folder's, so that a folder left by a crash says whose it was.
std::string folder_prefix() {
  std::string name = "epsjoin-test";
  if (const auto* info = testing::UnitTest::GetInstance()->current_test_info()) {
    name += std::string("-") + info->test_suite_name() + "." + info->name();
  }
  for (char& c : name) {
    if (c == '/') c = '_';  // parameterised tests: Suite/name/3
  }
  if (name.size() > 120) name.resize(120);  // far below NAME_MAX with the suffix
  return name + "-";
}

class remove_after_each_test final : public testing::EmptyTestEventListener {
  void OnTestEnd(const testing::TestInfo&) override { current().remove(); }
};

}  // namespace

std::filesystem::path make_temp_dir(std::string_view prefix) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / (std::string(prefix) + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
  }
  return pattern;
}

std::filesystem::path temp_dir() {
  current_folder& folder = current();
  if (folder.dir.empty()) {
    folder.dir = make_temp_dir(folder_prefix());
    folder.owner = ::getpid();
  }
  return folder.dir;
}

std::string temp_path(std::string_view name) { return (temp_dir() / name).string(); }

void install_temp_dir_cleanup() {
  // gtest owns the listener once appended.
  testing::UnitTest::GetInstance()->listeners().Append(new remove_after_each_test);
}

}  // namespace epsjoin::test
