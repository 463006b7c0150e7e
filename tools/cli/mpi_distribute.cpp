// mpi-join when every rank reads its share of the input: the sample to rank 0, the partition
// back to every rank, and each point to its box's rank and its halo ranks (MPI_Alltoallv).
#include <cstring>
#include <numeric>

#include "mpi_exchange.hpp"

namespace epsjoin::cli::mpi {

namespace {

// One Alltoallv of points (`point` a point's bytes) and one of their ids, `lists[r]` the local
// indices bound for rank r; what arrives is appended to `out`, ranks in order.
void send_lists(const std::vector<std::vector<std::uint32_t>>& lists, dataset_view mine,
                std::uint64_t first_id, MPI_Datatype point, std::size_t point_bytes,
                std::vector<unsigned char>& out_points, std::vector<std::uint32_t>& out_ids) {
  const std::size_t ranks = lists.size();
  std::vector<int> send_counts(ranks), receive_counts(ranks);
  for (std::size_t r = 0; r < ranks; ++r) send_counts[r] = count(lists[r].size(), "points sent");
  check(MPI_Alltoall(send_counts.data(), 1, MPI_INT, receive_counts.data(), 1, MPI_INT,
                     MPI_COMM_WORLD),
        "MPI_Alltoall (counts)");
  const std::vector<int> send_displs = displacements(send_counts, "points sent");
  const std::vector<int> receive_displs = displacements(receive_counts, "points received");
  const std::size_t sending =
      std::accumulate(send_counts.begin(), send_counts.end(), std::size_t{0});
  const std::size_t receiving =
      std::accumulate(receive_counts.begin(), receive_counts.end(), std::size_t{0});
  std::vector<unsigned char> send_points(sending * point_bytes);
  std::vector<std::uint32_t> send_ids(sending);
  std::size_t at = 0;
  const auto* source = static_cast<const unsigned char*>(mine.data);
  for (const auto& list : lists) {
    for (std::uint32_t local : list) {
      std::memcpy(send_points.data() + at * point_bytes, source + local * point_bytes, point_bytes);
      send_ids[at++] = static_cast<std::uint32_t>(first_id + local);
    }
  }
  const std::size_t before = out_ids.size();
  out_points.resize((before + receiving) * point_bytes);
  out_ids.resize(before + receiving);
  check(MPI_Alltoallv(send_points.data(), send_counts.data(), send_displs.data(), point,
                      out_points.data() + before * point_bytes, receive_counts.data(),
                      receive_displs.data(), point, MPI_COMM_WORLD),
        "MPI_Alltoallv (points)");
  check(MPI_Alltoallv(send_ids.data(), send_counts.data(), send_displs.data(), MPI_UINT32_T,
                      out_ids.data() + before, receive_counts.data(), receive_displs.data(),
                      MPI_UINT32_T, MPI_COMM_WORLD),
        "MPI_Alltoallv (ids)");
}

}  // namespace

rank_points exchange_boxes(dataset_view mine, std::uint64_t first_id, unsigned threads,
                           const box_partition& partition, bool with_halo) {
  const box_members members = assign_points(partition, mine, threads);  // local indices
  const std::size_t value_bytes = mine.type == scalar_type::f64 ? sizeof(double) : sizeof(float);
  const std::size_t point_bytes = mine.d * value_bytes;
  MPI_Datatype point_type = MPI_DATATYPE_NULL;
  check(MPI_Type_contiguous(count(point_bytes, "bytes per point"), MPI_BYTE, &point_type),
        "MPI_Type_contiguous");
  const datatype point(point_type);
  std::vector<unsigned char> points;
  rank_points out;
  send_lists(members.own, mine, first_id, point.get(), point_bytes, points, out.ids);
  out.own = out.ids.size();
  if (with_halo) send_lists(members.halo, mine, first_id, point.get(), point_bytes, points, out.ids);
  out.points = dataset(out.ids.size(), mine.d, mine.type);
  void* values = mine.type == scalar_type::f64 ? static_cast<void*>(out.points.f64())
                                               : static_cast<void*>(out.points.f32());
  if (!points.empty()) std::memcpy(values, points.data(), points.size());
  return out;
}

dataset gather_sample(const session& s, const dataset& part, std::size_t d) {
  MPI_Datatype point_type = MPI_DATATYPE_NULL;
  check(MPI_Type_contiguous(count(d, "dimensions"), MPI_DOUBLE, &point_type),
        "MPI_Type_contiguous");
  const datatype point(point_type);
  const int mine = count(part.n(), "sample points");
  std::vector<int> sizes(s.rank() == 0 ? static_cast<std::size_t>(s.size()) : 0);
  check(MPI_Gather(&mine, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD),
        "MPI_Gather (sample sizes)");
  std::vector<int> displs;
  std::size_t total = 0;
  if (s.rank() == 0) {
    displs = displacements(sizes, "sample points");
    total = std::accumulate(sizes.begin(), sizes.end(), std::size_t{0});
  }
  dataset sample(total, d, scalar_type::f64);
  check(MPI_Gatherv(part.f64(), mine, point.get(), sample.f64(), sizes.data(), displs.data(),
                    point.get(), 0, MPI_COMM_WORLD),
        "MPI_Gatherv (sample)");
  return sample;
}

void broadcast_partition(const session& s, box_partition& partition) {
  std::uint64_t dim = partition.dim;
  check(MPI_Bcast(&dim, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast (cut dimension)");
  partition.dim = dim;
  partition.splits.resize(static_cast<std::size_t>(s.size()) - 1);
  check(MPI_Bcast(partition.splits.data(), count(partition.splits.size(), "cuts"), MPI_DOUBLE, 0,
                  MPI_COMM_WORLD),
        "MPI_Bcast (cuts)");
}

}  // namespace epsjoin::cli::mpi
