// Flag parsing for the subcommands: `--name value`, `--name=value` and bare switches.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace resample::cli {

/// A mistake on the command line (unknown flag, missing or malformed value). Exit code 2.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct flag_spec {
  std::string_view name;  ///< without the leading "--"
  std::string_view value; ///< placeholder shown in help, empty for a switch
  std::string_view help;
};

class args {
 public:
  /// Parses argv (after the subcommand) against `spec`; throws usage_error naming the offender.
  args(std::string_view command, std::span<char* const> argv, std::span<const flag_spec> spec);

  [[nodiscard]] bool has(std::string_view name) const { return values_.count(std::string(name)) > 0; }
  [[nodiscard]] std::optional<std::string> text(std::string_view name) const;
  [[nodiscard]] std::uint64_t unsigned_integer(std::string_view name, std::uint64_t fallback) const;
  [[nodiscard]] double real(std::string_view name, double fallback) const;

 private:
  std::string command_;
  std::map<std::string, std::string> values_;
};

/// The usage block printed by `resample COMMAND --help`.
std::string help_text(std::string_view command, std::string_view synopsis, std::string_view about,
                      std::span<const flag_spec> spec);

}  // namespace resample::cli
