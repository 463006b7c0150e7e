#pragma once
// The MPI calls of mpi-join, each checked: a failed call throws with the call's name and MPI's
// own words, and the command aborts the job (a rank that stops alone would leave the others
// waiting in a collective).

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace epsjoin::cli::mpi {

inline void check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  throw std::runtime_error(std::string(call) + " failed: " + std::string(text, length));
}

/// MPI's counts are int: a larger count is refused with `what` named, not truncated.
inline int count(std::size_t n, const char* what) {
  if (n > static_cast<std::size_t>(INT32_MAX)) {
    throw std::runtime_error(std::string(what) + " (" + std::to_string(n) +
                             ") exceeds what one MPI call moves (2^31 - 1 elements)");
  }
  return static_cast<int>(n);
}

/// The displacements of a collective's `counts` (their exclusive prefix sums), each checked
/// to fit MPI's int as `what`.
inline std::vector<int> displacements(const std::vector<int>& counts, const char* what) {
  std::vector<int> displs(counts.size(), 0);
  std::size_t at = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    displs[r] = count(at, what);
    at += static_cast<std::size_t>(counts[r]);
  }
  count(at, what);
  return displs;
}

/// MPI_Init on construction, MPI_Finalize on destruction; errors are returned, not fatal, so that
/// check() sees them.
class session {
 public:
  session() {
    check(MPI_Init(nullptr, nullptr), "MPI_Init");
    check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
    // The ranks on this host: each takes a GPU of its own and its share of the cores.
    MPI_Comm host = MPI_COMM_NULL;
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &host),
          "MPI_Comm_split_type");
    check(MPI_Comm_rank(host, &host_rank_), "MPI_Comm_rank (host)");
    check(MPI_Comm_size(host, &host_size_), "MPI_Comm_size (host)");
    MPI_Comm_free(&host);
  }
  ~session() { MPI_Finalize(); }
  session(const session&) = delete;
  session& operator=(const session&) = delete;
  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  /// This rank among the ranks of its host, and how many those are.
  int host_rank() const noexcept { return host_rank_; }
  int host_size() const noexcept { return host_size_; }

 private:
  int rank_ = 0;
  int size_ = 1;
  int host_rank_ = 0;
  int host_size_ = 1;
};

/// A committed derived datatype, freed with its owner.
class datatype {
 public:
  datatype() = default;
  explicit datatype(MPI_Datatype type) : type_(type) {
    check(MPI_Type_commit(&type_), "MPI_Type_commit");
  }
  ~datatype() {
    if (type_ != MPI_DATATYPE_NULL) MPI_Type_free(&type_);
  }
  datatype(const datatype&) = delete;
  datatype& operator=(const datatype&) = delete;
  MPI_Datatype get() const noexcept { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

}  // namespace epsjoin::cli::mpi
