#pragma once
// Host side of the cuBLAS baseline: arguments, points from .npy or a generator, the CPU check.
// Kept apart from epsjoin's own readers so the baseline shares nothing with the engines it is
// compared against.

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace cublas_join {

struct points {
  std::size_t n = 0;
  std::size_t d = 0;
  std::vector<double> values;  // [n x d, row-major]
  std::string description;
};

/// `--name value` and bare `--name` switches; a switch listed in `switches` takes no value.
class arguments {
 public:
  arguments(int argc, char** argv, int first, const std::vector<std::string>& switches) {
    for (int i = first; i < argc; ++i) {
      const std::string word = argv[i];
      if (word.rfind("--", 0) != 0)
        throw std::invalid_argument("unexpected argument '" + word + "'");
      const std::string name = word.substr(2);
      bool is_switch = false;
      for (const std::string& s : switches) is_switch = is_switch || s == name;
      if (is_switch) {
        values_[name] = "";
      } else {
        if (i + 1 >= argc) throw std::invalid_argument("--" + name + " needs a value");
        values_[name] = argv[++i];
      }
    }
  }

  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::string get(const std::string& name, const std::string& fallback = "") const {
    const auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second;
  }
  double get_double(const std::string& name, double fallback) const {
    return has(name) ? parse<double>(name, [](const std::string& s,
                                              std::size_t* end) { return std::stod(s, end); })
                     : fallback;
  }
  std::uint64_t get_size(const std::string& name, std::uint64_t fallback) const {
    // stod, not stoull: sizes are often written 1e6 or 2.68e8.
    if (!has(name)) return fallback;
    const double value = get_double(name, 0);
    if (!(value >= 0 && value < 1.8e19))
      throw std::invalid_argument("--" + name + ": not a size: '" + get(name) + "'");
    return static_cast<std::uint64_t>(value);
  }
  /// Names the caller never asked for are typos; catching them beats silently ignoring them.
  void reject_unknown(const std::vector<std::string>& known) const {
    for (const auto& [name, value] : values_) {
      bool ok = false;
      for (const std::string& k : known) ok = ok || k == name;
      if (!ok) throw std::invalid_argument("unknown option --" + name);
    }
  }

 private:
  template <class T, class F>
  T parse(const std::string& name, F convert) const {
    const std::string text = get(name);
    std::size_t end = 0;
    T value{};
    try {
      value = convert(text, &end);
    } catch (const std::exception&) {
      end = std::string::npos;
    }
    if (end != text.size())
      throw std::invalid_argument("--" + name + ": not a number: '" + text + "'");
    return value;
  }

  std::map<std::string, std::string> values_;
};

/// The value after `'key':` in a .npy header dictionary, up to the next top-level comma or brace.
inline std::string npy_header_field(const std::string& header, const std::string& key,
                                    const std::string& path) {
  const std::size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    throw std::runtime_error(path + ": .npy header has no '" + key + "'");
  std::size_t start = header.find(':', at) + 1;
  while (start < header.size() && header[start] == ' ') ++start;
  std::size_t end = start;
  int depth = 0;
  for (; end < header.size(); ++end) {
    const char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  return header.substr(start, end - start);
}

/// A C-ordered 2-D .npy of '<f8' or '<f4' (float32 is widened to double here, once).
inline points load_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  char magic[8];
  in.read(magic, 8);
  if (!in || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    throw std::runtime_error(path + ": not a .npy file");
  const int major = static_cast<unsigned char>(magic[6]);
  std::uint32_t header_length = 0;
  if (major == 1) {
    unsigned char b[2];
    in.read(reinterpret_cast<char*>(b), 2);
    header_length = b[0] | (b[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    in.read(reinterpret_cast<char*>(b), 4);
    header_length = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<std::uint32_t>(b[3]) << 24);
  } else {
    throw std::runtime_error(path + ": unsupported .npy version " + std::to_string(major));
  }
  std::string header(header_length, '\0');
  in.read(header.data(), header_length);
  if (!in) throw std::runtime_error(path + ": truncated .npy header");

  const std::string descr = npy_header_field(header, "descr", path);
  const bool is_f64 = descr == "'<f8'";
  if (!is_f64 && descr != "'<f4'")
    throw std::runtime_error(path + ": dtype " + descr + ", want <f8 or <f4");
  if (npy_header_field(header, "fortran_order", path) != "False") {
    throw std::runtime_error(path + ": Fortran-ordered arrays are not supported");
  }
  const std::string shape = npy_header_field(header, "shape", path);
  unsigned long long rows = 0, cols = 0;
  if (std::sscanf(shape.c_str(), "(%llu, %llu)", &rows, &cols) != 2) {
    throw std::runtime_error(path + ": shape " + shape + " is not 2-D");
  }

  points p;
  p.n = rows;
  p.d = cols;
  p.values.resize(p.n * p.d);
  if (is_f64) {
    in.read(reinterpret_cast<char*>(p.values.data()),
            static_cast<std::streamsize>(p.values.size() * 8));
  } else {
    std::vector<float> narrow(p.values.size());
    in.read(reinterpret_cast<char*>(narrow.data()),
            static_cast<std::streamsize>(narrow.size() * 4));
    for (std::size_t k = 0; k < narrow.size(); ++k) p.values[k] = narrow[k];
  }
  if (!in) throw std::runtime_error(path + ": truncated data");
  p.description = path;
  return p;
}

/// `uniform:D:N`: uniform in [0,1)^D with a fixed seed, so every run sees the same points.
inline points generate(const std::string& spec) {
  unsigned long d = 0;
  double n = 0;
  char tail = 0;
  if (std::sscanf(spec.c_str(), "uniform:%lu:%lf%c", &d, &n, &tail) != 2 || d == 0 || n < 1) {
    throw std::invalid_argument("--generate expects uniform:D:N, got '" + spec + "'");
  }
  points p;
  p.n = static_cast<std::size_t>(n);
  p.d = d;
  p.values.resize(p.n * p.d);
  std::mt19937_64 engine(20240607);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (double& v : p.values) v = unit(engine);
  p.description = spec;
  return p;
}

/// Per-point neighbour counts, self included, by the direct formula sum (a - b)^2 <= eps^2:
/// the expanded |q|^2 + |p|^2 - 2 q.p of the GPU path can disagree only right at eps.
inline std::vector<std::uint64_t> cpu_counts(const points& p, double eps) {
  const double eps2 = eps * eps;
  std::vector<std::uint64_t> counts(p.n, 0);
  for (std::size_t i = 0; i < p.n; ++i) {
    const double* a = &p.values[i * p.d];
    for (std::size_t j = 0; j < p.n; ++j) {
      const double* b = &p.values[j * p.d];
      double s = 0;
      for (std::size_t k = 0; k < p.d; ++k) s += (a[k] - b[k]) * (a[k] - b[k]);
      counts[i] += s <= eps2;
    }
  }
  return counts;
}

}  // namespace cublas_join
