#pragma once
// hegjoin's calibrations kept on disk, so the static partitions measure the two sides once per
// machine, data set, radius and configuration rather than once per process. A plain text file,
// one calibration a line: "KEY<tab>REF_EPS GPU_SECONDS CPU_SECONDS"; the last line for a key
// wins, lines that do not parse are passed over (a calibration is an estimate: a lost one costs a
// new measurement, never a wrong result).

#include <cstdint>
#include <optional>
#include <string>

#include "epsjoin/dataset.hpp"
#include "hetero/partition.hpp"

namespace epsjoin::detail::hetero {

/// A fingerprint of a point set: its shape, element type and a hash of up to 4096 evenly spaced
/// rows (so a 2 GB set costs microseconds, and a changed file almost surely a new key).
std::uint64_t data_fingerprint(const dataset_view& points);

/// What a calibration depends on, as one line of text without tabs or newlines.
std::string calibration_key(const dataset_view& queries, const dataset_view& data, bool self_join,
                            double reference_eps, scalar_type precision,
                            const std::string& configuration, const std::string& machine);

/// $EPSJOIN_CACHE_DIR, else $XDG_CACHE_HOME/epsjoin, else $HOME/.cache/epsjoin, with
/// "/hegjoin-calibration.txt"; empty when none of them is set.
std::string default_calibration_path();

/// The calibration stored for `key` in the file at `path`, if any.
std::optional<reference_times> find_calibration(const std::string& path, const std::string& key);

/// Appends the calibration for `key` to the file at `path`, creating it and its folder; returns
/// why it could not, or an empty string.
std::string store_calibration(const std::string& path, const std::string& key,
                              const reference_times& times);

}  // namespace epsjoin::detail::hetero
