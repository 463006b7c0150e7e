#include "core/delivery.hpp"

#include <vector>

#include "base/expects.hpp"
#include "base/parallel.hpp"
#include "core/self_slots.hpp"

namespace epsjoin::detail {

void delivery::counts(std::span<const std::uint32_t> ids,
                      std::span<const std::uint32_t> counts) const {
  EPSJOIN_ENSURE(ids.size() == counts.size(), error, "internal: ", ids.size(), " ids for ",
                 counts.size(), " counts");
  // Blocks of 64 Ki queries: a sink's lock is taken once a block, not once a query.
  parallel_for(threads_, ids.size(), std::size_t{1} << 16,
               [&](std::size_t begin, std::size_t end, unsigned) {
    std::vector<std::uint32_t> block_ids, block_counts;
    for (std::size_t k = begin; k < end; ++k) {
      if (counts[k] == 0) continue;
      block_ids.push_back(ids[k]);
      block_counts.push_back(counts[k]);
    }
    if (!block_ids.empty()) hand_counts(*sink_, block_ids, block_counts);
  });
}

row_destination delivery::lay_out(std::span<const std::uint32_t> counts_by_query,
                                  bool distances) {
  EPSJOIN_ENSURE(form_ == delivery_form::rows && (!distances || wanted_.distances), error,
                 "internal: rows laid out for a sink that does not take rows, or distances for "
                 "one that does not want them");
  destination_ = lay_out_rows(*sink_, counts_by_query, distances);
  return destination_;
}

void delivery::lay_out_query_rows(std::span<const std::uint32_t> counts_by_query,
                                  std::span<const std::uint64_t> offsets) {
  EPSJOIN_ENSURE(offsets.size() == counts_by_query.size() + 1, error, "internal: ",
                 offsets.size(), " offsets for ", counts_by_query.size(), " rows");
  lay_out(counts_by_query);
  query_offsets_ = offsets;
  contiguous_ = is_contiguous(offsets, destination_, threads_);
  one_slot_before_rows_ = !contiguous_ && is_contiguous(offsets, destination_, threads_, 1);
}

void delivery::query_rows(std::uint64_t first, std::span<const std::uint32_t> piece) const {
  copy_query_rows(query_offsets_, first, piece, destination_, contiguous_, threads_);
}

bool delivery::take_self_slots() {
  auto* slots = dynamic_cast<self_slot_sink*>(sink_);
  if (form_ != delivery_form::rows || slots == nullptr) return false;
  slots->leave_self_slots_to_engine();
  return true;
}

void delivery::query_rows_with_self_slots(std::uint64_t first, std::span<const std::uint32_t> piece) {
  if (slotted_offsets_.empty()) {
    slotted_offsets_.resize(query_offsets_.size());
    parallel_for(threads_, query_offsets_.size(), std::size_t{1} << 18,
                 [&](std::size_t b, std::size_t e, unsigned) {
      for (std::size_t q = b; q < e; ++q) slotted_offsets_[q] = query_offsets_[q] + q;
    });
  }
  // The slot of row q lies just before where its neighbours go.
  copy_query_rows(slotted_offsets_, first, piece, destination_.shifted(-1),
                  false, threads_);
}

void delivery::rows(const row_layout& layout, std::uint64_t first,
                    std::span<const std::uint32_t> piece) const {
  if (form_ == delivery_form::rows) {
    copy_rows(layout, first, piece, destination_, threads_);
  } else {
    emit_rows_as_pairs(layout, first, piece, *sink_, threads_);
  }
}

}  // namespace epsjoin::detail
