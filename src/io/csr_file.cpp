// The binary CSR file: "EPSJCSR1", uint64 n_queries, uint64 n_pairs, uint64 offsets[n_queries + 1],
// uint32 neighbors[n_pairs], all little-endian. The reader trusts nothing in the header until
// the file size agrees with it, so a corrupt count cannot trigger a huge allocation.
#include <cstring>
#include <string_view>

#include "epsjoin/io.hpp"
#include "io/csr_format.hpp"
#include "io/io_file.hpp"

namespace epsjoin {

using detail::csr_header_bytes;
using detail::csr_magic;

void write_csr(const std::string& path, const neighbor_table& table) {
  const auto& offsets = table.offsets;
  if (offsets.empty()) {
    EPSJOIN_EXPECTS(table.neighbors.empty(), path, ": the table has ", table.neighbors.size(),
                    " neighbours but no offsets");
  } else {
    EPSJOIN_EXPECTS(offsets.front() == 0, path, ": offsets[0] is ", offsets.front(), ", not 0");
    for (std::size_t k = 1; k < offsets.size(); ++k) {
      EPSJOIN_EXPECTS(offsets[k - 1] <= offsets[k], path, ": offsets decrease at ", k, " (",
                      offsets[k - 1], " then ", offsets[k], ")");
    }
    EPSJOIN_EXPECTS(offsets.back() == table.neighbors.size(), path, ": offsets end at ",
                    offsets.back(), " but the table has ", table.neighbors.size(), " neighbours");
  }
  const std::uint64_t no_queries[1] = {0};  // an empty table is written as offsets = {0}

  detail::output_file out(path);
  const auto header = detail::csr_header(table.n_queries(), table.n_pairs());
  out.write(header.data(), header.size());
  if (offsets.empty()) {
    out.write(no_queries, sizeof no_queries);
  } else {
    out.write(offsets.data(), offsets.size() * sizeof(std::uint64_t));
  }
  out.write(table.neighbors.data(), table.neighbors.size() * sizeof(std::uint32_t));
  out.commit();
}

neighbor_table read_csr(const std::string& path) {
  using detail::io_fail_at;
  detail::input_file file(path);
  file.require_regular();
  const std::uint64_t size = file.size();
  if (size == 0) detail::io_fail(path, "empty file (not an epsjoin CSR file)");
  char header[csr_header_bytes];
  if (size < csr_header_bytes) {
    file.read_exact(header, size, 0);
    if (std::string_view(header, std::min<std::uint64_t>(size, 8)) != csr_magic.substr(0, size)) {
      io_fail_at(path, 0, "not an epsjoin CSR file (it does not start with \"EPSJCSR1\")");
    }
    io_fail_at(path, size, "file ends inside the ", csr_header_bytes, "-byte CSR header");
  }
  file.read_exact(header, sizeof header, 0);
  if (std::string_view(header, 8) != csr_magic) {
    io_fail_at(path, 0, "not an epsjoin CSR file (it does not start with \"EPSJCSR1\")");
  }
  std::uint64_t n_queries = 0, n_pairs = 0;
  std::memcpy(&n_queries, header + 8, 8);
  std::memcpy(&n_pairs, header + 16, 8);

  // Sizes in the order they appear, each checked against what is left before it is used.
  const std::uint64_t body = size - csr_header_bytes;
  if (n_queries >= body / 8) {
    io_fail_at(path, 8, "n_queries = ", n_queries, " needs ", n_queries, " + 1 offsets of 8 bytes",
               " but only ", body, " bytes follow the header (truncated or corrupt)");
  }
  const std::uint64_t offsets_bytes = (n_queries + 1) * 8;
  const std::uint64_t rest = body - offsets_bytes;
  if (n_pairs > rest / 4) {
    io_fail_at(path, 16, "n_pairs = ", n_pairs, " needs ", n_pairs, " neighbours of 4 bytes but ",
               "only ", rest, " bytes follow the offsets (truncated or corrupt)");
  }
  if (n_pairs * 4 != rest) {
    io_fail_at(path, csr_header_bytes + offsets_bytes + n_pairs * 4, rest - n_pairs * 4,
               " bytes after the end of the neighbours");
  }

  neighbor_table table;
  table.offsets.resize(n_queries + 1);
  file.read_exact(table.offsets.data(), offsets_bytes, csr_header_bytes);
  if (table.offsets[0] != 0) {
    io_fail_at(path, csr_header_bytes, "offsets[0] is ", table.offsets[0], ", not 0");
  }
  for (std::uint64_t k = 1; k <= n_queries; ++k) {
    if (table.offsets[k] < table.offsets[k - 1]) {
      io_fail_at(path, csr_header_bytes + k * 8, "offsets decrease: offsets[", k,
                 "] = ", table.offsets[k], " < offsets[", k - 1, "] = ", table.offsets[k - 1]);
    }
  }
  if (table.offsets[n_queries] != n_pairs) {
    io_fail_at(path, csr_header_bytes + n_queries * 8,
               "offsets[n_queries] = ", table.offsets[n_queries], " but n_pairs = ", n_pairs);
  }
  table.neighbors.resize(n_pairs);
  file.read_exact(table.neighbors.data(), n_pairs * 4, csr_header_bytes + offsets_bytes);
  return table;
}

}  // namespace epsjoin
