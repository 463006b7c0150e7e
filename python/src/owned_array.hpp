#pragma once
// numpy arrays over memory the library filled: a capsule owns the C++ container, so handing a
// table of billions of ids to Python costs no copy, and numpy frees it with the last view.

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <initializer_list>
#include <memory>

namespace epsjoin_python {

namespace nb = nanobind;

template <class Container>
nb::capsule owner_of(std::unique_ptr<Container> container) {
  return nb::capsule(container.release(),
                     [](void* p) noexcept { delete static_cast<Container*>(p); });
}

template <class T>
nb::object numpy_view(T* data, std::initializer_list<std::size_t> shape, nb::handle owner) {
  return nb::cast(nb::ndarray<nb::numpy, T>(data, shape, owner));
}

}  // namespace epsjoin_python
