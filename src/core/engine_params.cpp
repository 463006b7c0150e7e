// Reading typed engine parameters; see engine_params.hpp.

#include "core/engine_params.hpp"

#include <algorithm>

#include "base/expects.hpp"

namespace epsjoin::detail {

std::string_view kind_name(param_kind kind) {
  switch (kind) {
    case param_kind::tuning: return "tuning";
    case param_kind::ablation: return "ablation";
    case param_kind::debug: return "debug";
  }
  return "?";
}

void param_reader::declare(std::string_view key, param_kind kind, std::string_view description) {
  // A key read twice (a shared struct and its engine both reading it) is declared once.
  for (const param_spec& s : specs_) {
    if (s.key == key) return;
  }
  specs_.push_back({std::string(key), kind, std::string(description)});
}

const std::string* param_reader::text(std::string_view key, param_kind kind,
                                      std::string_view description) {
  declare(key, kind, description);
  const auto it = values_.find(std::string(key));
  return it == values_.end() ? nullptr : &it->second;
}

std::uint64_t param_reader::uint(std::string_view key, param_kind kind,
                                 std::string_view description, std::uint64_t fallback,
                                 std::uint64_t min, std::uint64_t max) {
  declare(key, kind, description);
  return param_uint(values_, std::string(key), fallback, min, max);
}

double param_reader::real(std::string_view key, param_kind kind, std::string_view description,
                          double fallback, double min, double max) {
  declare(key, kind, description);
  return param_real(values_, std::string(key), fallback, min, max);
}

std::string param_reader::choice(std::string_view key, param_kind kind,
                                 std::string_view description,
                                 std::initializer_list<std::string_view> choices,
                                 std::string_view fallback) {
  declare(key, kind, description);
  return param_choice(values_, std::string(key), choices, fallback);
}

bool param_reader::on_off(std::string_view key, param_kind kind, std::string_view description,
                          bool fallback) {
  return choice(key, kind, description, {"on", "off"}, fallback ? "on" : "off") == "on";
}

void param_reader::memory_override(std::string_view key) {
  // The descriptions live here, once, for every engine that honours the override.
  std::string_view description;
  if (key == "segment_ids") description = "ids per device segment of the row pipeline";
  else if (key == "chunk_ids") description = "ids per pinned chunk of the row pipeline";
  else if (key == "batch_pairs") description = "pairs per result batch of the pair pipeline";
  else if (key == "batches") description = "pair pipeline: plan this many batches of batch_pairs";
  else throw error(concat("internal: '", key, "' is not a memory budget override"));
  declare(key, param_kind::debug, description);
}

std::string unknown_param_message(std::string_view engine_name, std::string_view key,
                                  const std::vector<param_spec>& specs) {
  std::string known;
  for (param_kind kind : {param_kind::tuning, param_kind::ablation, param_kind::debug}) {
    std::string group;
    for (const param_spec& s : specs) {
      if (s.kind == kind) group += concat(group.empty() ? "" : ", ", s.key);
    }
    if (!group.empty()) known += concat(known.empty() ? "" : "; ", kind_name(kind), ": ", group);
  }
  return concat("engine '", engine_name, "' has no parameter '", key, "'",
                known.empty() ? std::string(" (it takes none)") : concat("; it takes: ", known));
}

}  // namespace epsjoin::detail
