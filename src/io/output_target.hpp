#pragma once
// What an output path names, decided once before any work, and how a writer opens it.
//
// A result must never damage what its path already is. A regular file (or a new name) is
// written under a temporary name beside it and renamed over it, so it appears only complete.
// Anything else is written in place, in order, with no temporary file: renaming a file over
// /dev/null, a FIFO or a socket would replace the node with a file. A symlink is followed, so
// the file it points at is the one replaced and the link survives.

#include <string>

#include "epsjoin/io.hpp"

namespace epsjoin::detail {

/// Classifies `path` (see output_kind) with stat calls only. Throws io_error, naming the
/// reason, for what no result may be written to: a directory, a block device, a chain of links
/// too deep. What writers call: they create the temporary file next, which is the probe.
output_target classify_output(const std::string& path);

/// classify_output, and for a file target the proof that its folder takes the temporary file
/// (created and removed): check_output_path, run before any work.
output_target resolve_output(const std::string& path);

/// Opens a stream target for writing in place: standard output is duplicated, a device or FIFO
/// is opened without truncation or creation, a Unix socket is connected. Returns a descriptor
/// the caller closes; throws io_error naming `target.path`.
int open_stream(const output_target& target);

/// Creates (truncating) the temporary file of a file target, with the permissions of the file
/// it will replace; `access` is O_WRONLY or O_RDWR. Returns a descriptor the caller closes.
int open_temporary(const output_target& target, const std::string& temporary, int access);

}  // namespace epsjoin::detail
