#include "cluster_command.hpp"

#include "engine_args.hpp"
#include "epsjoin/io.hpp"

namespace epsjoin::cli {

cluster_command::cluster_command(const parsed_args& args, const char* radius_flag)
    : args_(args) {
  if (args.has("input") == args.has("generate")) {
    throw usage_error{"give exactly one of --input FILE and --generate SPEC"};
  }
  if (!args.has(radius_flag)) throw usage_error{std::string("missing --") + radius_flag + " X"};
  if (!args.has("min-samples")) throw usage_error{"missing --min-samples M"};
  min_samples_ = args.get_size("min-samples", 0);
  if (min_samples_ == 0) throw usage_error{"--min-samples must be at least 1"};
  output_ = args.get("output");
  if (args.has("output") && output_.empty()) throw usage_error{"--output needs a file name"};
  quiet_ = args.has("quiet");
  as_json_ = args.has("json");
  threads_ = read_threads(args);
  dim_ = read_input_dim(args);
  const output_target target = output_.empty() ? output_target{} : check_output_path(output_);
  summary_out_ = target.standard_output ? stderr : stdout;
}

resources cluster_command::make_resources() const {
  resources res(threads_);
  res.set_memory({args_.get_bytes("memory-limit", 0), args_.get_bytes("device-memory-limit", 0)});
  return res;
}

loaded_points cluster_command::load() const {
  return load_points(args_.get("input"), args_.get("generate"), dim_, args_.has("paper"));
}

void cluster_command::print_summary(const std::string& json, const std::string& human) const {
  if (as_json_) {
    std::fprintf(summary_out_, "%s\n", json.c_str());
  } else if (!quiet_) {
    std::fputs(human.c_str(), summary_out_);
  }
}

double cluster_command::seconds_since_start() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

}  // namespace epsjoin::cli
