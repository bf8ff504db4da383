// resample compare: every scheme (or those named) on one weight vector, R draws each; the time
// per call and the paper's metrics (bias^2, trace of the variance, MSE/N of the offspring).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.hpp"
#include "common.hpp"
#include "cpu_reference/ancestors_to_offspring.hpp"
#include "cpu_reference/paper_weights.hpp"
#include "resample/core/offspring_metrics.hpp"
#include "sampler.hpp"

namespace resample::cli {
namespace {

using clock_type = std::chrono::steady_clock;

constexpr flag_spec compare_flags[] = {
    {"n", "N", "number of particles of the generated weights (default 4096)"},
    {"y", "Y", "generated weights w = phi(x + Y), x ~ N(0, 1), as in the paper (default 2)"},
    {"reps", "R", "draws per scheme, at least 2 (default 1000)"},
    {"schemes", "LIST", "comma-separated schemes to compare (default: all the backend has)"},
    {"csv", "FILE", "also write the table as CSV to FILE"},
    input_flag, log_flag, seed_flag, backend_flag, threads_flag, eps_flag, steps_flag};

struct row {
  std::string scheme;
  double time_us;
  double bias2, var_trace, mse_per_n;
  std::size_t steps;  // Metropolis B, else 0
};

/// The schemes named by --schemes, or every scheme the backend has.
std::vector<scheme_choice> parse_scheme_list(const std::optional<std::string>& list, backend_kind backend) {
  std::vector<scheme_choice> out;
  if (!list) {
    if (backend == backend_kind::reference) {
      for (const auto s : reference::all_schemes) out.push_back(parse_scheme_on(std::string(reference::name(s)), backend));
    } else {
      for (const auto s : production_schemes) {
        out.push_back(parse_scheme_on(std::string(name(s)), backend));
      }
    }
    return out;
  }
  std::stringstream in(*list);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(parse_scheme_on(item, backend));
  if (out.empty()) throw usage_error("--schemes names no scheme");
  return out;
}

std::string format_table(const std::vector<row>& rows, const std::string& title) {
  std::ostringstream s;
  char line[256];
  s << "# " << title << '\n';
  std::snprintf(line, sizeof line, "%-20s %14s %12s %12s %12s %6s\n", "scheme", "time/call_us",
                "bias^2", "trace_var", "MSE/N", "B");
  s << line;
  for (const row& r : rows) {
    const std::string steps = r.steps ? std::to_string(r.steps) : "-";
    std::snprintf(line, sizeof line, "%-20s %14.2f %12.4e %12.4e %12.4e %6s\n",
                  r.scheme.c_str(), r.time_us, r.bias2, r.var_trace,
                  r.mse_per_n, steps.c_str());
    s << line;
  }
  s << "# bias^2 includes the noise of the mean, about trace_var / R; B: Metropolis steps\n";
  return s.str();
}

std::string format_csv(const std::vector<row>& rows, std::size_t n, std::size_t reps,
                       std::uint64_t seed, const std::string& backend) {
  std::ostringstream s;
  s.precision(10);
  s << "scheme,backend,n,reps,seed,time_us,bias2,var_trace,mse_per_n,steps\n";
  for (const row& r : rows) {
    s << r.scheme << ',' << backend << ',' << n << ',' << reps << ',' << seed << ',' << r.time_us
      << ',' << r.bias2 << ',' << r.var_trace << ',' << r.mse_per_n << ',' << r.steps << '\n';
  }
  return s.str();
}

int run_compare(const args& a) {
  const backend_kind backend = parse_backend(a);
  const std::vector<scheme_choice> schemes = parse_scheme_list(a.text("schemes"), backend);
  const unsigned threads = read_threads(a);
  const std::uint64_t reps = a.unsigned_integer("reps", 1000);
  if (reps < 2) throw usage_error("--reps must be at least 2 for compare");
  if (reps > 0xFFFFFFFFull) throw usage_error("--reps must be below 2^32 (draw r uses step r)");
  const std::uint64_t seed = a.unsigned_integer("seed", 0);
  reference::options opt = read_options(a);

  reference::weights w;
  std::string title;
  if (a.has("input") || a.has("log")) {
    if (a.has("n") || a.has("y")) throw usage_error("--n and --y generate weights; drop them with --input");
    w = read_weights(a, opt);
    title = "weights from " + a.text("input").value_or("standard input") + ", N = " + std::to_string(w.size());
  } else {
    const std::uint64_t n = a.unsigned_integer("n", 4096);
    if (n == 0) throw usage_error("--n must be at least 1");
    const double y = a.real("y", 2.0);
    auto weight_rng = make_urbg(seed, stream::weights);
    w = reference::weights::from_log(reference::paper_log_weights(n, y, weight_rng));
    std::ostringstream t;
    t << "weights phi(x + y), x ~ N(0,1), y = " << y << ", N = " << n;
    title = t.str();
  }
  title += "; " + std::to_string(reps) + " draws per scheme; seed " + std::to_string(seed) + "; backend " + backend_name(backend);
  std::ofstream csv;
  if (const auto path = a.text("csv")) {
    csv.open(*path);
    if (!csv) throw usage_error("cannot write '" + *path + "'");
  }

  const std::vector<double> expected = expected_offspring(w.linear);
  std::vector<row> rows;
  progress_line bar("compare");
  for (const scheme_choice& s : schemes) {
    sampler draws(backend, s, w, opt, seed, threads);
    offspring_metrics metrics(expected);
    double seconds = 0.0;
    for (std::uint64_t r = 0; r < reps; ++r) {
      const auto t0 = clock_type::now();
      const std::vector<std::size_t> anc = draws.draw(static_cast<std::uint32_t>(r));
      seconds += std::chrono::duration<double>(clock_type::now() - t0).count();
      metrics.add(reference::ancestors_to_offspring(anc));
      bar.update([&] {
        char text[96];
        std::snprintf(text, sizeof text, "%-18s %llu/%llu draws", s.name.c_str(), static_cast<unsigned long long>(r + 1),
                      static_cast<unsigned long long>(reps));
        return std::string(text);
      });
    }
    rows.push_back({s.name, 1e6 * seconds / static_cast<double>(reps), metrics.bias_squared(),
                    metrics.variance_trace(), metrics.mse_per_particle(), draws.steps()});
  }
  std::string out = format_table(rows, title);
  if (csv.is_open()) {
    csv << format_csv(rows, w.size(), reps, seed, backend_name(backend));
    if (!csv.flush()) throw std::runtime_error("cannot write the CSV file");
  }
  flush_stdout(out);
  return 0;
}

}  // namespace

const command compare_command{
    "compare", "[--n N] [--y Y] [--reps R] [--schemes LIST] [--csv FILE] [--input FILE [--log]]",
    "For each scheme, R independent draws on one weight vector (generated as in the paper, or read):\n"
    "the mean time per call and the paper's metrics of the offspring o against e_i = N w_i / W:\n"
    "bias^2 = sum_i (mean o_i - e_i)^2, trace_var = sum_i var(o_i), MSE/N = mean sum_i (o_i - e_i)^2 / N.",
    compare_flags, run_compare};

}  // namespace resample::cli
