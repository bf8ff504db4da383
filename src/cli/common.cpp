#include "common.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <thread>
#include <unistd.h>

#include <boost/random/seed_seq.hpp>

#include "input.hpp"

namespace resample::cli {

boost::random::mt19937 make_urbg(std::uint64_t seed, stream s) {
  boost::random::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                              static_cast<std::uint32_t>(s)};
  return boost::random::mt19937(seq);
}

unsigned read_threads(const args& a) {
  const std::uint64_t t = a.unsigned_integer("threads", std::max(1u, std::thread::hardware_concurrency()));
  if (t == 0 || t > 1024) throw usage_error("--threads must lie in 1..1024");
  return static_cast<unsigned>(t);
}

reference::weights read_weights(const args& a, reference::options& opt) {
  const std::vector<double> values = parse_numbers(read_all(a.text("input")));
  if (a.has("log")) {
    reference::weights w = reference::weights::from_log(values);
    if (opt.rejection_log_bound) reference::validate_rejection_bound(w.log, *opt.rejection_log_bound);
    return w;
  }
  reference::weights w = reference::weights::from_linear(values);
  if (a.has("bound")) {  // a linear bound, checked and reported in the input's scale
    const double bound = a.real("bound", 0.0);
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (values[i] > bound) {
        throw invalid_input("rejection bound " + detail::format_value(bound) + " is below the weight " +
                                detail::format_value(values[i]) + " at index " + std::to_string(i),
                            i);
      }
    }
    // from_linear divided the weights by their maximum; the bound follows.
    opt.rejection_log_bound = std::log(bound / *std::max_element(values.begin(), values.end()));
  }
  return w;
}

reference::options read_options(const args& a) {
  reference::options opt;
  opt.metropolis_eps = a.real("eps", opt.metropolis_eps);
  if (!(opt.metropolis_eps > 0.0 && opt.metropolis_eps < 1.0)) {
    throw usage_error("--eps must lie in (0, 1)");
  }
  if (a.has("steps")) {
    opt.metropolis_steps = a.unsigned_integer("steps", 1);
    if (*opt.metropolis_steps == 0) throw usage_error("--steps must be at least 1");
  }
  if (a.has("bound")) {
    const double bound = a.real("bound", 0.0);
    if (a.has("log")) {
      opt.rejection_log_bound = bound;
    } else if (!(bound > 0.0)) {
      throw usage_error("--bound must be a positive weight");
    }  // a linear bound is applied by read_weights, which knows the weights' scale
  }
  return opt;
}

void append_line(std::string& out, std::span<const std::size_t> values) {
  char buffer[24];
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out.push_back(' ');
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, values[i]);
    out.append(buffer, result.ptr);
  }
  out.push_back('\n');
}

void flush_stdout(std::string& out) {
  const bool written = out.empty() || std::fwrite(out.data(), 1, out.size(), stdout) == out.size();
  if (!written || std::fflush(stdout) != 0) {
    throw std::runtime_error("cannot write to standard output");
  }
  out.clear();
}

progress_line::progress_line(std::string command)
    : command_(std::move(command)), start_(std::chrono::steady_clock::now()), last_(start_),
      tty_(isatty(fileno(stderr)) != 0) {}

progress_line::~progress_line() {
  if (shown_ && tty_) std::fputc('\n', stderr);
}

bool progress_line::due() {
  const auto now = std::chrono::steady_clock::now();
  if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::milliseconds(500)) return false;
  last_ = now;
  return true;
}

void progress_line::show(const std::string& text) {
  const double elapsed = std::chrono::duration<double>(last_ - start_).count();
  std::fprintf(stderr, "%s%s: %s, %.1f s%s", tty_ ? "\r" : "", command_.c_str(), text.c_str(), elapsed, tty_ ? "   " : "\n");
  std::fflush(stderr);
  shown_ = true;
}

}  // namespace resample::cli
