// The float instantiations of the cpu-rtree join (one file per type so they compile in parallel).

#include "cpu/rtree_join.hpp"

namespace epsjoin::detail::rtree_impl {

void run(const setup<float>& s, join_request& req) { run_any_k(s, req); }

}  // namespace epsjoin::detail::rtree_impl
