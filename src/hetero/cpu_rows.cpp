#include "hetero/cpu_rows.hpp"

#include <type_traits>

namespace epsjoin::detail::hetero {

namespace fma_isa {
void join_items_f32(const host_join_view<float>&, std::uint32_t, std::uint32_t, cpu_rows&);
void join_items_f64(const host_join_view<double>&, std::uint32_t, std::uint32_t, cpu_rows&);
std::size_t keep_within_f32(const host_join_view<float>&, std::uint32_t, std::uint32_t*,
                            std::size_t);
std::size_t keep_within_f64(const host_join_view<double>&, std::uint32_t, std::uint32_t*,
                            std::size_t);
}  // namespace fma_isa
namespace generic_isa {
void join_items_f32(const host_join_view<float>&, std::uint32_t, std::uint32_t, cpu_rows&);
void join_items_f64(const host_join_view<double>&, std::uint32_t, std::uint32_t, cpu_rows&);
std::size_t keep_within_f32(const host_join_view<float>&, std::uint32_t, std::uint32_t*,
                            std::size_t);
std::size_t keep_within_f64(const host_join_view<double>&, std::uint32_t, std::uint32_t*,
                            std::size_t);
}  // namespace generic_isa

namespace {

bool has_fma() {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
  static const bool fma = __builtin_cpu_supports("fma");
  return fma;
#else
  return false;
#endif
}

}  // namespace

template <class T>
void join_items_on_cpu(const host_join_view<T>& v, std::uint32_t first, std::uint32_t end,
                       cpu_rows& out) {
  if constexpr (std::is_same_v<T, float>) {
    (has_fma() ? fma_isa::join_items_f32 : generic_isa::join_items_f32)(v, first, end, out);
  } else {
    (has_fma() ? fma_isa::join_items_f64 : generic_isa::join_items_f64)(v, first, end, out);
  }
}

template <class T>
std::size_t keep_within_on_cpu(const host_join_view<T>& v, std::uint32_t pos,
                               std::uint32_t* found, std::size_t m) {
  if constexpr (std::is_same_v<T, float>) {
    return (has_fma() ? fma_isa::keep_within_f32 : generic_isa::keep_within_f32)(v, pos, found, m);
  } else {
    return (has_fma() ? fma_isa::keep_within_f64 : generic_isa::keep_within_f64)(v, pos, found, m);
  }
}

template void join_items_on_cpu(const host_join_view<float>&, std::uint32_t, std::uint32_t,
                                cpu_rows&);
template void join_items_on_cpu(const host_join_view<double>&, std::uint32_t, std::uint32_t,
                                cpu_rows&);

template std::size_t keep_within_on_cpu(const host_join_view<float>&, std::uint32_t,
                                        std::uint32_t*, std::size_t);
template std::size_t keep_within_on_cpu(const host_join_view<double>&, std::uint32_t,
                                        std::uint32_t*, std::size_t);

}  // namespace epsjoin::detail::hetero
