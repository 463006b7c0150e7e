#include <cstdio>
#include <string>
#include <thread>

#include "commands.hpp"
#include "epsjoin/build_info.hpp"
#include "epsjoin/join.hpp"

namespace epsjoin::cli {

const command_spec& info_command() {
  static const command_spec spec{
      "info",
      "info",
      "Prints how this epsjoin was built, the CPU threads and CUDA devices it sees, and every\n"
      "engine with whether it can run here and the parameters it takes (--param KEY=VALUE),\n"
      "grouped by kind: tuning (what to tune), ablation (the papers' variants), debug (tests).",
      {},
      ""};
  return spec;
}

int run_info(const parsed_args&) {
  const build_info b = build();
  std::printf("epsjoin %s (%s build, %s)\n", b.version.c_str(), b.build_type.c_str(),
              b.compiler.c_str());
  std::printf("CUDA:        %s\n",
              b.cuda ? ("compiled in, architectures " + b.cuda_architectures).c_str()
                     : "not compiled in (GPU engines unavailable)");
  std::printf("CPU threads: %u\n", std::thread::hardware_concurrency());
  const auto devices = cuda_devices();
  if (devices.empty()) std::printf("CUDA devices: none (the CPU engines below still run)\n");
  for (const cuda_device& d : devices) {
    std::printf("CUDA device %d: %s, sm_%d%d, %.1f GiB, %d SMs\n", d.ordinal, d.name.c_str(),
                d.compute_major, d.compute_minor,
                static_cast<double>(d.memory_bytes) / (1024.0 * 1024 * 1024), d.multiprocessors);
  }
  std::printf("engines:\n");
  for (const engine_info& e : engines()) {
    std::printf("  %-12s %-7s %s%s\n", e.name.c_str(), e.processor.c_str(), e.description.c_str(),
                e.available ? "" : ("  [unavailable: " + e.unavailable_reason + "]").c_str());
  }
  std::printf("  %-12s %-7s %s\n", "auto", "-", "picks the fastest available engine for the input");
  std::printf("engine metrics (--metric; cosine and haversine through unit vectors, L1 and L-inf through a Euclidean ball, re-checked):\n");
  for (const engine_info& e : engines()) {
    std::string names;
    for (distance_metric m : e.metrics) names += (names.empty() ? "" : ", ") + std::string(to_string(m));
    std::printf("  %-12s %s%s\n", e.name.c_str(), names.c_str(), e.periodic ? "; periodic --box" : "");
  }
  std::printf("engine parameters (--param KEY=VALUE):\n");
  for (const engine_info& e : engines()) {
    if (e.params.empty()) continue;
    std::printf("  %s\n", e.name.c_str());
    for (const char* kind : {"tuning", "ablation", "debug"}) {
      for (const engine_param_info& p : e.params) {
        if (p.kind != kind) continue;
        std::printf("    %-18s %-8s %s\n", p.key.c_str(), kind, p.description.c_str());
      }
    }
  }
  return 0;
}

}  // namespace epsjoin::cli
