// resample bpf: the SV (or linear-Gaussian) particle filter on a data file or on data simulated
// from the model; prints `key: value` lines, writes a per-tick CSV and an SVG plot.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "common.hpp"
#include "input.hpp"
#include "plot_svg.hpp"
#include "resample/bpf/calibration.hpp"
#include "resample/bpf/kalman.hpp"
#include "resample/bpf/linear_gaussian_model.hpp"
#include "resample/bpf/observations.hpp"
#include "resample/bpf/particle_filter.hpp"
#include "resample/bpf/simulate.hpp"
#include "resample/bpf/sv_model.hpp"
#include "resample/cpu/executor.hpp"
#include "sampler.hpp"

#if defined(RESAMPLE_HAVE_CUDA)
#include "resample/bpf/cuda_filter.hpp"
#include "resample/ptx/filter.hpp"
#endif

namespace resample::cli {
namespace {

constexpr flag_spec bpf_flags[] = {
    {"model", "sv|lg", "stochastic volatility (default) or linear-Gaussian (exact Kalman likelihood printed beside)"},
    {"mu", "M", "sv: mean log-variance (default -1.02, Pitt & Shephard's GBP/USD fit)"},
    {"rho", "R", "persistence, |R| < 1 (default sv 0.9702, lg 0.9)"},
    {"sigma", "S", "state noise scale, > 0 (default sv 0.178, lg 1)"},
    {"nu-state", "V", "sv: state noise Student-t degrees of freedom, 0 = Gaussian (default) or > 2"},
    {"nu-obs", "V", "sv: observation noise Student-t degrees of freedom, 0 = Gaussian (default) or > 2"},
    {"tau", "T", "lg: observation noise sd, > 0 (default 1)"},
    {"data", "FILE", "observations, one per line, # comments (e.g. data/gbp_usd_1997_1999_returns.txt)"},
    {"simulate", "T", "instead of --data: simulate T ticks from the model (the true states go to the CSV)"},
    {"n", "N", "particles (default 16384)"},
    seed_flag,
    {"backend", "NAME", "cuda (default where a GPU is present), ptx (the cuda filter with its per-particle kernel and resampler in PTX), cpu-parallel (default otherwise) or cpu; the same states, weights and likelihood bits on all four (at --precision exact)"},
    threads_flag,
    {"scheme", "NAME", "resampling scheme (default systematic)"},
    {"ess-threshold", "X", "resample when ESS < X N (default 0.5; 1 = at every tick, 0 = never)"},
    {"filter", "KIND", "bootstrap (default) or auxiliary (Pitt & Shephard's first stage at the predicted state)"},
    {"jitter", "J", "add N(0, J^2) to resampled states (regularisation; changes the target; default 0)"},
    {"precision", "P", "exact (default: double particles, the same bits on every backend) or fast (backend cuda only: float particles, the GPU's approximate exp / log, in the resampler's weights too; statistically, not bitwise, the same filter)"},
    eps_flag,
    steps_flag,
    {"out", "DIR", "write DIR/bpf.csv and DIR/bpf.svg (default bpf_out)"}};

struct series {
  std::string source;
  std::vector<double> y;
  std::vector<double> truth;  // empty for real data
};

template <class Model>
series load_series(const args& a, const Model& model, std::uint64_t seed) {
  const auto file = a.text("data");
  const bool simulated = a.has("simulate");
  if (file && simulated) throw usage_error("give --data FILE or --simulate T, not both");
  if (!file && !simulated) throw usage_error("give --data FILE (e.g. data/gbp_usd_1997_1999_returns.txt) or --simulate T");
  if (file) {
    std::istringstream in(read_all(file));
    return {*file, bpf::read_observations(in, *file), {}};
  }
  const std::uint64_t ticks = a.unsigned_integer("simulate", 0);
  if (ticks == 0 || ticks > 100'000'000) throw usage_error("--simulate T needs 1 <= T <= 10^8");
  auto sim = bpf::simulate(model, static_cast<std::size_t>(ticks), seed);
  return {"simulated from the model (" + std::to_string(ticks) + " ticks, seed " + std::to_string(seed) + ")",
          std::move(sim.observations), std::move(sim.states)};
}

bpf::filter_options read_filter_options(const args& a, std::uint64_t seed) {
  bpf::filter_options o;
  o.particles = static_cast<std::size_t>(a.unsigned_integer("n", 16384));
  o.seed = seed;
  o.ess_threshold = a.real("ess-threshold", 0.5);
  o.jitter = a.real("jitter", 0.0);
  const std::string kind = a.text("filter").value_or("bootstrap");
  if (kind == "bootstrap") {
    o.kind = bpf::filter_kind::bootstrap;
  } else if (kind == "auxiliary") {
    o.kind = bpf::filter_kind::auxiliary;
  } else {
    throw usage_error("unknown --filter '" + kind + "' (bootstrap or auxiliary)");
  }
  const std::string precision = a.text("precision").value_or("exact");
  if (precision == "exact") {
    o.precision = bpf::filter_precision::exact;
  } else if (precision == "fast") {
    o.precision = bpf::filter_precision::fast;
  } else {
    throw usage_error("unknown --precision '" + precision + "' (exact or fast)");
  }
  o.resampler = parse_scheme_on(a.text("scheme").value_or("systematic"), backend_kind::cpu).s;
  const auto metropolis = read_options(a);  // --eps in (0, 1), --steps >= 1, checked as for `ancestors`
  o.resampling.metropolis_eps = metropolis.metropolis_eps;
  o.resampling.metropolis_steps = metropolis.metropolis_steps;
  return o;
}

std::string format_number(double x, int digits = 6) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, x);
  return text;
}

