// resample permute: ancestor vectors in, each permuted so that o^i > 0 implies a^i = i.
#include "commands.hpp"
#include "common.hpp"
#include "cpu_reference/permute_parallel.hpp"
#include "cpu_reference/permute_serial.hpp"
#include "input.hpp"
#include "sampler.hpp"

namespace resample::cli {
namespace {

constexpr flag_spec permute_flags[] = {
    {"input", "FILE", "read ancestor vectors, one per line, from FILE (default: standard input)"},
    {"method", "NAME", "parallel: Code 7, the library's permute (default); serial: Code 6"},
    backend_flag};

int run_permute(const args& a) {
  (void)parse_backend(a);  // every backend gives the same permutation (Code 7's deterministic semantics)
  const std::string method = a.text("method").value_or("parallel");
  if (method != "parallel" && method != "serial") {
    throw usage_error("unknown permute method '" + method + "' (parallel or serial)");
  }
  const auto lines = parse_ancestor_lines(read_all(a.text("input")));
  if (lines.empty()) throw invalid_input("no ancestor vectors in the input");
  std::string out;
  for (const auto& ancestors : lines) {
    append_line(out, method == "parallel" ? reference::permute_parallel(ancestors)
                                          : reference::permute_serial(ancestors));
  }
  flush_stdout(out);
  return 0;
}

}  // namespace

const command permute_command{
    "permute", "[--input FILE] [--method parallel|serial]",
    "Reads ancestor vectors (0-based, one per line) and prints each permuted so that every particle\n"
    "with offspring is its own ancestor: o^i > 0 implies a^i = i (condition (9) of the paper).",
    permute_flags, run_permute};

}  // namespace resample::cli
