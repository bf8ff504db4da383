// The PTX backend on host memory, for tests, the command line and quick use: copies in, runs,
// waits, checks (the CPU's message for bad input), copies out. Same signatures and bits as
// resample::cpu (minus the executor) for what the backend has (resample.hpp). Per-step code should
// call resample.hpp's functions on device memory instead.
#pragma once

#include <cstdint>
#include <span>

#include "resample/core/validate.hpp"
#include "resample/cuda/host.hpp"
#include "resample/ptx/resample.hpp"

namespace resample::ptx::host {

using cuda::host::device_vector;

/// One two-phase call: measures, allocates the temp storage, enqueues, waits and checks.
template <class Call>
void run(Call call) {
  std::size_t bytes = 0;
  call(static_cast<void*>(nullptr), bytes);
  const device_vector<char> temp(bytes);
  call(static_cast<void*>(temp.data()), bytes);
  (void)cuda::check_status(temp.data(), nullptr);
}

/// A draw's form, `op(temp, bytes, d_lw, n, d_out)` one of ptx::ancestors, offspring,
/// cumulative_offspring, permuted_ancestors: log-weights in, N indices out.
template <class T, class Index, class Op>
void draw(std::span<const T> lw, std::span<Index> out, Op op) {
  check_size<Index>(lw.size(), out.size());
  const device_vector<T> d_lw(lw);
  device_vector<Index> d_out(out.size());
  run([&](void* temp, std::size_t& bytes) { op(temp, bytes, d_lw.data(), lw.size(), d_out.data()); });
  d_out.copy_to(out);
}

template <class T, class Index>
void ancestors(scheme s, std::span<const T> lw, key k, std::uint32_t step, std::span<Index> a, const options& opt = {}) {
  draw(lw, a, [&](void* t, std::size_t& b, const T* x, std::size_t n, Index* y) {
    ptx::ancestors<T, Index>(t, b, s, x, n, k, step, y, opt);
  });
}

template <class T, class Index>
void offspring(scheme s, std::span<const T> lw, key k, std::uint32_t step, std::span<Index> o, const options& opt = {}) {
  draw(lw, o, [&](void* t, std::size_t& b, const T* x, std::size_t n, Index* y) {
    ptx::offspring<T, Index>(t, b, s, x, n, k, step, y, opt);
  });
}

template <class T, class Index>
void cumulative_offspring(scheme s, std::span<const T> lw, key k, std::uint32_t step, std::span<Index> O,
                          const options& opt = {}) {
  draw(lw, O, [&](void* t, std::size_t& b, const T* x, std::size_t n, Index* y) {
    ptx::cumulative_offspring<T, Index>(t, b, s, x, n, k, step, y, opt);
  });
}

template <class T, class Index>
void permuted_ancestors(scheme s, std::span<const T> lw, key k, std::uint32_t step, std::span<Index> c,
                        const options& opt = {}) {
  draw(lw, c, [&](void* t, std::size_t& b, const T* x, std::size_t n, Index* y) {
    ptx::permuted_ancestors<T, Index>(t, b, s, x, n, k, step, y, opt);
  });
}

/// Index -> Index conversions, `op(temp, bytes, in, n, out)` one of ptx::ancestors_to_offspring,
/// offspring_to_cumulative, cumulative_offspring_to_ancestors, permute.
template <class Index, class Op>
void convert(std::span<const Index> in, std::span<Index> out, Op op) {
  if (out.size() != in.size()) throw invalid_input("output has the wrong size");
  const device_vector<Index> d_in(in);
  device_vector<Index> d_out(out.size());
  run([&](void* temp, std::size_t& bytes) { op(temp, bytes, d_in.data(), in.size(), d_out.data()); });
  d_out.copy_to(out);
}

template <class Index>
void ancestors_to_offspring(std::span<const Index> a, std::span<Index> o) {
  convert(a, o, [](void* t, std::size_t& b, const Index* x, std::size_t n, Index* y) {
    ptx::ancestors_to_offspring<Index>(t, b, x, n, y);
  });
}
template <class Index>
void offspring_to_cumulative(std::span<const Index> o, std::span<Index> O) {
  convert(o, O, [](void* t, std::size_t& b, const Index* x, std::size_t n, Index* y) {
    ptx::offspring_to_cumulative<Index>(t, b, x, n, y);
  });
}
template <class Index>
void cumulative_offspring_to_ancestors(std::span<const Index> O, std::span<Index> a) {
  convert(O, a, [](void* t, std::size_t& b, const Index* x, std::size_t n, Index* y) {
    ptx::cumulative_offspring_to_ancestors<Index>(t, b, x, n, y);
  });
}
template <class Index>
void permute(std::span<const Index> a, std::span<Index> c) {
  convert(a, c, [](void* t, std::size_t& b, const Index* x, std::size_t n, Index* y) { ptx::permute<Index>(t, b, x, n, y); });
}

template <class T>
double log_sum_exp(std::span<const T> lw) {
  const device_vector<T> d_lw(lw);
  device_vector<double> d_out(1);
  run([&](void* temp, std::size_t& bytes) { ptx::log_sum_exp<T>(temp, bytes, d_lw.data(), lw.size(), d_out.data()); });
  double x = 0;
  d_out.copy_to(std::span<double>(&x, 1));
  return x;
}

template <class T>
double effective_sample_size(std::span<const T> lw) {
  const device_vector<T> d_lw(lw);
  device_vector<double> d_out(1);
  run([&](void* temp, std::size_t& bytes) {
    ptx::effective_sample_size<T>(temp, bytes, d_lw.data(), lw.size(), d_out.data());
  });
  double x = 0;
  d_out.copy_to(std::span<double>(&x, 1));
  return x;
}

}  // namespace resample::ptx::host
