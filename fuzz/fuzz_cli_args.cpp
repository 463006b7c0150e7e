// The program's argument parser (tools/cli/args.hpp) with the real commands' flags. The input is
// the command line with arguments separated by NUL bytes, the command's name first (join, gen,
// info). Any arguments parse or throw usage_error; so does every typed read of a parsed flag.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "args.hpp"
#include "check.hpp"
#include "commands.hpp"
#include "input.hpp"

namespace {

std::vector<std::string> split_at_nul(std::string_view text) {
  std::vector<std::string> parts;
  for (;;) {
    const std::size_t at = text.find('\0');
    parts.emplace_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

const epsjoin::cli::command_spec* command_named(const std::string& name) {
  using namespace epsjoin::cli;
  for (const command_spec* spec : {&join_command(), &gen_command(), &info_command()}) {
    if (spec->name == name) return spec;
  }
  return nullptr;
}

// Each typed read on its own: one flag's usage error must not hide another's crash.
template <class Read>
void try_read(Read&& read) {
  try {
    read();
  } catch (const epsjoin::cli::usage_error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace epsjoin::cli;
  std::vector<std::string> args = split_at_nul(epsjoin::fuzz::as_text(data, size));
  const command_spec* spec = command_named(args.front());
  if (spec == nullptr) return 0;
  args.erase(args.begin());
  parsed_args parsed;
  try {
    parsed = parse(*spec, args);
  } catch (const usage_error&) {
    return 0;
  }
  for (const flag& f : spec->flags) {
    if (!parsed.has(f.name)) continue;
    (void)parsed.all(f.name);
    try_read([&] { (void)parsed.get_double(f.name, 0); });
    try_read([&] { (void)parsed.get_size(f.name, 0); });
    try_read([&] { (void)parsed.get_bytes(f.name, 0); });
    try_read([&] { (void)parse_data_format(parsed.get(f.name)); });
  }
  return 0;
}
