// Pieces the subcommands share: the generator from --seed, weights from the input, the scheme
// options, the backend check, and fast line output.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

#include <boost/random/mersenne_twister.hpp>

#include "args.hpp"
#include "cpu_reference/schemes.hpp"
#include "cpu_reference/weights.hpp"

namespace resample::cli {

/// Independent uses of one --seed (resampling, generating weights) get separate streams.
enum class stream : std::uint32_t { resampling = 1, weights = 2 };

/// mt19937 seeded through a seed sequence from all 64 bits of `seed` and the stream number.
boost::random::mt19937 make_urbg(std::uint64_t seed, stream s);

// Flags the resampling subcommands share.
inline constexpr flag_spec backend_flag{"backend", "NAME", "cuda (default where a GPU is present), ptx (the hand-written PTX kernels: systematic and stratified so far), cpu-parallel (default otherwise: exact, threads), cpu (exact, serial) or reference (the paper's serial code); cuda, ptx and cpu* give the same bits"};
inline constexpr flag_spec threads_flag{"threads", "T", "cpu-parallel: number of threads (default: all cores)"};
inline constexpr flag_spec seed_flag{"seed", "S", "random seed, 0 to 2^64-1 (default 0)"};
inline constexpr flag_spec input_flag{"input", "FILE", "read weights from FILE (default: standard input)"};
inline constexpr flag_spec log_flag{"log", "", "the input holds log-weights (-inf is a zero weight)"};
inline constexpr flag_spec eps_flag{"eps", "E", "metropolis: B = ceil(ln E / ln(1 - mean w / max w)) (default 0.01)"};
inline constexpr flag_spec steps_flag{"steps", "B", "metropolis: use B steps instead of the eps rule"};
inline constexpr flag_spec bound_flag{"bound", "W", "rejection: upper bound on the weights, in the input's scale (default: the maximum)"};


/// Weights from --input FILE (or stdin), linear or, with --log, log-weights; validated, and with
/// the rejection bound of opt checked against them (and, for linear input, set from --bound).
reference::weights read_weights(const args& a, reference::options& opt);

/// --threads (default: the number of cores; at least 1).
unsigned read_threads(const args& a);

/// --eps, --steps and --bound (with --log; a linear --bound is set by read_weights).
reference::options read_options(const args& a);

/// Appends "v0 v1 ... v{n-1}\n" to `out`.
void append_line(std::string& out, std::span<const std::size_t> values);

/// Writes `out` to stdout and clears it; throws if the write fails.
void flush_stdout(std::string& out);

/// Progress on stderr once a run has taken a second, at most twice a second: "command: text, 3.5 s",
/// rewritten in place ('\r') on a terminal, one line each otherwise.
class progress_line {
 public:
  explicit progress_line(std::string command);
  progress_line(const progress_line&) = delete;
  progress_line& operator=(const progress_line&) = delete;
  ~progress_line();
  /// `describe()` is called only when a line is due, so callers may format freely.
  template <class Describe>
  void update(Describe&& describe) {
    if (due()) show(describe());
  }

 private:
  bool due();
  void show(const std::string& text);
  std::string command_;
  std::chrono::steady_clock::time_point start_, last_;
  bool tty_;
  bool shown_ = false;
};

}  // namespace resample::cli
