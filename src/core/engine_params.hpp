#pragma once
// Typed engine parameters. The public API takes parameters as strings (join_options::params),
// so the CLI and the Python package pass what users type; dispatch parses them once, before
// any work, into the engine's own struct, and engines read only that struct.
//
// An engine declares each key once, where it reads it, through a param_reader: the same code
// lists the keys (read over an empty map), rejects unknown ones and parses the values, so the
// list, the check and the parse cannot drift apart.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "base/params.hpp"

namespace epsjoin::detail {

/// What a key is for, so users can tell what to tune from what reproduces a paper.
enum class param_kind {
  tuning,    ///< what users tune for speed on their data
  ablation,  ///< switches that reproduce the papers' variants (off the fastest path)
  debug,     ///< test-only sizes: the memory budget's overrides (base/memory_budget.hpp)
};

std::string_view kind_name(param_kind kind);

struct param_spec {
  std::string key;
  param_kind kind = param_kind::tuning;
  std::string description;  ///< one line
};

/// An engine's parsed parameters; each engine derives its own.
struct engine_params {
  virtual ~engine_params() = default;
};

/// Reads one engine's parameters from the strings, declaring each key as it reads it. The
/// readers throw invalid_argument naming the key and the accepted values.
class param_reader {
 public:
  explicit param_reader(const param_map& values) : values_(values) {}

  /// Declares `key`; its text, or nullptr when absent (for engines with messages of their own).
  const std::string* text(std::string_view key, param_kind kind, std::string_view description);
  std::uint64_t uint(std::string_view key, param_kind kind, std::string_view description,
                     std::uint64_t fallback, std::uint64_t min = 0,
                     std::uint64_t max = UINT64_MAX);
  double real(std::string_view key, param_kind kind, std::string_view description,
              double fallback, double min, double max);
  std::string choice(std::string_view key, param_kind kind, std::string_view description,
                     std::initializer_list<std::string_view> choices, std::string_view fallback);
  /// on|off, as `choice` reads it.
  bool on_off(std::string_view key, param_kind kind, std::string_view description,
              bool fallback);
  /// Declares one of the memory budget's overrides (segment_ids, chunk_ids, batch_pairs,
  /// batches): dispatch reads its value (read_memory_overrides), the engine only accepts it.
  void memory_override(std::string_view key);

  bool has(std::string_view key) const { return values_.contains(std::string(key)); }
  /// Every value given, declared or not (for an engine that keys a cache by all of them).
  const param_map& values() const { return values_; }
  const std::vector<param_spec>& specs() const { return specs_; }

 private:
  void declare(std::string_view key, param_kind kind, std::string_view description);

  const param_map& values_;
  std::vector<param_spec> specs_;
};

/// "engine 'NAME' has no parameter 'KEY'; it takes: tuning: a, b; ablation: c; debug: d", or
/// "(it takes none)": the error for a key the engine did not declare.
std::string unknown_param_message(std::string_view engine_name, std::string_view key,
                                  const std::vector<param_spec>& specs);

}  // namespace epsjoin::detail