template <class Model>
int run_model(const args& a, const Model& model, const std::string& model_line, bool sv) {
  const std::uint64_t seed = a.unsigned_integer("seed", 0);
  const series data = load_series(a, model, seed);
  const bpf::filter_options opt = read_filter_options(a, seed);
  const backend_kind kind = parse_backend(a);
  if (kind == backend_kind::reference) {
    throw usage_error("backend 'reference' has no particle filter (cuda, ptx, cpu-parallel or cpu)");
  }
  const std::string backend = backend_name(kind);
  const unsigned threads = kind == backend_kind::cpu ? 1u : read_threads(a);
  const std::filesystem::path out_dir = a.text("out").value_or("bpf_out");

  // Check everything the run needs before it starts: the model (done), options, output folder.
  bpf::detail::check_filter_options(opt);
  if (opt.precision == bpf::filter_precision::fast && kind != backend_kind::cuda) {
    throw usage_error("--precision fast needs --backend cuda (backend '" + backend + "' is exact only)");
  }
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw usage_error("cannot create '" + out_dir.string() + "': " + ec.message());

  std::unique_ptr<cpu::parallel> pool;
  // Blocks of at least 1024 particles for the resampler and the gather: on the GPU machine's 16
  // cores a GBP/USD tick (N = 65536) took 1.84 ms with the default blocks, 0.86 and 1.25 ms with
  // these (three runs, session 5).
  if (kind == backend_kind::cpu_parallel) pool = std::make_unique<cpu::parallel>(threads, 1024);
  progress_line bar("bpf");
  const auto report = [&](std::size_t t) {
    bar.update([&] { return "tick " + std::to_string(t + 1) + "/" + std::to_string(data.y.size()); });
  };
  const auto y = std::span<const double>(data.y);
  bpf::filter_run run;
  double seconds = 0;
  const auto timed = [&](auto&& work) {
    const auto start = std::chrono::steady_clock::now();
    work();
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  if (kind == backend_kind::cuda || kind == backend_kind::ptx) {
#if defined(RESAMPLE_HAVE_CUDA)
    // ptx: the same filter with its per-particle kernels and resampler in PTX
    const auto kernels = kind == backend_kind::ptx ? ptx::tick_kernels_for(model) : nullptr;
    bpf::cuda_filter<Model> filter(model, opt, nullptr, bpf::resampler_node::automatic, kernels);  // not timed
    timed([&] {
      filter.enqueue(y, data.truth);
      run = filter.collect();
    });
#endif
  } else if (pool) {
    timed([&] { run = bpf::run_filter(model, *pool, y, opt, data.truth, report); });
  } else {
    timed([&] { run = bpf::run_filter(model, cpu::serial{}, y, opt, data.truth, report); });
  }

  // The per-tick CSV and the plot.
  const std::filesystem::path csv_path = out_dir / "bpf.csv", svg_path = out_dir / "bpf.svg";
  {
    std::ofstream csv(csv_path);
    csv << "t,y,mean,sd,ess,resampled,log_likelihood_increment" << (data.truth.empty() ? "" : ",true_state,pit")
        << '\n';
    csv.precision(10);
    for (std::size_t t = 0; t < run.ticks.size(); ++t) {
      const auto& k = run.ticks[t];
      csv << t << ',' << data.y[t] << ',' << k.mean << ',' << k.sd << ',' << k.ess << ',' << (k.resampled ? 1 : 0)
          << ',' << k.log_likelihood_increment;
      if (!data.truth.empty()) csv << ',' << data.truth[t] << ',' << k.pit;
      csv << '\n';
    }
    if (!csv) throw usage_error("cannot write '" + csv_path.string() + "'");
  }
  filter_plot plot;
  const auto display = [sv](double x) { return sv ? std::exp(0.5 * x) : x; };
  plot.title = std::string(sv ? "SV" : "Linear-Gaussian") + " " +
               (opt.kind == bpf::filter_kind::auxiliary ? "auxiliary" : "bootstrap") + " filter, " + data.source +
               ", N = " + std::to_string(opt.particles);
  plot.observation_label = sv ? "y_t (percent log-return)" : "y_t";
  plot.state_label = sv ? "volatility exp(E[h_t | y_0..t] / 2)" : "E[x_t | y_0..t]";
  plot.band_label = sv ? "exp((E h_t +- 1.645 sd) / 2)" : "E x_t +- 1.645 sd";
  plot.observations = data.y;
  for (std::size_t t = 0; t < run.ticks.size(); ++t) {
    const auto& k = run.ticks[t];
    plot.state_mean.push_back(display(k.mean));
    plot.band_low.push_back(display(k.mean - 1.645 * k.sd));
    plot.band_high.push_back(display(k.mean + 1.645 * k.sd));
    plot.resampled.push_back(k.resampled);
    if (!data.truth.empty()) plot.truth.push_back(display(data.truth[t]));
  }
  write_filter_plot_svg(svg_path.string(), plot);

  // The report.
  const double ticks = static_cast<double>(run.ticks.size());
  std::size_t resampled = 0;
  double ess_sum = 0;
  for (const auto& k : run.ticks) {
    resampled += k.resampled;
    ess_sum += k.ess;
  }
  std::ostringstream s;
  s << "model: " << model_line << '\n';
  s << "data: " << data.source << ", " << data.y.size() << " observations\n";
  s << "filter: " << (opt.kind == bpf::filter_kind::auxiliary ? "auxiliary" : "bootstrap") << ", "
    << opt.particles << " particles, scheme " << name(opt.resampler) << ", ess_threshold "
    << opt.ess_threshold << (opt.jitter > 0 ? ", jitter " + format_number(opt.jitter, 4) : "")
    << (opt.precision == bpf::filter_precision::fast ? ", precision fast" : "") << '\n';
  s << "backend: " << backend << (kind == backend_kind::cpu_parallel ? " (" + std::to_string(threads) + " threads)" : "")
    << ", seed " << seed << '\n';
  s << "log_likelihood: " << format_number(run.log_likelihood) << '\n';
  if constexpr (std::is_same_v<Model, bpf::linear_gaussian_model>) {
    s << "kalman_log_likelihood: " << format_number(bpf::kalman_filter(model, data.y).log_likelihood) << '\n';
  }
  s << "resampled_ticks: " << resampled << " of " << run.ticks.size() << '\n';
  s << "mean_ess: " << format_number(ess_sum / ticks, 1) << '\n';
  if (!data.truth.empty()) {
    double se = 0, inside = 0;
    std::vector<double> pit;
    for (std::size_t t = 0; t < run.ticks.size(); ++t) {
      se += (run.ticks[t].mean - data.truth[t]) * (run.ticks[t].mean - data.truth[t]);
      inside += run.ticks[t].pit >= 0.05 && run.ticks[t].pit <= 0.95;
      pit.push_back(run.ticks[t].pit);
    }
    s << "rmse_state: " << format_number(std::sqrt(se / ticks)) << '\n';
    s << "coverage_90: " << format_number(inside / ticks, 4) << '\n';
    s << "pit_ks_distance: " << format_number(bpf::ks_distance(pit), 4) << '\n';
  }
  s << "us_per_tick: " << format_number(1e6 * seconds / ticks, 1) << '\n';
  s << "particle_ticks_per_s: " << format_number(static_cast<double>(opt.particles) * ticks / seconds, 0) << '\n';
  s << "csv: " << csv_path.string() << '\n';
  s << "plot: " << svg_path.string() << '\n';
  std::string text = s.str();
  flush_stdout(text);
  return 0;
}

std::string parameter_line(std::initializer_list<std::pair<const char*, double>> values) {
  std::string line;
  for (const auto& [key, value] : values) {
    std::ostringstream v;
    v << value;
    line += (line.empty() ? "" : ", ") + std::string(key) + " " + v.str();
  }
  return line;
}

int run_bpf(const args& a) {
  const std::string model = a.text("model").value_or("sv");
  if (model == "sv") {
    if (a.has("tau")) throw usage_error("--tau belongs to --model lg");
    bpf::sv_parameters p;
    p.mu = a.real("mu", p.mu);
    p.rho = a.real("rho", p.rho);
    p.sigma = a.real("sigma", p.sigma);
    p.nu_state = a.real("nu-state", 0.0);
    p.nu_obs = a.real("nu-obs", 0.0);
    const bpf::sv_model m(p);
    return run_model(a, m,
                     "sv (" + parameter_line({{"mu", p.mu}, {"rho", p.rho}, {"sigma", p.sigma},
                                             {"nu_state", p.nu_state}, {"nu_obs", p.nu_obs}}) + ")",
                     true);
  }
  if (model == "lg") {
    for (const char* f : {"mu", "nu-state", "nu-obs"}) {
      if (a.has(f)) throw usage_error("--" + std::string(f) + " belongs to --model sv");
    }
    bpf::linear_gaussian_parameters p;
    p.rho = a.real("rho", p.rho);
    p.sigma = a.real("sigma", p.sigma);
    p.tau = a.real("tau", p.tau);
    const bpf::linear_gaussian_model m(p);
    return run_model(a, m, "lg (" + parameter_line({{"rho", p.rho}, {"sigma", p.sigma}, {"tau", p.tau}}) + ")", false);
  }
  throw usage_error("unknown --model '" + model + "' (sv or lg)");
}

}  // namespace

const command bpf_command{
    "bpf", "resample bpf (--data FILE | --simulate T) [--model sv|lg] [options]",
    "Runs the particle filter on the observations in FILE or on T ticks simulated from the model.\n"
    "Prints key: value lines (log_likelihood, us_per_tick, ...), writes DIR/bpf.csv (one row per\n"
    "tick) and DIR/bpf.svg (the filtered state with its band).",
    bpf_flags, run_bpf};

}  // namespace resample::cli
