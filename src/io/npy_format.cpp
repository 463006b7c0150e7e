#include "io/npy_format.hpp"

#include <stdexcept>

namespace epsjoin::detail {

std::string npy_header(std::string_view descr, std::uint64_t rows, std::uint64_t cols,
                       std::size_t min_bytes) {
  std::string dict = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (" +
                     std::to_string(rows) + ", " + std::to_string(cols) + "), }";
  constexpr std::size_t preamble = 10;  // magic (6) + version (2) + header length (2)
  std::size_t total = preamble + dict.size() + 1;
  std::size_t padded = (total + 63) / 64 * 64;
  while (padded < min_bytes) padded += 64;
  dict.append(padded - total, ' ');
  dict.push_back('\n');
  const std::size_t header_len = dict.size();
  if (header_len > 0xffff) throw std::logic_error("npy header too long");
  std::string out = "\x93NUMPY";
  out.push_back('\x01');
  out.push_back('\x00');
  out.push_back(static_cast<char>(header_len & 0xff));
  out.push_back(static_cast<char>(header_len >> 8));
  return out + dict;
}

}  // namespace epsjoin::detail
