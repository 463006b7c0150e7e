#include "released_call.hpp"

#include <mutex>
#include <thread>
#include <vector>

#include "owned_array.hpp"
#include "stats_dict.hpp"

namespace epsjoin_python {

namespace {

class resources_pool {
 public:
  std::unique_ptr<epsjoin::resources> take(int device) {
    std::lock_guard lock(mutex_);
    for (auto it = idle_.begin(); it != idle_.end(); ++it) {
      if ((*it)->device() == device) {
        std::unique_ptr<epsjoin::resources> r = std::move(*it);
        idle_.erase(it);
        return r;
      }
    }
    return std::make_unique<epsjoin::resources>(0, device);
  }
  void give_back(std::unique_ptr<epsjoin::resources> r) {
    std::lock_guard lock(mutex_);
    if (idle_.size() < 4) idle_.push_back(std::move(r));
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<epsjoin::resources>> idle_;
};

resources_pool& pool() {
  // Never destroyed: a GPU context torn down after the interpreter is gone helps nobody.
  static resources_pool* p = new resources_pool;
  return *p;
}

}  // namespace

epsjoin::scalar_type scalar_type_of(nb::dlpack::dtype dtype) {
  if (dtype == nb::dtype<double>()) return epsjoin::scalar_type::f64;
  if (dtype == nb::dtype<float>()) return epsjoin::scalar_type::f32;
  throw epsjoin::invalid_argument(
      "points must be float32 or float64 (the Python layer converts others)");
}

epsjoin::dataset_view view_of(const points_array& a) {
  epsjoin::dataset_view v;
  v.data = a.data();
  v.n = a.shape(0);
  v.d = a.shape(1);
  v.type = scalar_type_of(a.dtype());
  return v;
}

epsjoin::scalar_type precision_of(const std::string& name) {
  if (name == "f64") return epsjoin::scalar_type::f64;
  if (name == "f32") return epsjoin::scalar_type::f32;
  throw epsjoin::invalid_argument("precision must be 'f64' or 'f32', got '" + name + "'");
}

std::unique_ptr<epsjoin::resources> take_resources(const run_settings& s) {
  std::unique_ptr<epsjoin::resources> res = pool().take(s.device);
  // A pooled object keeps its devices (and their GPU state) while calls ask for the same ones.
  std::vector<int> devices = s.devices.empty() ? std::vector<int>{s.device} : s.devices;
  if (devices != res->devices()) res->set_devices(std::move(devices));
  res->set_devices_automatic(s.devices_automatic);
  const std::optional<epsjoin::device_split> split = epsjoin::device_split_named(s.devices_split);
  if (!split) {
    throw epsjoin::invalid_argument("devices_split must be 'auto', 'items' or 'slabs', got '" +
                                    s.devices_split + "'");
  }
  res->set_device_split(*split);
  res->set_threads(s.threads);
  res->set_memory({s.host_memory_bytes, s.device_memory_bytes});
  return res;
}

void give_back(std::unique_ptr<epsjoin::resources> res) { pool().give_back(std::move(res)); }

std::function<void(double)> interrupt_check(PyObject* report) {
  // A raw pointer: the std::function is copied by threads that do not hold the GIL, which a
  // reference count may not be touched without. `report` is called from the calling thread
  // only: an exception it raises is set in the thread state of the thread that called it, and
  // the call's own thread is the one that raises it to the caller.
  const std::thread::id caller = std::this_thread::get_id();
  return [report, caller](double fraction) {
    nb::gil_scoped_acquire gil;
    if (report != nullptr && std::this_thread::get_id() == caller) {
      PyObject* result = PyObject_CallFunction(report, "d", fraction);
      if (result == nullptr) throw interrupted{};
      Py_DECREF(result);
    }
    if (PyErr_CheckSignals() != 0) throw interrupted{};
  };
}

epsjoin::join_options options_of(const run_settings& s, double eps, bool include_self) {
  epsjoin::join_options options;
  options.eps = eps;
  options.engine = s.engine;
  options.precision = precision_of(s.precision);
  options.approximate = s.approximate;
  options.include_self = include_self;
  options.params = s.params;
  options.share = {s.share_index, s.share_count};
  set_geometry(s, options);
  options.progress = interrupt_check(report_of(s));
  return options;
}

void check_same_dtype(const epsjoin::dataset_view& a, const epsjoin::dataset_view& b) {
  if (a.type != b.type) {
    throw epsjoin::invalid_argument("the two point sets must have the same dtype");
  }
}

nb::tuple counts_result(const epsjoin::count_sink& sink, bool per_row, std::size_t n_queries,
                        const epsjoin::join_stats& stats, bool with_stats) {
  nb::object rows = nb::none();
  if (per_row) {
    auto counts = std::make_unique<std::vector<std::uint64_t>>(sink.per_point());
    if (counts->empty()) counts->assign(n_queries, 0);
    const std::size_t n = counts->size();
    std::uint64_t* p = counts->data();
    rows = numpy_view(p, {n}, owner_of(std::move(counts)));
  }
  return nb::make_tuple(nb::int_(sink.total()), rows,
                        with_stats ? nb::object(stats_dict(stats)) : nb::none());
}

namespace {

// The sink's table as numpy arrays that own it together: indptr, indices[, distances].
nb::list table_arrays(epsjoin::csr_sink& sink, std::size_t n_queries, bool with_distances) {
  auto table = std::make_unique<epsjoin::neighbor_table>(sink.release());
  if (table->offsets.empty()) table->offsets.assign(n_queries + 1, 0);
  const std::size_t rows = table->offsets.size();
  const std::size_t nnz = table->neighbors.size();
  std::uint64_t* offsets = table->offsets.data();
  std::uint32_t* neighbors = table->neighbors.data();
  double* distances = table->distances.data();
  nb::capsule owner = owner_of(std::move(table));
  nb::list arrays;
  arrays.append(numpy_view(offsets, {rows}, owner));
  arrays.append(numpy_view(neighbors, {nnz}, owner));
  if (with_distances) arrays.append(numpy_view(distances, {nnz}, owner));
  return arrays;
}

}  // namespace

nb::tuple table_result(epsjoin::csr_sink& sink, std::size_t n_queries,
                       const epsjoin::join_stats& stats, bool with_stats) {
  nb::list arrays = table_arrays(sink, n_queries, false);
  return nb::make_tuple(arrays[0], arrays[1],
                        with_stats ? nb::object(stats_dict(stats)) : nb::none());
}

nb::tuple distance_table_result(epsjoin::csr_sink& sink, std::size_t n_queries,
                                const epsjoin::join_stats& stats) {
  nb::list arrays = table_arrays(sink, n_queries, true);
  return nb::make_tuple(arrays[0], arrays[1], arrays[2], stats_dict(stats));
}

}  // namespace epsjoin_python
