#pragma once
// Files being written under a temporary name beside their target. Every writer registers its
// temporary file here for as long as it is unfinished, so that a signal handler can remove them
// all (remove_unfinished_outputs, public in epsjoin/io.hpp) before the process dies: an
// interrupted run never leaves a file that looks complete, nor a stray temporary one.

#include <string>

namespace epsjoin::detail {

/// The temporary name beside `path` that a writer fills before renaming it to `path`.
std::string unfinished_name(const std::string& path);

/// A registration; the destructor deregisters (it does not remove the file).
class unfinished_output {
 public:
  explicit unfinished_output(const std::string& temporary_path);
  ~unfinished_output();
  unfinished_output(const unfinished_output&) = delete;
  unfinished_output& operator=(const unfinished_output&) = delete;

 private:
  int slot_ = -1;
};

}  // namespace epsjoin::detail
