#pragma once
// A small declarative argument parser: each command lists its flags once, and the same list
// drives parsing, validation and --help.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace epsjoin::cli {

struct flag {
  std::string name;        // without the leading "--"
  std::string value_name;  // empty for a switch that takes no value
  std::string help;
  bool repeatable = false;
};

struct command_spec {
  std::string name;
  std::string usage;     // the line after "usage: epsjoin "
  std::string summary;   // one paragraph
  std::vector<flag> flags;
  std::string positional;  // name of the single positional argument, empty when none
};

class parsed_args {
 public:
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  /// The flag's last value, or `fallback` when absent.
  std::string get(const std::string& name, const std::string& fallback = "") const;
  std::vector<std::string> all(const std::string& name) const;
  const std::optional<std::string>& positional() const { return positional_; }

  /// Numeric conversions that name the flag in their error.
  double get_double(const std::string& name, double fallback) const;
  std::size_t get_size(const std::string& name, std::size_t fallback) const;
  /// A byte count: an integer with an optional binary suffix K, M, G or T (KiB, MiB, ...).
  std::uint64_t get_bytes(const std::string& name, std::uint64_t fallback) const;

 private:
  friend parsed_args parse(const command_spec&, const std::vector<std::string>&);
  std::map<std::string, std::vector<std::string>> values_;
  std::optional<std::string> positional_;
};

/// Thrown for a usage error; main prints it with a pointer to --help.
struct usage_error {
  std::string message;
};

parsed_args parse(const command_spec& spec, const std::vector<std::string>& args);
std::string help_text(const command_spec& spec);

}  // namespace epsjoin::cli
