// split_join's report: what each side did, in the join's stats.

#include "hetero/split_join.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "base/expects.hpp"
#include "base/parallel.hpp"
#include "hetero/partition.hpp"

namespace epsjoin::detail::hetero {

template <class T>
void split_join<T>::report(join_stats& stats) const {
  const side_totals c = cpu();
  const double all_queries = static_cast<double>(gpu_.queries + c.queries);
  const double all_candidates = static_cast<double>(gpu_.candidates + c.candidates);
  auto share = [](double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; };
  auto rate = [](std::uint64_t candidates, double seconds) {
    return seconds > 0 ? static_cast<double>(candidates) / seconds : 0.0;
  };
  // A CPU side that never started (the GPU emptied the deque before its copies were ready) had
  // nothing to finish: it counts as done when the GPU was.
  const double cpu_end = started_ ? c.seconds : gpu_.seconds;
  const double total = std::max(gpu_.seconds, cpu_end);
  const double imbalance = total > 0 ? std::abs(gpu_.seconds - cpu_end) / total : 0.0;
  stats.notes.push_back({"partition", s_.summary});
  stats.notes.push_back(
      {"gpu share", concat(gpu_.queries, " queries (", share(gpu_.queries, all_queries), "%), ",
                           gpu_.candidates, " candidates (", share(gpu_.candidates, all_candidates),
                           "%), ", gpu_.batches, " batches, done at ", gpu_.seconds, " s")});
  stats.notes.push_back(
      {"cpu share",
       concat(c.queries, " queries (", share(c.queries, all_queries), "%), ", c.candidates,
              " candidates (", share(c.candidates, all_candidates), "%), ", s_.cpu_threads,
              " threads, chunks of ", chunk_items_, " items, ",
              started_ ? concat("done at ", c.seconds, " s")
                       : std::string("not started (the GPU emptied the deque first)"),
              yielded_ > 0 ? concat("; ", yielded_.load(), " workers left the rest to the GPU, "
                                    "which would finish it before their next chunk")
                           : std::string())});
  if (s_.cpu_engine == cpu_engine_kind::super_ego) {
    std::uint64_t distances = 0;
    for (const cpu_rows& r : rows_) distances += r.distances;
    stats.notes.push_back(
        {"cpu engine", ego_ ? concat(ego_->describe(), ", ", distances, " distances computed")
                            : std::string("super-ego (index not built: the GPU took everything)")});
  } else {
    stats.notes.push_back({"cpu engine", "grid (a host copy of the GPU's index)"});
  }
  stats.notes.push_back({"gpu seconds", concat(gpu_.seconds)});
  stats.notes.push_back({"cpu seconds", concat(cpu_end)});
  stats.notes.push_back({"gpu candidates", concat(gpu_.candidates)});
  stats.notes.push_back({"cpu candidates", concat(c.candidates)});
  stats.notes.push_back({"load imbalance", concat(imbalance)});
  stats.notes.push_back(
      {"candidate throughput", concat("GPU ", rate(gpu_.candidates, gpu_.seconds), "/s, CPU ",
                                      rate(c.candidates, c.seconds), "/s, both ",
                                      rate(gpu_.candidates + c.candidates, total), "/s")});
}

template void split_join<float>::report(join_stats& stats) const;
template void split_join<double>::report(join_stats& stats) const;

}  // namespace epsjoin::detail::hetero
