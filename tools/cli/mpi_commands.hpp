#pragma once
// The command that exists only in a build with MPI (EPSJOIN_MPI, tools/cli/CMakeLists.txt).

#include "args.hpp"

namespace epsjoin::cli {

const command_spec& mpi_join_command();
int run_mpi_join(const parsed_args& args);

}  // namespace epsjoin::cli
