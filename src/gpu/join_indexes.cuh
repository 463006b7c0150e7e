#pragma once
// The device grids a grid join needs: the indexed data's, and for an A x B join the queries'
// own (built with the data's geometry); a self-join's queries are its data.

#include "core/engine.hpp"
#include "grid/device_index.cuh"
#include "grid/plan.hpp"

namespace epsjoin::detail {

template <class T>
struct join_indexes {
  grid::device_index<T> data;
  grid::device_index<T> own_queries;  // empty for a self-join
  bool self_join = true;
  const grid::device_index<T>& queries() const { return self_join ? data : own_queries; }
};

template <class T>
join_indexes<T> build_join_indexes(gpu_state& gpu, cudaStream_t stream, const join_request& req,
                                   const grid::grid_plan& plan) {
  join_indexes<T> idx;
  idx.self_join = req.self_join;
  idx.data = grid::build_device_index<T>(gpu, stream, req.data, plan.geo, plan.dim_order, false);
  if (!req.self_join) {
    idx.own_queries =
        grid::build_device_index<T>(gpu, stream, req.queries, plan.geo, plan.dim_order, false);
  }
  req.stats.h2d_point_bytes += idx.data.uploaded_point_bytes + idx.own_queries.uploaded_point_bytes;
  return idx;
}

}  // namespace epsjoin::detail
