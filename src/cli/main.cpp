// build/bin/resample: one program, subcommands (DESIGN.md section 10). Errors go to stderr with exit
// code 2, and nothing is printed on stdout before every check has passed.
#include <cstdio>
#include <exception>
#include <iostream>
#include <span>
#include <string_view>

#include "commands.hpp"

namespace {

constexpr const resample::cli::command* commands[] = {
    &resample::cli::ancestors_command, &resample::cli::offspring_command,
    &resample::cli::permute_command, &resample::cli::compare_command, &resample::cli::bpf_command};

void print_usage(std::FILE* to) {
  std::fputs(
      "usage: resample COMMAND [options]   (resample COMMAND --help for its options)\n\n"
      "commands:\n"
      "  ancestors   resample weights, print ancestor vectors\n"
      "  offspring   resample weights, print offspring counts\n"
      "  permute     permute ancestor vectors so that o^i > 0 implies a^i = i\n"
      "  compare     time and bias^2 / variance / MSE of every scheme over repeated draws\n"
      "  bpf         the SV (or linear-Gaussian) particle filter on data or a simulation\n",
      to);
}

}  // namespace

int main(int argc, char** argv) {
  const std::span<char* const> all(argv, static_cast<std::size_t>(argc));
  if (all.size() < 2) {
    print_usage(stderr);
    return 2;
  }
  const std::string_view name = all[1];
  if (name == "--help" || name == "-h" || name == "help") {
    print_usage(stdout);
    return std::fflush(stdout) == 0 ? 0 : 2;
  }
  try {
    for (const auto* c : commands) {
      if (c->name != name) continue;
      const auto rest = all.subspan(2);
      for (const char* word : rest) {
        if (std::string_view(word) == "--help" || std::string_view(word) == "-h") {
          std::cout << resample::cli::help_text(c->name, c->synopsis, c->about, c->flags) << std::flush;
          if (!std::cout) {
            std::cerr << "resample: error: cannot write to standard output\n";
            return 2;
          }
          return 0;
        }
      }
      return c->run(resample::cli::args(c->name, rest, c->flags));
    }
    std::cerr << "resample: error: unknown command '" << name << "'\n";
    print_usage(stderr);
    return 2;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "resample: error: " << e.what() << '\n';
    return 2;
  }
}
