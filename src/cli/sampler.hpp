// One resampling scheme on one backend, behind one call: draw(step) -> N ancestors.
//   cuda          (default where a GPU is present) the CUDA backend: the same bits as cpu
//   ptx           the hand-written PTX backend (systematic and stratified so far): the same bits
//   cpu-parallel  (default otherwise) the exact core on a thread pool: the same bits as cpu
//   cpu           the exact core, serial: a pure function of (weights, key, step)
//   reference     the serial references of cpu_reference/ (mt19937 from --seed; draws in sequence)
// The exact backends' key is (low 32 bits of --seed, high 32 bits); draw r uses step r.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "common.hpp"
#include "resample/core/options.hpp"
#include "resample/core/philox.hpp"
#include "resample/cpu/executor.hpp"

namespace resample::cli {

enum class backend_kind { reference, cpu, cpu_parallel, cuda, ptx };

/// A scheme as the command line names it.
struct scheme_choice {
  std::string name;
  resample::scheme s;
};

/// --backend (default cuda where this build has it and a GPU is present, else cpu-parallel);
/// throws usage_error for unknown names.
backend_kind parse_backend(const args& a);
std::string backend_name(backend_kind b);

/// Throws usage_error for an unknown scheme, or one the backend does not have (naming those that do).
scheme_choice parse_scheme_on(const std::string& name, backend_kind b);
std::string all_scheme_names();

/// The cuda (or ptx) backend's device buffers and workspace, kept across draws (sampler_cuda.cpp).
struct cuda_state;
struct cuda_state_deleter {
  void operator()(cuda_state* s) const;
};

/// Whether this build has the cuda backend, and whether a device is present.
bool cuda_built();
bool cuda_usable();
cuda_state* make_cuda_state(const std::vector<double>& log_weights, bool ptx);
void cuda_draw(cuda_state& s, resample::scheme sch, key k, std::uint32_t step, const resample::options& opt,
               std::vector<std::size_t>& a);

class sampler {
 public:
  sampler(backend_kind b, scheme_choice s, const reference::weights& w, const reference::options& opt,
          std::uint64_t seed, unsigned threads);
  std::vector<std::size_t> draw(std::uint32_t step);
  /// Metropolis/Megopolis B for these weights; 0 for other schemes.
  [[nodiscard]] std::uint64_t steps() const { return steps_; }

 private:
  backend_kind backend_;
  scheme_choice scheme_;
  const reference::weights& w_;
  reference::options ref_opt_;
  resample::options opt_;
  boost::random::mt19937 rng_;
  key key_;
  std::unique_ptr<cpu::parallel> pool_;
  std::unique_ptr<cuda_state, cuda_state_deleter> cuda_;
  std::uint64_t steps_ = 0;
};

}  // namespace resample::cli
