#pragma once
// cuda-tensor's third design (design=warps): the tasks of its kernel. A block of `slots` warps
// takes one task: its first `tensor_warps` warps run meta-16q's tiles code on tensor items, the
// others lbjoin's tiled code on CUDA-core items. A task whose items are all of one query cell
// (hence of the same candidates) walks them once for the whole block, each tile of candidates
// staged in shared memory for both kinds of warps; the other tasks (items of cells with a
// single item) run each warp on its own candidates.
//
// Which kind decides an item is fixed the first time the item is seen (a counting launch) and
// kept by its first query position, so that the filling pass, whose launches may cut the items
// differently, fills every row with the kernel that counted it.
//
// Host code without CUDA, so that the CPU tests check it.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <unordered_map>
#include <vector>

#include "base/expects.hpp"

namespace epsjoin::detail::hetero {

enum class item_kind : std::uint8_t { unset, tensor, cuda };

inline constexpr std::uint32_t no_shared_cell = std::numeric_limits<std::uint32_t>::max();

/// The tasks of one launch. Item stands for row_join::work_item (first, count, cell).
template <class Item>
struct warp_tasks {
  std::vector<Item> slots;                 ///< `slots` per task; count 0: an idle warp
  std::vector<std::uint32_t> shared_cell;  ///< per task: the cell of all its items, or none
  std::uint64_t tensor_work = 0, cuda_work = 0;
  std::uint64_t shared_tasks = 0, busy_slots = 0;
  std::uint32_t tasks() const { return static_cast<std::uint32_t>(shared_cell.size()); }
};

/// Tensor warps of a block for a share of the candidates: round(share * slots), and at least one
/// warp of each kind unless the share gives a side nothing.
inline unsigned tensor_warps_for(double share, unsigned slots) {
  if (share <= 0) return 0;
  if (share >= 1) return slots;
  const auto rounded = static_cast<unsigned>(share * slots + 0.5);
  return std::clamp(rounded, 1u, slots - 1);
}

/// The tasks of `items` (`work[i]`: item i's candidates), the kinds of items not seen before
/// chosen and entered in `kinds` (by first query position, `kinds.size()` > every position).
/// Of each cell's unseen items, every `slots` consecutive ones take the warps' kinds in order;
/// the rests (fewer than `slots`) take the kinds that keep the launch's rests nearest the warps'
/// proportion, a rest of two or more items at least one of each kind that has warps.
template <class Item>
warp_tasks<Item> build_warp_tasks(std::span<const Item> items, std::span<const std::uint64_t> work,
                                  unsigned tensor_warps, unsigned slots,
                                  std::vector<item_kind>& kinds) {
  EPSJOIN_EXPECTS(items.size() == work.size() && tensor_warps <= slots && slots > 0,
                  "internal: warp tasks of ", items.size(), " items, ", work.size(), " workloads, ",
                  tensor_warps, " of ", slots, " warps");
  const unsigned cuda_warps = slots - tensor_warps;
  // The cells in the order the launch first names them (heaviest first), each with its items.
  std::vector<std::vector<std::uint32_t>> by_cell;
  std::unordered_map<std::uint32_t, std::uint32_t> cell_index;
  for (std::uint32_t i = 0; i < items.size(); ++i) {
    const auto [at, added] =
        cell_index.try_emplace(items[i].cell, static_cast<std::uint32_t>(by_cell.size()));
    if (added) by_cell.emplace_back();
    by_cell[at->second].push_back(i);
  }

  std::uint64_t placed = 0, placed_tensor = 0;  // the rests' items, for the proportion
  const auto choose = [&](std::uint32_t i, item_kind kind) {
    item_kind& k = kinds.at(items[i].first);
    if (k == item_kind::unset) k = kind;
  };
  for (std::vector<std::uint32_t>& cell : by_cell) {
    std::sort(cell.begin(), cell.end(),
              [&](std::uint32_t a, std::uint32_t b) { return items[a].first < items[b].first; });
    std::vector<std::uint32_t> unseen;
    for (const std::uint32_t i : cell) {
      if (kinds.at(items[i].first) == item_kind::unset) unseen.push_back(i);
    }
    const std::size_t whole = unseen.size() / slots * slots, rest = unseen.size() - whole;
    for (std::size_t u = 0; u < whole; ++u) {
      choose(unseen[u], u % slots < tensor_warps ? item_kind::tensor : item_kind::cuda);
    }
    if (rest == 0) continue;
    // The tensor items that bring the rests so far nearest the warps' proportion; a rest of
    // two or more keeps one item of each kind that has warps, so that it shares its tiles.
    const double ideal = static_cast<double>(placed + rest) * tensor_warps / slots -
                         static_cast<double>(placed_tensor);
    const double lo = rest >= 2 && tensor_warps > 0 ? 1.0 : 0.0;
    const double hi = static_cast<double>(cuda_warps > 0 ? rest - (rest >= 2 ? 1 : 0) : rest);
    const auto to_tensor = static_cast<std::size_t>(std::clamp(std::floor(ideal + 0.5), lo, hi));
    for (std::size_t u = 0; u < rest; ++u) {
      choose(unseen[whole + u], u < to_tensor ? item_kind::tensor : item_kind::cuda);
    }
    placed += rest;
    placed_tensor += to_tensor;
  }

  warp_tasks<Item> out;
  const auto add_task = [&](std::span<const std::uint32_t> tensor_items,
                            std::span<const std::uint32_t> cuda_items, std::uint32_t cell) {
    const std::size_t base = out.slots.size();
    out.slots.resize(base + slots, Item{0, 0, 0});
    for (std::size_t s = 0; s < tensor_items.size(); ++s) {
      out.slots[base + s] = items[tensor_items[s]];
      out.tensor_work += work[tensor_items[s]];
    }
    for (std::size_t s = 0; s < cuda_items.size(); ++s) {
      out.slots[base + tensor_warps + s] = items[cuda_items[s]];
      out.cuda_work += work[cuda_items[s]];
    }
    out.shared_cell.push_back(cell);
    out.shared_tasks += cell != no_shared_cell;
    out.busy_slots += tensor_items.size() + cuda_items.size();
  };
  std::vector<std::uint32_t> lone_tensor, lone_cuda;
  for (const std::vector<std::uint32_t>& cell : by_cell) {
    std::vector<std::uint32_t> tensor_items, cuda_items;
    for (const std::uint32_t i : cell) {
      const item_kind k = kinds.at(items[i].first);
      EPSJOIN_EXPECTS(k != item_kind::tensor || tensor_warps > 0,
                      "internal: a tensor item for a block without tensor warps");
      EPSJOIN_EXPECTS(k != item_kind::cuda || cuda_warps > 0,
                      "internal: a CUDA-core item for a block without CUDA-core warps");
      (k == item_kind::tensor ? tensor_items : cuda_items).push_back(i);
    }
    std::size_t t = 0, c = 0;
    while (t < tensor_items.size() || c < cuda_items.size()) {
      const std::size_t take_t = std::min<std::size_t>(tensor_warps, tensor_items.size() - t);
      const std::size_t take_c = std::min<std::size_t>(cuda_warps, cuda_items.size() - c);
      if (take_t + take_c >= 2) {
        add_task(std::span(tensor_items).subspan(t, take_t),
                 std::span(cuda_items).subspan(c, take_c), items[cell.front()].cell);
      } else if (take_t == 1) {
        lone_tensor.push_back(tensor_items[t]);
      } else {
        lone_cuda.push_back(cuda_items[c]);
      }
      t += take_t;
      c += take_c;
    }
  }
  for (std::size_t t = 0, c = 0; t < lone_tensor.size() || c < lone_cuda.size();) {
    const std::size_t take_t = std::min<std::size_t>(tensor_warps, lone_tensor.size() - t);
    const std::size_t take_c = std::min<std::size_t>(cuda_warps, lone_cuda.size() - c);
    add_task(std::span(lone_tensor).subspan(t, take_t), std::span(lone_cuda).subspan(c, take_c),
             no_shared_cell);
    t += take_t;
    c += take_c;
  }
  return out;
}

}  // namespace epsjoin::detail::hetero
