// The command line's cuda and ptx backends: the log-weights go to the device once per sampler; each
// draw runs on a kept workspace (cuda) or temp storage (ptx) and copies the ancestors back. Without CUDA in the build, the stubs
// below say so (parse_backend refuses `--backend cuda` before they could be reached).
#include "sampler.hpp"

#ifdef RESAMPLE_HAVE_CUDA
#include "resample/cuda/host.hpp"
#include "resample/ptx/resample.hpp"
#endif

namespace resample::cli {

#ifdef RESAMPLE_HAVE_CUDA
struct cuda_state {
  std::size_t n;
  cuda::host::device_vector<double> lw;
  cuda::host::device_vector<std::int64_t> a;
  cuda::workspace ws;
  bool ptx;
  cuda::host::device_vector<char> ptx_temp;  // grown on demand (its size depends on the scheme)
  std::size_t ptx_bytes = 0;
  std::vector<std::int64_t> host_a;
  cuda_state(const std::vector<double>& log_weights, bool on_ptx)
      : n(log_weights.size()), lw(std::span<const double>(log_weights)), a(n), ptx(on_ptx), host_a(n) {}
};

bool cuda_built() { return true; }
bool cuda_usable() {
  static const bool usable = cuda::device_available();
  return usable;
}
cuda_state* make_cuda_state(const std::vector<double>& log_weights, bool ptx) {
  return new cuda_state(log_weights, ptx);
}
void cuda_state_deleter::operator()(cuda_state* s) const { delete s; }

void cuda_draw(cuda_state& s, resample::scheme sch, key k, std::uint32_t step, const resample::options& opt,
               std::vector<std::size_t>& a) {
  if (s.ptx) {
    std::size_t bytes = 0;
    ptx::ancestors<double, std::int64_t>(nullptr, bytes, sch, s.lw.data(), s.n, k, step, s.a.data(), opt);
    if (bytes > s.ptx_bytes) {
      s.ptx_temp = cuda::host::device_vector<char>(bytes);
      s.ptx_bytes = bytes;
    }
    ptx::ancestors<double, std::int64_t>(s.ptx_temp.data(), s.ptx_bytes, sch, s.lw.data(), s.n, k, step, s.a.data(),
                                         opt);
    (void)cuda::check_status(s.ptx_temp.data(), nullptr);
  } else {
    s.ws.ancestors(sch, s.lw.data(), s.n, k, step, s.a.data(), opt);
    s.ws.check();
  }
  s.a.copy_to(std::span<std::int64_t>(s.host_a));
  for (std::size_t j = 0; j < s.n; ++j) a[j] = static_cast<std::size_t>(s.host_a[j]);
}
#else
struct cuda_state {};
bool cuda_built() { return false; }
bool cuda_usable() { return false; }
cuda_state* make_cuda_state(const std::vector<double>&, bool) { throw usage_error("this build has no cuda backend"); }
void cuda_state_deleter::operator()(cuda_state* s) const { delete s; }
void cuda_draw(cuda_state&, resample::scheme, key, std::uint32_t, const resample::options&, std::vector<std::size_t>&) {
  throw usage_error("this build has no cuda backend");
}
#endif

}  // namespace resample::cli
