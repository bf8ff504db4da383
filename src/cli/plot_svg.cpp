#include "plot_svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string_view>

namespace resample::cli {
namespace {

// Page layout in pixels; the state panel gets about two thirds of the plotting height.
constexpr double page_width = 1000, page_height = 600;
constexpr double plot_left = 72, plot_right = page_width - 20;
constexpr double obs_top = 48, obs_bottom = 190;
constexpr double state_top = 215, state_bottom = 545;
constexpr std::size_t max_points = 2000;
constexpr const char* font = "Helvetica, Arial, 'DejaVu Sans', 'Liberation Sans', sans-serif";

struct range {
  double lo, hi;
};

struct axis {
  double lo, hi, step;
};

/// The per-tick values of one pixel column (or one tick, when there are few enough to show all).
struct column {
  double x;  // tick index of the column's centre
  double obs_lo, obs_hi, band_lo, band_hi, mean, truth;
  bool resampled;
};

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// Astronomically large values are dropped with the non-finite ones, so that spans, padding and
// tick arithmetic cannot overflow.
bool plottable(double v) { return std::isfinite(v) && std::abs(v) < 1e300; }

double map(double v, range from, range to) { return to.lo + (v - from.lo) / (from.hi - from.lo) * (to.hi - to.lo); }

std::string coord(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string tick_label(double v, double step) {
  if (std::abs(v) < step * 1e-6) v = 0;  // no "-0.0" from rounding
  const int decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step) + 1e-9)));
  char buf[64];
  if (decimals > 5 || std::abs(v) >= 1e9) std::snprintf(buf, sizeof buf, "%.4g", v);  // keep labels short
  else std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else out += c;
  }
  return out;
}

