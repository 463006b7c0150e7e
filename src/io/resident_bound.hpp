#pragma once
// Keeps a process that fills a file through a shared mapping within its memory limit.
//
// The pages an engine dirties in a mapped file count in the process's resident memory until the
// mapping goes away: a 5 GB table under a 1 GB limit once peaked at 6.4 GB. Rows are written in
// any order, so no part of the file is known to be finished before the end; instead a watcher
// looks at the process's resident memory every millisecond and, when it nears the limit, drops
// the mapping's pages. The page cache keeps their contents (a
// shared mapping loses nothing by MADV_DONTNEED); a row written later faults its page back in.
// The bound is as good as the watcher's turns: on cores the fill saturates it may look only
// every 10-20 ms, and what is written meanwhile goes over (measured: 0.99 GB under a 1 GB limit
// for a 2 GB file on 2 cores; the tests allow a quarter over).

#include <cstdint>
#include <stop_token>
#include <thread>

namespace epsjoin::detail {

class resident_bound {
 public:
  /// Watches while alive (std::jthread stops and joins the watcher as it goes); `limit` 0
  /// watches nothing. `data` and `bytes`: the mapping.
  resident_bound(char* data, std::uint64_t bytes, std::uint64_t limit);

 private:
  void watch(const std::stop_token& stop);
  void drop();

  char* data_;
  std::uint64_t bytes_;
  std::uint64_t trigger_ = 0;  ///< resident bytes at which the pages go
  std::jthread thread_;        // last: it stops before the members it reads go
};

}  // namespace epsjoin::detail
