// The binary CSR result file (read_csr, docs/formats.md), through the real reader on an in-memory
// file: any bytes are a table or an io_error. A table read is consistent (offsets from 0, never
// decreasing, ending at the neighbour count) and accounts for every byte of the file.
#include <cstddef>
#include <cstdint>

#include "check.hpp"
#include "epsjoin/error.hpp"
#include "epsjoin/io.hpp"
#include "memory_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace epsjoin;
  static fuzz::memory_file file;
  neighbor_table table;
  try {
    table = read_csr(file.hold(data, size));
  } catch (const io_error&) {
    return 0;
  }
  fuzz::require(!table.offsets.empty() && table.offsets.front() == 0,
                "a CSR table without offsets or whose first offset is not 0");
  for (std::size_t k = 1; k < table.offsets.size(); ++k) {
    fuzz::require(table.offsets[k - 1] <= table.offsets[k], "CSR offsets decrease");
  }
  fuzz::require(table.offsets.back() == table.neighbors.size(),
                "the last CSR offset is not the neighbour count");
  fuzz::require(24 + 8 * table.offsets.size() + 4 * table.neighbors.size() == size,
                "a CSR table that does not account for every byte of its file");
  return 0;
}
