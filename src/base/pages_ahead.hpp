#pragma once
// Fresh memory faulted in on a thread of its own, ahead of the threads that write it.
//
// The first touch of fresh memory costs the kernel more than the write: on the 2-core machine a
// process's first 400 MB in huge pages took 0.22-0.55 s to fault in (free memory assembled into
// 2 MiB pages), its later ones 0.05 s; in ordinary pages 0.25 s every time. A join that writes
// its result in order (pairs claimed run after run) pays that on its own threads, which made a
// process's first epsjoin.pairs call 1.6-3.3x its later ones (bench/RESULTS.md). This thread
// asks the kernel for the pages a little ahead of the writers (MADV_POPULATE_WRITE, Linux 5.14;
// elsewhere it does nothing), so the cost moves off the join's threads. Populating never changes
// a byte of a page already written, so it may race the writers freely.

#include <cstddef>
#include <functional>
#include <stop_token>
#include <thread>

namespace epsjoin::detail {

class pages_ahead {
 public:
  /// Populates [data, data + bytes) in order, never more than `window` bytes past `written()`
  /// (how far the writers have claimed, in bytes from `data`; read every 0.2 ms while caught up).
  pages_ahead(char* data, std::size_t bytes, std::size_t window,
              std::function<std::size_t()> written);

  /// Stops and joins the thread, as going does (std::jthread's destructor); before the memory
  /// is unmapped.
  void stop() noexcept {
    thread_.request_stop();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run(const std::stop_token& stop);

  char* data_;
  std::size_t bytes_;
  std::size_t window_;
  std::function<std::size_t()> written_;
  std::jthread thread_;  // last: it stops before the members it reads go
};

}  // namespace epsjoin::detail