std::size_t utf8_length(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

void check_length(const char* name, std::size_t size, std::size_t ticks, bool may_be_empty) {
  if (size == ticks || (may_be_empty && size == 0)) return;
  throw std::invalid_argument(std::string("filter plot: ") + name + " has " + std::to_string(size) +
                              " entries but observations has " + std::to_string(ticks));
}

/// A value range covering the plottable data, widened when it is a single value so the axis has a span.
range data_range(std::initializer_list<double column::*> members, const std::vector<column>& columns) {
  range r{std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  for (const column& c : columns)
    for (const auto m : members)
      if (plottable(c.*m)) r = {std::min(r.lo, c.*m), std::max(r.hi, c.*m)};
  if (r.lo > r.hi) return {0, 1};
  if (r.hi - r.lo <= 1e-9 * std::max(std::abs(r.lo), std::abs(r.hi))) {
    const double pad = r.lo != 0 ? std::abs(r.lo) * 0.1 : 1;
    r = {r.lo - pad, r.hi + pad};
  }
  return r;
}

/// Picks a 1/2/5 x 10^k step giving 4-6 ticks where it can, then the tightest fit. With `extend`
/// the axis grows to whole steps (the y axes); otherwise it keeps the data range (the tick axis).
axis nice_axis(range r, bool extend, double min_step) {
  const double span = r.hi - r.lo;
  axis best{r.lo, r.hi, std::max(min_step, span)};
  double best_score = std::numeric_limits<double>::infinity();
  const int k0 = static_cast<int>(std::floor(std::log10(span / 5)));
  for (int k = k0 - 1; k <= k0 + 1; ++k) {
    for (const double mantissa : {1.0, 2.0, 5.0}) {
      const double step = mantissa * std::pow(10.0, k);
      if (step < min_step) continue;
      const double lo = extend ? std::floor(r.lo / step + 1e-9) * step : r.lo;
      const double hi = extend ? std::ceil(r.hi / step - 1e-9) * step : r.hi;
      const double ticks = std::floor(hi / step + 1e-9) - std::ceil(lo / step - 1e-9) + 1;
      const double miss = ticks < 4 ? 2 * (4 - ticks) : ticks > 6 ? ticks - 6 : 0;  // 3 ticks read worse than 7
      const double score = 10 * miss + (hi - lo) / span;
      if (score < best_score) best_score = score, best = {lo, hi, step};
    }
  }
  return best;
}

std::vector<double> tick_values(const axis& a) {
  std::vector<double> ticks;
  // The cap guards against a degenerate step (e.g. underflow near the smallest doubles) looping forever.
  for (double i = std::ceil(a.lo / a.step - 1e-9); i * a.step <= a.hi + a.step * 1e-9 && ticks.size() < 50; ++i)
    ticks.push_back(i * a.step);
  return ticks;
}

/// Running mean, so that summing many large values cannot overflow.
void accumulate_mean(double& mean, std::size_t& count, double v) {
  if (!plottable(v)) return;
  ++count;
  mean = count == 1 ? v : mean + (v - mean) / static_cast<double>(count);
}

std::vector<column> summarise(const filter_plot& p, std::size_t columns) {
  const std::size_t ticks = p.observations.size();
  std::vector<column> out;
  for (std::size_t b = 0; b < columns; ++b) {
    const std::size_t first = b * ticks / columns, last = (b + 1) * ticks / columns;
    if (first == last) continue;
    column c{0.5 * static_cast<double>(first + last - 1), nan, nan, nan, nan, nan, nan, false};
    std::size_t mean_count = 0, truth_count = 0;
    for (std::size_t t = first; t < last; ++t) {
      if (const double y = p.observations[t]; plottable(y)) {
        c.obs_lo = std::isnan(c.obs_lo) ? y : std::min(c.obs_lo, y);
        c.obs_hi = std::isnan(c.obs_hi) ? y : std::max(c.obs_hi, y);
      }
      if (plottable(p.band_low[t])) c.band_lo = std::isnan(c.band_lo) ? p.band_low[t] : std::min(c.band_lo, p.band_low[t]);
      if (plottable(p.band_high[t])) c.band_hi = std::isnan(c.band_hi) ? p.band_high[t] : std::max(c.band_hi, p.band_high[t]);
      accumulate_mean(c.mean, mean_count, p.state_mean[t]);
      if (!p.truth.empty()) accumulate_mean(c.truth, truth_count, p.truth[t]);
      if (!p.resampled.empty() && p.resampled[t]) c.resampled = true;
    }
    out.push_back(c);
  }
  return out;
}

/// "M x y L x y ..." through the plottable values, starting a new piece after each gap. A piece of
/// one point would draw nothing, so it gets a short dash.
std::string line_path(const std::vector<column>& cs, double column::*m, range xd, range yd, range yp) {
  std::string d;
  std::size_t piece = 0;
  for (const column& c : cs) {
    if (!plottable(c.*m)) {
      if (piece == 1) d += " m-3 0 h6";
      piece = 0;
      continue;
    }
    d += (piece > 0 ? " L" : " M") + coord(map(c.x, xd, {plot_left, plot_right})) + ' ' + coord(map(c.*m, yd, yp));
    ++piece;
  }
  if (piece == 1) d += " m-3 0 h6";
  return d;
}

/// One closed polygon per run of columns with both band edges: along the top, back along the bottom.
std::string band_path(const std::vector<column>& cs, range xd, range yd, range yp) {
  std::string d;
  for (std::size_t i = 0; i < cs.size();) {
    if (!plottable(cs[i].band_lo) || !plottable(cs[i].band_hi)) { ++i; continue; }
    std::size_t j = i;
    while (j < cs.size() && plottable(cs[j].band_lo) && plottable(cs[j].band_hi)) ++j;
    const double widen = j - i == 1 ? 3 : 0;  // a lone column would otherwise have no area
    std::string back;
    for (std::size_t k = i; k < j; ++k) {
      const double x = map(cs[k].x, xd, {plot_left, plot_right});
      d += (k == i ? " M" : " L") + coord(x - widen) + ' ' + coord(map(cs[k].band_hi, yd, yp));
      if (widen > 0) d += " L" + coord(x + widen) + ' ' + coord(map(cs[k].band_hi, yd, yp));
      back = " L" + coord(x + widen) + ' ' + coord(map(cs[k].band_lo, yd, yp)) + back;
      if (widen > 0) back += " L" + coord(x - widen) + ' ' + coord(map(cs[k].band_lo, yd, yp));
    }
    d += back + " Z";
    i = j;
  }
  return d;
}

/// Bars from the zero line (or the nearest edge of the axis) out to each column's extreme values.
std::string bar_path(const std::vector<column>& cs, range xd, const axis& ya, range yp) {
  const double base = std::clamp(0.0, ya.lo, ya.hi);
  std::string d;
  for (const column& c : cs) {
    if (!plottable(c.obs_lo)) continue;
    d += " M" + coord(map(c.x, xd, {plot_left, plot_right})) + ' ' + coord(map(std::min(c.obs_lo, base), {ya.lo, ya.hi}, yp)) +
         " V" + coord(map(std::max(c.obs_hi, base), {ya.lo, ya.hi}, yp));
  }
  return d;
}

void y_axis(std::string& svg, const axis& a, double top, double bottom) {
  for (const double v : tick_values(a)) {
    const std::string y = coord(map(v, {a.lo, a.hi}, {bottom, top}));
    svg += "<line x1=\"" + coord(plot_left) + "\" x2=\"" + coord(plot_right) + "\" y1=\"" + y + "\" y2=\"" + y +
           "\" class=\"grid\"/>\n<text x=\"" + coord(plot_left - 6) + "\" y=\"" + y +
           "\" dy=\"4\" text-anchor=\"end\">" + tick_label(v, a.step) + "</text>\n";
  }
  svg += "<rect x=\"" + coord(plot_left) + "\" y=\"" + coord(top) + "\" width=\"" + coord(plot_right - plot_left) +
         "\" height=\"" + coord(bottom - top) + "\" class=\"frame\"/>\n";
}

void x_axis(std::string& svg, const axis& a) {
  for (const double v : tick_values(a)) {
    const std::string x = coord(map(v, {a.lo, a.hi}, {plot_left, plot_right}));
    for (const auto [top, bottom] : {range{obs_top, obs_bottom}, range{state_top, state_bottom}})
      svg += "<line x1=\"" + x + "\" x2=\"" + x + "\" y1=\"" + coord(top) + "\" y2=\"" + coord(bottom) + "\" class=\"grid\"/>\n";
    svg += "<text x=\"" + x + "\" y=\"" + coord(state_bottom + 18) + "\" text-anchor=\"middle\">" + tick_label(v, a.step) +
           "</text>\n";
  }
  svg += "<text x=\"" + coord((plot_left + plot_right) / 2) + "\" y=\"" + coord(state_bottom + 40) +
         "\" text-anchor=\"middle\">tick</text>\n";
}

void legend(std::string& svg, const filter_plot& p, bool any_resampled) {
  struct entry {
    std::string swatch, label;
  };
  std::vector<entry> entries{{"<line x1=\"0\" x2=\"22\" y1=\"0\" y2=\"0\" class=\"mean\"/>", p.state_label},
                             {"<rect x=\"0\" y=\"-5\" width=\"22\" height=\"10\" class=\"band\"/>", p.band_label}};
  if (!p.truth.empty()) entries.push_back({"<line x1=\"0\" x2=\"22\" y1=\"0\" y2=\"0\" class=\"truth\"/>", "truth"});
  if (any_resampled) entries.push_back({"<line x1=\"11\" x2=\"11\" y1=\"-5\" y2=\"5\" class=\"resample\"/>", "resampled"});
  std::size_t longest = 0;
  for (const entry& e : entries) longest = std::max(longest, utf8_length(e.label));
  const double x = plot_left + 10, y = state_top + 10;
  svg += "<rect x=\"" + coord(x) + "\" y=\"" + coord(y) + "\" width=\"" + coord(44 + 6.8 * static_cast<double>(longest)) +
         "\" height=\"" + coord(8 + 18 * static_cast<double>(entries.size())) + "\" class=\"legend\"/>\n";
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string row = coord(y + 13 + 18 * static_cast<double>(i));
    svg += "<g transform=\"translate(" + coord(x + 8) + ',' + row + ")\">" + entries[i].swatch + "<text x=\"30\" dy=\"4\">" +
           escape(entries[i].label) + "</text></g>\n";
  }
}

}  // namespace

