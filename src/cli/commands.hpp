// The subcommands of build/bin/resample. main() parses a command's flags, prints its help for
// --help, and otherwise calls run(); errors are thrown and become exit code 2.
#pragma once

#include <span>
#include <string_view>

#include "args.hpp"

namespace resample::cli {

struct command {
  std::string_view name;
  std::string_view synopsis;
  std::string_view about;
  std::span<const flag_spec> flags;
  int (*run)(const args&);
};

extern const command ancestors_command;  // draw.cpp
extern const command offspring_command;  // draw.cpp
extern const command permute_command;    // permute.cpp
extern const command compare_command;    // compare.cpp
extern const command bpf_command;        // bpf.cpp

}  // namespace resample::cli
