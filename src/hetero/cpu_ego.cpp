#include "hetero/cpu_ego.hpp"

#include <type_traits>
#include <vector>

#include "cpu/super_ego/ego_chunks.hpp"

namespace epsjoin::detail::hetero {

namespace {

template <class T>
constexpr scalar_type scalar_of() {
  return std::is_same_v<T, float> ? scalar_type::f32 : scalar_type::f64;
}

}  // namespace

template <class T>
struct ego_side<T>::index {
  std::unique_ptr<ego::chunk_index<T>> chunks;
};

template <class T>
std::unique_ptr<ego_side<T>> ego_side<T>::build(const host_join_view<T>& view,
                                                const ego_settings& settings, unsigned threads,
                                                const std::function<bool()>& wanted) {
  const auto d = static_cast<std::size_t>(view.d);
  const dataset_view queries{view.query_points.data(), view.query_ids.size(), d, scalar_of<T>()};
  const dataset_view data{view.data_points.data(), view.data_ids.size(), d, scalar_of<T>()};
  auto built = std::make_unique<index>();
  built->chunks = ego::chunk_index<T>::build(queries, data, view.self_join, view.eps2,
                                             {.leaf = settings.leaf,
                                              .query_leaf = settings.query_leaf},
                                             threads, wanted);
  if (built->chunks == nullptr) return nullptr;
  return std::unique_ptr<ego_side>(new ego_side(view, std::move(built)));
}

template <class T>
ego_side<T>::ego_side(const host_join_view<T>& view, std::unique_ptr<index> built)
    : view_(view), index_(std::move(built)) {}

template <class T>
ego_side<T>::~ego_side() = default;

template <class T>
void ego_side<T>::join_items(std::uint32_t first, std::uint32_t end, cpu_rows& out) const {
  static thread_local std::vector<std::uint32_t> positions;
  positions.clear();
  for (std::uint32_t i = first; i < end; ++i) {
    const host_item& item = view_.items[i];
    for (std::uint32_t p = item.first; p < item.first + item.count; ++p) positions.push_back(p);
  }
  const std::size_t first_row = out.positions.size();
  std::size_t at = out.neighbors.size();
  out.distances +=
      index_->chunks->join(positions, {out.positions, out.counts, out.neighbors});
  // Every hit confirmed with the grid side's arithmetic (the EGO leaves pass a widened eps), so
  // a row holds what the grid side would put in it; the rows close up behind the dropped hits.
  std::size_t read = at;
  for (std::size_t r = first_row; r < out.positions.size(); ++r) {
    const std::uint32_t n = out.counts[r];
    std::uint32_t* row = out.neighbors.data() + at;
    if (read != at) std::copy_n(out.neighbors.data() + read, n, row);
    const std::size_t kept = keep_within_on_cpu(view_, out.positions[r], row, n);
    out.counts[r] = static_cast<std::uint32_t>(kept);
    read += n;
    at += kept;
  }
  out.neighbors.resize(at);
}

template <class T>
std::string ego_side<T>::describe() const {
  return index_->chunks->describe();
}

template class ego_side<float>;
template class ego_side<double>;

}  // namespace epsjoin::detail::hetero
