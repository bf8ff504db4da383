// resample ancestors / resample offspring: R independent draws of one scheme, one line each.
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "cpu_reference/ancestors_to_offspring.hpp"
#include "sampler.hpp"

namespace resample::cli {
namespace {

constexpr flag_spec scheme_flag{"scheme", "NAME", "multinomial, multinomial-sorted, stratified, systematic, residual, ssp, metropolis, megopolis or rejection (default systematic)"};
constexpr flag_spec reps_flag{"reps", "R", "print R independent draws, one per line (default 1)"};
constexpr flag_spec draw_flags[] = {scheme_flag, reps_flag, input_flag, log_flag, seed_flag,
                                backend_flag, threads_flag, eps_flag, steps_flag, bound_flag};

int run_draws(const args& a, bool offspring) {
  const backend_kind backend = parse_backend(a);
  const scheme_choice s = parse_scheme_on(a.text("scheme").value_or("systematic"), backend);
  const std::uint64_t reps = a.unsigned_integer("reps", 1);
  if (reps == 0) throw usage_error("--reps must be at least 1");
  if (reps > 0xFFFFFFFFull) throw usage_error("--reps must be below 2^32 (draw r uses step r)");
  reference::options opt = read_options(a);
  const reference::weights w = read_weights(a, opt);
  sampler draws(backend, s, w, opt, a.unsigned_integer("seed", 0), read_threads(a));

  // Every check is done: from here on nothing fails but the write itself.
  std::string out;
  for (std::uint64_t r = 0; r < reps; ++r) {
    const std::vector<std::size_t> anc = draws.draw(static_cast<std::uint32_t>(r));
    append_line(out, offspring ? reference::ancestors_to_offspring(anc) : anc);
    if (out.size() > (1u << 20)) flush_stdout(out);
  }
  flush_stdout(out);
  return 0;
}

int run_ancestors(const args& a) { return run_draws(a, false); }
int run_offspring(const args& a) { return run_draws(a, true); }

}  // namespace

const command ancestors_command{
    "ancestors", "[--scheme NAME] [--reps R] [--log] [--input FILE] [--seed S]",
    "Reads N weights (whitespace-separated; '#' comments) and prints R lines, each the N ancestors\n"
    "(0-based) of one independent resampling draw.",
    draw_flags, run_ancestors};

const command offspring_command{
    "offspring", "[--scheme NAME] [--reps R] [--log] [--input FILE] [--seed S]",
    "As ancestors, but each line holds the N offspring counts o^i = #{j : a^j = i}, which sum to N.",
    draw_flags, run_offspring};

}  // namespace resample::cli
