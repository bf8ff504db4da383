// A standalone SVG plot of a particle filter's per-tick results, written by `resample bpf` into
// its --out folder.
#pragma once

#include <string>
#include <vector>

namespace resample::cli {

struct filter_plot {
  std::string title;                 // e.g. "SV bootstrap filter, GBP/USD 1997-99, N = 16384"
  std::string observation_label;     // e.g. "y_t (percent log-return)"
  std::string state_label;           // e.g. "volatility exp(h_t / 2)"
  std::string band_label;            // e.g. "90% band: exp((mean ± 1.645 sd) / 2)"
  std::vector<double> observations;  // y_t, one per tick
  std::vector<double> state_mean;    // filtered estimate per tick (already transformed for display)
  std::vector<double> band_low;      // lower band per tick
  std::vector<double> band_high;     // upper band per tick
  std::vector<double> truth;         // true state per tick (same transform), or empty when unknown
  std::vector<bool> resampled;       // per tick, whether the filter resampled (may be empty)
};

/// Writes a two-panel SVG to `path`: top panel the observations (thin bars or a line), bottom panel
/// the filtered state with its band (filled polygon), the truth as a second line when given, and
/// small tick marks along the bottom axis at ticks where resampled[t] is true. Throws
/// std::runtime_error("cannot write plot to '<path>'") if the file cannot be written.
///
/// Non-finite values are left out (gaps in the lines and band). Beyond about 2000 ticks each pixel
/// column shows the min/max of the band and observations and the mean of the lines. Throws
/// std::invalid_argument naming the vector whose length does not match `observations`.
void write_filter_plot_svg(const std::string& path, const filter_plot& p);

}  // namespace resample::cli
