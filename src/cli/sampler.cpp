#include "sampler.hpp"

#include <thread>

#include "resample/cpu/resample.hpp"

namespace resample::cli {

backend_kind parse_backend(const args& a) {
  const auto given = a.text("backend");
  if (!given) return cuda_usable() ? backend_kind::cuda : backend_kind::cpu_parallel;
  const std::string& name = *given;
  if (name == "reference") return backend_kind::reference;
  if (name == "cpu") return backend_kind::cpu;
  if (name == "cpu-parallel") return backend_kind::cpu_parallel;
  if (name == "cuda") {
    if (!cuda_built()) throw usage_error("backend 'cuda' is not in this build (no CUDA compiler was found)");
    if (!cuda_usable()) throw usage_error("backend 'cuda': no usable CUDA device on this machine");
    return backend_kind::cuda;
  }
  if (name == "ptx") {
    if (!cuda_built()) throw usage_error("backend 'ptx' is not in this build (no CUDA compiler was found)");
    if (!cuda_usable()) throw usage_error("backend 'ptx': no usable CUDA device on this machine");
    return backend_kind::ptx;
  }
  throw usage_error("unknown backend '" + name + "' (this build has: reference, cpu, cpu-parallel" +
                    (cuda_built() ? ", cuda, ptx)" : ")"));
}

std::string backend_name(backend_kind b) {
  switch (b) {
    case backend_kind::reference: return "reference";
    case backend_kind::cpu: return "cpu";
    case backend_kind::cpu_parallel: return "cpu-parallel";
    case backend_kind::cuda: return "cuda";
    case backend_kind::ptx: return "ptx";
  }
  return "?";
}

std::string all_scheme_names() {
  std::string out;
  for (const auto s : production_schemes) out += (out.empty() ? "" : ", ") + std::string(name(s));
  return out;
}

scheme_choice parse_scheme_on(const std::string& name, backend_kind b) {
  std::optional<resample::scheme> found;
  for (const auto s : production_schemes) {
    if (resample::name(s) == name) found = s;
  }
  if (!found) throw usage_error("unknown scheme '" + name + "' (one of: " + all_scheme_names() + ")");
  if (b == backend_kind::reference && !reference::has_reference(*found)) {
    throw usage_error("scheme '" + name + "' has no reference implementation (use --backend cpu or cpu-parallel)");
  }
  return {name, *found};
}

sampler::sampler(backend_kind b, scheme_choice s, const reference::weights& w, const reference::options& opt,
                 std::uint64_t seed, unsigned threads)
    : backend_(b),
      scheme_(std::move(s)),
      w_(w),
      ref_opt_(opt),
      rng_(make_urbg(seed, stream::resampling)),
      key_{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)} {
  opt_.metropolis_eps = opt.metropolis_eps;
  opt_.metropolis_steps = opt.metropolis_steps;
  opt_.rejection_log_bound = opt.rejection_log_bound;
  if (b == backend_kind::cpu_parallel) pool_ = std::make_unique<cpu::parallel>(threads);
  if (b == backend_kind::cuda || b == backend_kind::ptx) cuda_.reset(make_cuda_state(w_.log, b == backend_kind::ptx));
  const bool metropolis_type = scheme_.name == "metropolis" || scheme_.name == "megopolis";
  if (metropolis_type && b == backend_kind::reference) steps_ = reference::metropolis_steps_for(w_, ref_opt_);
  if (metropolis_type && b != backend_kind::reference) {
    steps_ = cpu::metropolis_steps(cpu::summarise(cpu::serial{}, std::span<const double>(w_.log)), w_.size(), opt_);
  }
}

std::vector<std::size_t> sampler::draw(std::uint32_t step) {
  if (backend_ == backend_kind::reference) return reference::ancestors(scheme_.s, w_, rng_, ref_opt_);
  std::vector<std::size_t> a(w_.size());
  const std::span<const double> lw(w_.log);
  if (cuda_) {
    cuda_draw(*cuda_, scheme_.s, key_, step, opt_, a);
  } else if (pool_) {
    cpu::ancestors(*pool_, scheme_.s, lw, key_, step, std::span<std::size_t>(a), opt_);
  } else {
    cpu::ancestors(cpu::serial{}, scheme_.s, lw, key_, step, std::span<std::size_t>(a), opt_);
  }
  return a;
}

}  // namespace resample::cli
