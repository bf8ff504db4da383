// Errors the library reports instead of resampling bad input.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>

namespace resample {

/// Thrown for input the library refuses: NaN or +inf log-weights, negative or non-finite linear
/// weights, all weights zero, N = 0, a rejection bound below the largest weight, and so on.
/// `what()` names the problem and, where there is one, the first offending index (0-based),
/// which `index()` also returns. Nothing is written to any output before it is thrown.
class invalid_input : public std::invalid_argument {
 public:
  explicit invalid_input(const std::string& message, std::optional<std::size_t> index = {})
      : std::invalid_argument(message), index_(index) {}

  [[nodiscard]] std::optional<std::size_t> index() const noexcept { return index_; }

 private:
  std::optional<std::size_t> index_;
};

}  // namespace resample
