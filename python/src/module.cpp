// epsjoin._epsjoin: the nanobind module. The Python package (python/epsjoin) validates and
// converts arguments, then calls these; they call the public C++ API and nothing below it.

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <string>
#include <utility>

#include <epsjoin/epsjoin.hpp>

#include "dbscan_call.hpp"
#include "device_calls.hpp"
#include "index_calls.hpp"
#include "join_calls.hpp"
#include "nearest_calls.hpp"
#include "optics_call.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

nb::list engine_list() {
  nb::list out;
  for (const epsjoin::engine_info& e : epsjoin::engines()) {
    nb::dict d;
    d["name"] = e.name;
    d["processor"] = e.processor;
    d["description"] = e.description;
    d["available"] = e.available;
    d["unavailable_reason"] = e.unavailable_reason;
    d["error_band"] = e.error_band;
    nb::list metrics;
    for (epsjoin::distance_metric m : e.metrics) metrics.append(std::string(epsjoin::to_string(m)));
    d["metrics"] = metrics;
    d["periodic"] = e.periodic;
    nb::list params;
    for (const epsjoin::engine_param_info& p : e.params) {
      nb::dict param;
      param["key"] = p.key;
      param["kind"] = p.kind;
      param["description"] = p.description;
      params.append(param);
    }
    d["params"] = params;
    out.append(d);
  }
  return out;
}

nb::dict build_dict() {
  const epsjoin::build_info b = epsjoin::build();
  nb::list devices;
  for (const epsjoin::cuda_device& c : epsjoin::cuda_devices()) {
    nb::dict device;
    device["ordinal"] = c.ordinal;
    device["name"] = c.name;
    device["compute_capability"] = nb::make_tuple(c.compute_major, c.compute_minor);
    device["memory_bytes"] = c.memory_bytes;
    device["multiprocessors"] = c.multiprocessors;
    devices.append(device);
  }
  nb::dict d;
  d["version"] = b.version;
  d["build_type"] = b.build_type;
  d["compiler"] = b.compiler;
  d["cuda"] = b.cuda;
  d["cuda_architectures"] = b.cuda_architectures;
  d["cuda_devices"] = devices;
  return d;
}

// A Python exception type for each library error a caller may want to catch apart; ValueError
// and MemoryError where Python has the meaning already.
// The library's advice names the command line's options; a Python caller gets the keywords.
std::string in_python_terms(std::string message) {
  static const std::pair<const char*, const char*> words[] = {
      {"write it to a file (epsjoin join --output FILE streams it), count it instead "
       "(--format count), or raise the limit (--memory-limit)",
       "count it instead (epsjoin.count), or raise memory_limit="},
      {"raise the limit (--memory-limit)", "raise memory_limit="},
      {"raise --memory-limit", "raise memory_limit="},
      {"(--format count)", "(epsjoin.count)"},
      {"--device-memory-limit", "device_memory_limit="},
      {"--memory-limit", "memory_limit="},
  };
  for (const auto& [cli, python] : words) {
    for (std::size_t at = message.find(cli); at != std::string::npos;
         at = message.find(cli, at + std::strlen(python))) {
      message.replace(at, std::strlen(cli), python);
    }
  }
  return message;
}

template <class Error>
void raise_as(PyObject* type, const Error& e) {
  PyErr_SetString(type, in_python_terms(e.what()).c_str());
}

}  // namespace

