// Issue 44 parts 2 and 3: one CSR file written by a self-join spread over a list of devices that
// may repeat an ordinal (two shards sharing one GPU run every path of the split on a one-GPU
// machine; the CLI refuses a repeated ordinal). Public API only. Prints one JSON line: the
// join's seconds (the file's writes and its rename included), pairs, the file's bytes, the
// split and the process's peak RSS; bench/file_on_devices.py runs it once a process.
//
// usage: file_shards SPEC EPS DEVICES PATH [ENGINE]
//   e.g. file_shards uniform:2:50M 0.000564 0,0 /tmp/t.csr lbjoin

#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "epsjoin/epsjoin.hpp"

namespace {

std::vector<int> parse_devices(const std::string& text) {
  std::vector<int> devices;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) devices.push_back(std::stoi(item));
  return devices;
}

std::string note(const epsjoin::join_stats& stats, const std::string& name) {
  for (const auto& [key, value] : stats.notes) {
    if (key != name) continue;
    std::string quoted;
    for (const char c : value) {
      if (c == '"' || c == '\\') quoted += '\\';
      quoted += c;
    }
    return quoted;
  }
  return "one device";
}

std::string stages(const epsjoin::join_stats& stats) {
  std::string text;
  for (const auto& stage : stats.stages) {
    text += (text.empty() ? "\"" : ", \"") + stage.name + "\": " + std::to_string(stage.seconds);
  }
  return "{" + text + "}";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: file_shards SPEC EPS DEVICES PATH [ENGINE]\n");
    return 2;
  }
  try {
    const epsjoin::dataset points = epsjoin::generate(epsjoin::parse_generator_spec(argv[1]));
    epsjoin::resources res;
    res.set_devices(parse_devices(argv[3]));
    epsjoin::join_options options;
    options.eps = std::stod(argv[2]);
    options.engine = argc > 5 ? argv[5] : "lbjoin";
    const std::string path = argv[4];
    epsjoin::join_stats stats;
    {
      epsjoin::csr_file_sink file(path);
      stats = epsjoin::self_join(res, points.view(), options, file);
    }
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::printf(
        "{\"seconds\": %.6f, \"pairs\": %llu, \"bytes\": %llu, \"split\": \"%s\", "
        "\"peak_rss\": %llu, \"stages\": %s, \"work\": \"%s\"}\n",
        stats.seconds, static_cast<unsigned long long>(stats.pairs),
        static_cast<unsigned long long>(std::filesystem::file_size(path)),
        note(stats, "devices_split").c_str(),
        static_cast<unsigned long long>(usage.ru_maxrss) * 1024ULL, stages(stats).c_str(),
        note(stats, "devices_work").c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "file_shards: %s\n", e.what());
    return 1;
  }
}
