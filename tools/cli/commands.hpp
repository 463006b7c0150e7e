#pragma once

#include <string>
#include <vector>

#include "args.hpp"

namespace epsjoin::cli {

const command_spec& join_command();
const command_spec& gen_command();
const command_spec& info_command();
const command_spec& dbscan_command();
const command_spec& optics_command();

int run_join(const parsed_args& args);
int run_gen(const parsed_args& args);
int run_info(const parsed_args& args);
int run_dbscan(const parsed_args& args);
int run_optics(const parsed_args& args);

}  // namespace epsjoin::cli
