#pragma once
// The threads behind parallel_for. A join calls parallel_for thousands of times (the GPU's copy
// out places every 64 MiB chunk on every core), and starting and joining 16 threads each time
// cost 0.3-0.4 ms a call: a third of a 64 MiB chunk's copy, three times an 8 MiB one's
// (bench/parallel_overhead on a 16-core machine). The process keeps its workers instead: a call
// hands them its task and runs its own share on the calling thread.

#include <functional>

namespace epsjoin::detail {

/// Runs task(w) for every w in [1, workers) on the process's worker threads while the calling
/// thread runs task(0), and returns once every task that started has returned. A task that no
/// worker has started by the time task(0) returns is dropped, so `task` must be one whose calls
/// share the work out among themselves (parallel_for's chunks from a shared counter) and must
/// not throw. A call made from a worker (a parallel_for inside a parallel_for) gets threads of
/// its own, so nesting never waits on the workers it is running on.
void run_on_workers(unsigned workers, const std::function<void(unsigned)>& task);

}  // namespace epsjoin::detail
