// One resampling scheme on one backend, behind one call: draw(step) -> N ancestors.
//   cpu-parallel  (default) the exact core on a thread pool: the same bits as cpu
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

enum class backend_kind { reference, cpu, cpu_parallel };

/// A scheme as the command line names it.
struct scheme_choice {
  std::string name;
  resample::scheme s;
};

/// --backend (default cpu-parallel); throws usage_error for unknown names.
backend_kind parse_backend(const args& a);
std::string backend_name(backend_kind b);

/// Throws usage_error for an unknown scheme, or one the backend does not have (naming those that do).
scheme_choice parse_scheme_on(const std::string& name, backend_kind b);
std::string all_scheme_names();

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
  std::uint64_t steps_ = 0;
};

}  // namespace resample::cli