void write_filter_plot_svg(const std::string& path, const filter_plot& p) {
  const std::size_t ticks = p.observations.size();
  check_length("state_mean", p.state_mean.size(), ticks, false);
  check_length("band_low", p.band_low.size(), ticks, false);
  check_length("band_high", p.band_high.size(), ticks, false);
  check_length("truth", p.truth.size(), ticks, true);
  check_length("resampled", p.resampled.size(), ticks, true);

  // Past max_points, one column per pixel keeps the file small without hiding extremes.
  const auto pixels = static_cast<std::size_t>(plot_right - plot_left);
  const std::vector<column> cs = summarise(p, ticks > max_points ? pixels : ticks);
  const bool any_resampled = std::any_of(cs.begin(), cs.end(), [](const column& c) { return c.resampled; });

  // Tick t sits at the centre of its slot, so a single tick is drawn in the middle.
  const range xd{-0.5, static_cast<double>(std::max<std::size_t>(ticks, 1)) - 0.5};
  const axis xa = nice_axis(xd, false, 1);
  const axis obs_axis = nice_axis(data_range({&column::obs_lo, &column::obs_hi}, cs), true, 0);
  const axis state_axis =
      nice_axis(data_range({&column::band_lo, &column::band_hi, &column::mean, &column::truth}, cs), true, 0);
  const range obs_pixels{obs_bottom, obs_top}, state_pixels{state_bottom, state_top};
  const range state_data{state_axis.lo, state_axis.hi};

  std::string svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    coord(page_width) + "\" height=\"" + coord(page_height) + "\" viewBox=\"0 0 " + coord(page_width) +
                    ' ' + coord(page_height) + "\" font-family=\"" + font + "\" font-size=\"12\" fill=\"#333\">\n";
  svg += "<style>.grid{stroke:#e6e6e6;stroke-width:1}.frame{fill:none;stroke:#888;stroke-width:1}"
         ".band{fill:#9ecae1;fill-opacity:0.6;stroke:none}.mean{fill:none;stroke:#08519c;stroke-width:1.5;"
         "stroke-linecap:round;stroke-linejoin:round}.truth{fill:none;stroke:#000;stroke-width:0.8;stroke-linecap:round}"
         ".obs{fill:none;stroke:#999;stroke-width:1}.resample{stroke:#d95f0e;stroke-width:1}"
         ".legend{fill:#fff;fill-opacity:0.85;stroke:#ccc}</style>\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n";
  svg += "<text x=\"" + coord(page_width / 2) + "\" y=\"26\" text-anchor=\"middle\" font-size=\"16\" font-weight=\"bold\">" +
         escape(p.title) + "</text>\n";
  svg += "<text x=\"" + coord(plot_left) + "\" y=\"" + coord(obs_top - 6) + "\">" + escape(p.observation_label) + "</text>\n";

  y_axis(svg, obs_axis, obs_top, obs_bottom);
  y_axis(svg, state_axis, state_top, state_bottom);
  x_axis(svg, xa);

  svg += "<path class=\"obs\" d=\"" + bar_path(cs, xd, obs_axis, obs_pixels) + "\"/>\n";
  svg += "<path class=\"band\" d=\"" + band_path(cs, xd, state_data, state_pixels) + "\"/>\n";
  if (!p.truth.empty()) svg += "<path class=\"truth\" d=\"" + line_path(cs, &column::truth, xd, state_data, state_pixels) + "\"/>\n";
  svg += "<path class=\"mean\" d=\"" + line_path(cs, &column::mean, xd, state_data, state_pixels) + "\"/>\n";
  std::string marks;
  for (const column& c : cs)
    if (c.resampled) marks += " M" + coord(map(c.x, xd, {plot_left, plot_right})) + ' ' + coord(state_bottom) + " v-6";
  svg += "<path class=\"resample\" d=\"" + marks + "\"/>\n";
  legend(svg, p, any_resampled);
  svg += "</svg>\n";

  std::ofstream file(path, std::ios::binary);
  file << svg;
  file.close();
  if (!file) throw std::runtime_error("cannot write plot to '" + path + "'");
}

}  // namespace resample::cli
