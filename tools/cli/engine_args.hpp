#pragma once
// The engine flags the commands that run joins share (--engine, --param, --pattern,
// --precision): checked before any data is read, so a typo costs nothing.

#include <map>
#include <string>
#include <vector>

#include "args.hpp"
#include "epsjoin/dataset.hpp"
#include "epsjoin/options.hpp"
#include "epsjoin/resources.hpp"

namespace epsjoin::cli {

/// --engine (default auto), checked against the registered engines.
std::string read_engine(const parsed_args& args);
/// Every --param KEY=VALUE, and --pattern P as pattern=P.
std::map<std::string, std::string> read_engine_params(const parsed_args& args);
/// --threads (default 0: every hardware thread); more than 64 per hardware thread (or 4096) is a
/// typo, not a tuning choice, and would exhaust the process's threads: a usage error.
unsigned read_threads(const parsed_args& args);
/// What --devices asks for: the CUDA devices a GPU join may spread over (empty: device 0 alone)
/// and whether each join decides for itself (resources::devices_automatic).
struct device_choice {
  std::vector<int> devices;
  bool automatic = false;
};
/// --devices auto|all|I,J,...: 'auto' (the default) every visible device, each join deciding
/// whether to spread; 'all' every visible device, always; a list, those. 'all' with no device
/// visible, a repeated or malformed ordinal: usage errors.
device_choice read_devices(const parsed_args& args);
/// The --format a join writes to `output` when none is given: count without a file, pairs for
/// .npy, csv for .csv and .txt, csr for .csr and any other name, extensions in any case
/// ('epsjoin join' and 'epsjoin mpi-join' alike).
std::string default_output_format(const std::string& output);
/// Reads --format (default_output_format when absent) and refuses one that is unknown or that
/// contradicts the extension of `output`: a .csr holds a table, a .npy pairs or counts, a .csv or
/// .txt pairs or counts as text; other names take any format.
std::string read_output_format(const parsed_args& args, const std::string& output);
/// --devices-split: auto (the default), items or slabs.
device_split read_device_split(const parsed_args& args);
/// What 'join' and 'mpi-join' both read first, before any data: exactly one of --input and
/// --generate, at most one of --queries and --generate-queries, --eps (required, finite, > 0),
/// --engine, --param, --precision and --include-self, all as usage errors.
join_options read_join_options(const parsed_args& args);
/// --precision f64 (default) or f32.
scalar_type read_precision(const parsed_args& args);
/// The value of --NAME (eps, max-eps, ...): a finite number > 0, else a usage error.
double read_radius(const parsed_args& args, const std::string& name);
/// --metric: euclidean (the default), manhattan, chebyshev, cosine or haversine.
distance_metric read_metric(const parsed_args& args);
/// --metric, --box, --radius-of-sphere and --angles into `options` (docs/metrics.md): names and
/// numbers checked here, their fit with the data by the join.
void read_geometry(const parsed_args& args, join_options& options);

}  // namespace epsjoin::cli
