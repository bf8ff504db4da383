// The resampling schemes by name, and one call that runs any of them: the dispatch the command
// line and the tests share.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cpu_reference/cumulative_offspring_to_ancestors.hpp"
#include "cpu_reference/metropolis.hpp"
#include "cpu_reference/multinomial.hpp"
#include "cpu_reference/multinomial_sorted.hpp"
#include "cpu_reference/rejection.hpp"
#include "cpu_reference/residual.hpp"
#include "cpu_reference/ssp.hpp"
#include "cpu_reference/stratified.hpp"
#include "cpu_reference/systematic.hpp"
#include "cpu_reference/weights.hpp"
#include "resample/core/options.hpp"

namespace resample::reference {

// The library's one list of schemes (include/resample/core/options.hpp): every one has a reference
// here but Megopolis, which is not in the paper.
using resample::is_unbiased;
using resample::name;
using resample::scheme;

inline constexpr std::array all_schemes = {
    scheme::multinomial, scheme::multinomial_sorted, scheme::stratified, scheme::systematic,
    scheme::residual,    scheme::ssp,                scheme::metropolis, scheme::rejection};

/// Whether cpu_reference/ implements the scheme.
constexpr bool has_reference(scheme s) { return s != scheme::megopolis; }

inline std::optional<scheme> parse_scheme(std::string_view text) {
  for (const scheme s : all_schemes) {
    if (name(s) == text) return s;
  }
  return std::nullopt;
}

/// "multinomial, multinomial-sorted, ..." for error messages and --help.
inline std::string scheme_names() {
  std::string out;
  for (const scheme s : all_schemes) {
    if (!out.empty()) out += ", ";
    out += name(s);
  }
  return out;
}

/// Scheme parameters; unset ones take the article's defaults.
struct options {
  double metropolis_eps = 0.01;                 ///< B from the eps rule ...
  std::optional<std::size_t> metropolis_steps;  ///< ... unless B is given.
  std::optional<double> rejection_log_bound;    ///< ln w_bound; default: the largest log-weight.
};

/// The number of Metropolis steps B these options give for these weights.
inline std::size_t metropolis_steps_for(const weights& w, const options& opt) {
  return opt.metropolis_steps ? *opt.metropolis_steps : metropolis_steps(w.log, opt.metropolis_eps);
}

/// One draw of N ancestors (0-based) from the reference implementation of `s`.
template <class URBG = default_urbg>
std::vector<std::size_t> ancestors(scheme s, const weights& w, URBG& rng, const options& opt = {}) {
  switch (s) {
    case scheme::multinomial: return multinomial_ancestors(std::span<const double>(w.linear), rng);
    case scheme::multinomial_sorted:
      return multinomial_sorted_ancestors(std::span<const double>(w.linear), rng);
    case scheme::stratified:
      return cumulative_offspring_to_ancestors(
          stratified_cumulative_offspring(std::span<const double>(w.linear), rng));
    case scheme::systematic:
      return cumulative_offspring_to_ancestors(
          systematic_cumulative_offspring(std::span<const double>(w.linear), rng));
    case scheme::residual: return residual_ancestors(std::span<const double>(w.linear), rng);
    case scheme::ssp: return ssp_ancestors(std::span<const double>(w.linear), rng);
    case scheme::metropolis:
      return metropolis_ancestors(std::span<const double>(w.log), metropolis_steps_for(w, opt), rng);
    case scheme::rejection:
      return opt.rejection_log_bound
                 ? rejection_ancestors(std::span<const double>(w.log), *opt.rejection_log_bound, rng)
                 : rejection_ancestors(std::span<const double>(w.log), rng);
    case scheme::megopolis: break;
  }
  throw invalid_input("scheme '" + std::string(name(s)) + "' has no reference implementation");
}

}  // namespace resample::reference
