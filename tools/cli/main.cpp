// The epsjoin program: argument parsing and I/O around the public API, nothing more.

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "commands.hpp"
#include "epsjoin/build_info.hpp"
#include "epsjoin/error.hpp"
#include "epsjoin/io.hpp"
#include "epsjoin/join.hpp"
#ifdef EPSJOIN_WITH_MPI
#include "mpi_commands.hpp"
#endif

namespace {

using namespace epsjoin::cli;

struct command_entry {
  const command_spec& (*spec)();
  int (*run)(const parsed_args&);
};

const command_entry commands[] = {
    {join_command, run_join},
    {dbscan_command, run_dbscan},
    {optics_command, run_optics},
    {gen_command, run_gen},
    {info_command, run_info},
#ifdef EPSJOIN_WITH_MPI
    {mpi_join_command, run_mpi_join},
#endif
};

// What a user whose engine cannot run here may ask for instead.
std::string runnable_engines() {
  std::string names = "auto";
  for (const epsjoin::engine_info& e : epsjoin::engines()) {
    if (e.available) names += ", " + e.name;
  }
  return names;
}

// False in a process that an MPI launcher started as a rank other than 0 (Open MPI, PMIx and
// MPICH-style launchers each say so in the environment); true outside a launcher.
bool launcher_rank_zero() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    if (const char* rank = std::getenv(name); rank != nullptr) return std::strcmp(rank, "0") == 0;
  }
  return true;
}

void print_overview() {
  std::printf(
      "usage: epsjoin <command> [options]\n\n"
      "Finds every pair of points within Euclidean distance eps (the distance similarity join)\n"
      "on CPUs and NVIDIA GPUs.\n\ncommands:\n");
  for (const auto& c : commands) {
    std::printf("  %-8s %s\n", c.spec().name.c_str(), c.spec().usage.c_str());
  }
  std::printf(
      "\n'epsjoin <command> --help' documents every option of a command.\n"
      "example: epsjoin join --generate expo:2:2000000 --eps 0.0002 --engine auto\n");
}

/// SIGINT and SIGTERM: remove the result files still being written, say so, then die of the
/// signal (so the exit status is the shell's 128 + N). Only async-signal-safe calls.
extern "C" void on_stop_signal(int signal) {
  epsjoin::remove_unfinished_outputs();
  const char* message = signal == SIGINT ? "epsjoin: interrupted (SIGINT); no result file was left\n"
                                         : "epsjoin: terminated (SIGTERM); no result file was left\n";
  (void)!::write(STDERR_FILENO, message, std::strlen(message));
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    if (args.size() >= 2) args = {args[1], "--help"};
    else {
      print_overview();
      return args.empty() ? 2 : 0;
    }
  }
  if (args[0] == "--version") {
    std::printf("epsjoin %s\n", epsjoin::build().version.c_str());
    return 0;
  }
  for (const auto& c : commands) {
    const command_spec& spec = c.spec();
    if (spec.name != args[0]) continue;
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    for (const std::string& a : rest) {
      if (a == "--help" || a == "-h") {
        std::fputs(help_text(spec).c_str(), stdout);
        return 0;
      }
    }
    // mpi-join's ranks all check the command line before MPI starts: one of them says what is
    // wrong, as for the errors found later.
    const bool quiet = spec.name == "mpi-join" && !launcher_rank_zero();
    try {
      return c.run(parse(spec, rest));
    } catch (const usage_error& e) {
      if (!quiet) {
        std::fprintf(stderr, "epsjoin %s: %s (see 'epsjoin %s --help')\n", spec.name.c_str(),
                     e.message.c_str(), spec.name.c_str());
      }
      return 2;
    } catch (const epsjoin::invalid_argument& e) {
      // The library's word for a bad value the caller gave: here, always a command-line value
      // (an --param key or value, a precision the engine lacks, ...), so a usage error.
      if (!quiet) {
        std::fprintf(stderr, "epsjoin %s: %s (see 'epsjoin %s --help')\n", spec.name.c_str(),
                     e.what(), spec.name.c_str());
      }
      return 2;
    } catch (const epsjoin::unavailable& e) {
      if (!quiet) {
        std::fprintf(stderr, "epsjoin %s: error: %s; engines that can run here: %s\n",
                     spec.name.c_str(), e.what(), runnable_engines().c_str());
      }
      return 1;
    } catch (const std::exception& e) {
      if (!quiet) std::fprintf(stderr, "epsjoin %s: error: %s\n", spec.name.c_str(), e.what());
      return 1;
    }
  }
#ifndef EPSJOIN_WITH_MPI
  if (args[0] == "mpi-join") {
    std::fprintf(stderr,
                 "epsjoin: this build has no MPI, so no mpi-join (install Open MPI, e.g. "
                 "scripts/setup.sh, and configure with -DEPSJOIN_MPI=AUTO or ON)\n");
    return 1;
  }
#endif
  std::fprintf(stderr, "epsjoin: unknown command '%s' (see 'epsjoin --help')\n", args[0].c_str());
  return 2;
}