NB_MODULE(_epsjoin, m) {
  m.doc() = "epsjoin's C++ core; use the functions of the epsjoin package instead.";
  // The library's version (CMakeLists.txt's project version, the one `epsjoin --version` prints),
  // so epsjoin.__version__ cannot disagree with the library it loaded.
  m.attr("__version__") = epsjoin::build().version;

  static nb::object unavailable_error =
      nb::exception<epsjoin::unavailable>(m, "UnavailableError", PyExc_RuntimeError);
  static nb::object cuda_error = nb::exception<epsjoin::cuda_error>(m, "CudaError", PyExc_RuntimeError);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const epsjoin::invalid_argument& e) {
      raise_as(PyExc_ValueError, e);
    } catch (const epsjoin::out_of_memory& e) {
      raise_as(PyExc_MemoryError, e);
    } catch (const epsjoin::io_error& e) {
      raise_as(PyExc_OSError, e);
    }
  });

  nb::class_<epsjoin_python::run_settings>(m, "RunSettings")
      .def(nb::init<>())
      .def_rw("engine", &epsjoin_python::run_settings::engine)
      .def_rw("precision", &epsjoin_python::run_settings::precision)
      .def_rw("approximate", &epsjoin_python::run_settings::approximate)
      .def_rw("threads", &epsjoin_python::run_settings::threads)
      .def_rw("device", &epsjoin_python::run_settings::device)
      .def_rw("devices", &epsjoin_python::run_settings::devices)
      .def_rw("devices_automatic", &epsjoin_python::run_settings::devices_automatic)
      .def_rw("devices_split", &epsjoin_python::run_settings::devices_split)
      .def_rw("host_memory_bytes", &epsjoin_python::run_settings::host_memory_bytes)
      .def_rw("device_memory_bytes", &epsjoin_python::run_settings::device_memory_bytes)
      .def_rw("params", &epsjoin_python::run_settings::params)
      .def_rw("metric", &epsjoin_python::run_settings::metric)
      .def_rw("angles", &epsjoin_python::run_settings::angles)
      .def_rw("sphere_radius", &epsjoin_python::run_settings::sphere_radius)
      .def_rw("box", &epsjoin_python::run_settings::box)
      .def_rw("share_index", &epsjoin_python::run_settings::share_index)
      .def_rw("share_count", &epsjoin_python::run_settings::share_count)
      .def_rw("progress", &epsjoin_python::run_settings::progress);

  m.def("neighbor_table", &epsjoin_python::neighbor_table, "queries"_a, "data"_a.none(), "eps"_a,
        "include_self"_a, "sort_indices"_a, "settings"_a, "added_bytes_per_pair"_a = 0.0);
  m.def("nearest", &epsjoin_python::nearest, "queries"_a, "data"_a.none(), "eps"_a, "k"_a,
        "include_self"_a, "settings"_a);
  m.def("neighbor_distance_table", &epsjoin_python::neighbor_distance_table, "queries"_a,
        "data"_a.none(), "eps"_a, "include_self"_a, "sort_indices"_a, "settings"_a);
  m.def("pairs_from_rows", &epsjoin_python::pairs_from_rows, "queries"_a, "data"_a.none(), "eps"_a,
        "include_self"_a, "sort"_a, "settings"_a, "once"_a = true);
  m.def("plan_slabs", &epsjoin_python::plan_slabs, "points"_a, "sample_size"_a, "n_points"_a,
        "eps"_a, "slabs"_a, "point_cost"_a, "settings"_a);
  m.def("join_to_file", &epsjoin_python::join_to_file, "queries"_a, "data"_a.none(), "eps"_a,
        "include_self"_a, "path"_a, "format"_a, "sort"_a, "settings"_a);
  m.def("neighbor_counts", &epsjoin_python::neighbor_counts, "queries"_a, "data"_a.none(), "eps"_a,
        "include_self"_a, "per_row"_a, "settings"_a);
  m.def("neighbor_counts_radii", &epsjoin_python::neighbor_counts_radii, "queries"_a,
        "data"_a.none(), "radii"_a, "include_self"_a, "settings"_a);
  m.def("filled_ones", &epsjoin_python::filled_ones, "n"_a, "threads"_a);
  m.def("device_neighbor_table", &epsjoin_python::device_neighbor_table, "queries"_a,
        "data"_a.none(), "eps"_a, "include_self"_a, "sort"_a, "distances"_a, "settings"_a);
  m.def("device_neighbor_pairs", &epsjoin_python::device_neighbor_pairs, "queries"_a,
        "data"_a.none(), "eps"_a, "include_self"_a, "sort"_a, "settings"_a);
  m.def("device_neighbor_counts", &epsjoin_python::device_neighbor_counts, "queries"_a,
        "data"_a.none(), "eps"_a, "include_self"_a, "per_row"_a, "settings"_a);
  m.def("dbscan", &epsjoin_python::dbscan, "points"_a, "eps"_a, "min_samples"_a, "settings"_a,
        "weights"_a = nb::none());
  m.def("dbscan_device", &epsjoin_python::dbscan_device, "points"_a, "eps"_a, "min_samples"_a,
        "settings"_a, "weights"_a = nb::none());
  epsjoin_python::bind_index(m);
  epsjoin_python::bind_optics(m);
  m.def("engines", &engine_list);
  m.def("build_info", &build_dict);
}
