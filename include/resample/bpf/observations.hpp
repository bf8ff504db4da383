// Reading a series of observations: one number per line, `#` starts a comment, blank lines are
// skipped. A line that is not one finite number is an error naming the line (1-based) and the text.
#pragma once

#include <charconv>
#include <cmath>
#include <istream>
#include <string>
#include <system_error>
#include <vector>

#include "resample/core/error.hpp"

namespace resample::bpf {

inline std::vector<double> read_observations(std::istream& in, const std::string& source = "input") {
  std::vector<double> y;
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const auto last = line.find_last_not_of(" \t\r");
    const std::string word = line.substr(first, last - first + 1);
    const auto where = source + " line " + std::to_string(number) + ": ";
    double v = 0;
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
    if (ec == std::errc::result_out_of_range) throw invalid_input(where + "'" + word + "' is out of range", y.size());
    if (ec != std::errc() || end != word.data() + word.size()) {
      throw invalid_input(where + "'" + word + "' is not one number", y.size());
    }
    if (std::isnan(v)) throw invalid_input(where + "the observation is NaN", y.size());
    if (std::isinf(v)) throw invalid_input(where + "the observation is infinite", y.size());
    y.push_back(v);
  }
  if (in.bad()) throw invalid_input("cannot read " + source);
  if (y.empty()) throw invalid_input(source + " holds no observations");
  return y;
}

}  // namespace resample::bpf
