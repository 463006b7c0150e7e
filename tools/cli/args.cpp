#include "args.hpp"

#include <charconv>
#include <string_view>
#include <cmath>
#include <sstream>

namespace epsjoin::cli {

std::string parsed_args::get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() || it->second.empty() ? fallback : it->second.back();
}

std::vector<std::string> parsed_args::all(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

double parsed_args::get_double(const std::string& name, double fallback) const {
  if (!has(name)) return fallback;
  const std::string text = get(name);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw usage_error{"--" + name + " expects a number, got '" + text + "'"};
  }
  return value;
}

std::size_t parsed_args::get_size(const std::string& name, std::size_t fallback) const {
  if (!has(name)) return fallback;
  const std::string text = get(name);
  std::size_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw usage_error{"--" + name + " expects a non-negative integer, got '" + text + "'"};
  }
  return value;
}

std::uint64_t parsed_args::get_bytes(const std::string& name, std::uint64_t fallback) const {
  if (!has(name)) return fallback;
  const std::string text = get(name);
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  const std::string_view suffix(end, static_cast<std::size_t>(text.data() + text.size() - end));
  int shift = -1;
  if (suffix.empty()) shift = 0;
  if (suffix == "K" || suffix == "k") shift = 10;
  if (suffix == "M" || suffix == "m") shift = 20;
  if (suffix == "G" || suffix == "g") shift = 30;
  if (suffix == "T" || suffix == "t") shift = 40;
  if (ec != std::errc() || shift < 0 || value == 0 || value > (UINT64_MAX >> shift)) {
    throw usage_error{"--" + name + " expects a positive byte count such as 2G, 512M or " +
                      "1000000, got '" + text + "'"};
  }
  return value << shift;
}

parsed_args parse(const command_spec& spec, const std::vector<std::string>& args) {
  parsed_args out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.rfind("--", 0) != 0 || arg == "--") {
      if (spec.positional.empty() || out.positional_) {
        throw usage_error{"unexpected argument '" + arg + "'"};
      }
      out.positional_ = arg;
      continue;
    }
    std::string name = arg.substr(2);
    std::optional<std::string> inline_value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name.resize(eq);
    }
    const flag* f = nullptr;
    for (const flag& candidate : spec.flags) {
      if (candidate.name == name) f = &candidate;
    }
    if (f == nullptr) throw usage_error{"unknown option '--" + name + "' for '" + spec.name + "'"};
    std::string value;
    if (f->value_name.empty()) {
      if (inline_value) throw usage_error{"--" + name + " takes no value"};
    } else if (inline_value) {
      value = *inline_value;
    } else {
      if (i + 1 >= args.size()) throw usage_error{"--" + name + " needs a value (" + f->value_name + ")"};
      value = args[++i];
    }
    auto& slot = out.values_[name];
    if (!slot.empty() && !f->repeatable) {
      throw usage_error{"--" + name + " given more than once"};
    }
    slot.push_back(value);
  }
  return out;
}

std::string help_text(const command_spec& spec) {
  std::ostringstream out;
  out << "usage: epsjoin " << spec.usage << "\n\n" << spec.summary << "\n";
  if (!spec.flags.empty()) out << "\noptions:\n";  // a command without options ends here
  for (const flag& f : spec.flags) {
    std::string left = "  --" + f.name + (f.value_name.empty() ? "" : " " + f.value_name);
    if (left.size() < 26) {
      left.resize(26, ' ');
    } else {
      left += "\n" + std::string(26, ' ');
    }
    out << left;
    // Wrap the help text at 100 columns, continuing under the help column.
    std::istringstream words(f.help);
    std::string word;
    std::size_t column = 26;
    bool first = true;
    while (words >> word) {
      if (!first && column + 1 + word.size() > 100) {
        out << "\n" << std::string(26, ' ');
        column = 26;
        first = true;
      }
      out << (first ? "" : " ") << word;
      column += word.size() + (first ? 0 : 1);
      first = false;
    }
    out << (f.repeatable ? " (repeatable)" : "") << "\n";
  }
  return out.str();
}

}  // namespace epsjoin::cli
