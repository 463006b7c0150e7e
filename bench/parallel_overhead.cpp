// What a parallel_for costs beyond its work: the GPU's copy out places each 64 MiB chunk of the
// table with one parallel_for on every core, thousands of times for a table of gigabytes. Times
// the same chunked copy through parallel_for (the process's kept workers) and through threads
// started and joined for every chunk (what parallel_for did before), interleaved, and prints the
// time a chunk and the difference a call.
//
// usage: parallel_overhead [THREADS (default: all)] [CHUNK_MIB (default 64)] [CHUNKS (default 64)]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "base/parallel.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

template <class Place>
double seconds_for(std::size_t chunks, Place&& place) {
  const auto start = clock_type::now();
  for (std::size_t c = 0; c < chunks; ++c) place(c);
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

// The former parallel_for's thread handling: one std::thread a worker, every call.
template <class Body>
void spawned_for(unsigned threads, std::size_t n, Body&& body) {
  std::vector<std::thread> pool;
  for (unsigned w = 1; w < threads; ++w) pool.emplace_back([&, w] { body(w * n / threads, (w + 1) * n / threads); });
  body(0, n / threads);
  for (auto& t : pool) t.join();
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned threads = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1]))
                                    : std::max(1u, std::thread::hardware_concurrency());
  const std::size_t chunk = (argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 64) << 20;
  const std::size_t chunks = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 64;
  std::vector<char> from(chunk, 1), to(chunk, 0);  // touched once: only the copies are timed
  auto copy_part = [&](std::size_t b, std::size_t e) { std::memcpy(to.data() + b, from.data() + b, e - b); };
  double pooled = 0, spawned = 0;
  for (int round = 0; round < 5; ++round) {
    pooled += seconds_for(chunks, [&](std::size_t) {
      const std::size_t grain = (chunk + threads - 1) / threads;
      epsjoin::detail::parallel_for(threads, chunk, grain, [&](std::size_t b, std::size_t e, unsigned) {
        copy_part(b, e);
      });
    });
    spawned += seconds_for(chunks, [&](std::size_t) { spawned_for(threads, chunk, copy_part); });
  }
  const double calls = 5.0 * static_cast<double>(chunks);
  std::printf("threads %u, chunk %zu MiB, %zu chunks x 5 rounds\n", threads, chunk >> 20, chunks);
  std::printf("kept workers:    %.3f ms a chunk (%.1f GB/s)\n", 1e3 * pooled / calls,
              static_cast<double>(chunk) * calls / pooled * 1e-9);
  std::printf("threads started: %.3f ms a chunk (%.1f GB/s)\n", 1e3 * spawned / calls,
              static_cast<double>(chunk) * calls / spawned * 1e-9);
  std::printf("difference:      %.1f us a call\n", 1e6 * (spawned - pooled) / calls);
  return 0;
}
