// The protocol's defaults: a sink takes only the batches its request names.

#include "epsjoin/error.hpp"
#include "epsjoin/sink.hpp"

namespace epsjoin {

row_destination result_sink::consume_counts(const count_batch&) {
  throw error("this sink takes pairs, not counts or rows (an engine ignored its request)");
}

void result_sink::consume_rows(const row_segment&) {
  throw error("this sink takes pairs, not rows (an engine ignored its request)");
}

}  // namespace epsjoin
