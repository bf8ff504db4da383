#include "input.hpp"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string_view>

#include "args.hpp"
#include "resample/core/error.hpp"

namespace resample::cli {
namespace {

/// Calls visit(token, line_number) for each whitespace-separated token, skipping '#' comments.
template <class Visit>
void for_each_token(const std::string& text, Visit visit) {
  std::size_t line = 1;
  std::size_t k = 0;
  while (k < text.size()) {
    const char c = text[k];
    if (c == '\n') {
      ++line;
      ++k;
    } else if (c == '#') {
      while (k < text.size() && text[k] != '\n') ++k;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++k;
    } else {
      const std::size_t start = k;
      while (k < text.size() && !std::isspace(static_cast<unsigned char>(text[k])) && text[k] != '#') ++k;
      visit(std::string_view(text).substr(start, k - start), line);
    }
  }
}

std::string quoted(std::string_view token) {
  constexpr std::size_t shown = 40;
  return "'" + std::string(token.substr(0, shown)) + (token.size() > shown ? "...'" : "'");
}

}  // namespace

std::string read_all(const std::optional<std::string>& path) {
  if (!path) {
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  std::ifstream in(*path, std::ios::binary);
  if (!in) throw usage_error("cannot open '" + *path + "': " + std::strerror(errno));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<double> parse_numbers(const std::string& text) {
  std::vector<double> out;
  for_each_token(text, [&](std::string_view token, std::size_t line) {
    double value = 0;
    // from_chars takes no '+'; strip one, but not from "+-1".
    const bool plus = token.starts_with('+') && !token.substr(1).starts_with('-');
    const char* begin = token.data() + (plus ? 1 : 0);
    const char* end = token.data() + token.size();
    const auto [ptr, ec] = std::from_chars(begin, end, value);
    // Out-of-range magnitudes (1e999) come back as result_out_of_range: they are +-inf or 0 in
    // double, and are reported as such by the weight checks rather than as text.
    if (ptr != end || begin == end || (ec != std::errc() && ec != std::errc::result_out_of_range)) {
      throw invalid_input("line " + std::to_string(line) + ": " + quoted(token) +
                              " is not a number (index " + std::to_string(out.size()) + ")",
                          out.size());
    }
    if (ec == std::errc::result_out_of_range) {
      const bool negative = token.starts_with('-');
      const bool tiny = token.find_first_of("eE") != std::string_view::npos &&
                        token.substr(token.find_first_of("eE") + 1).starts_with('-');
      value = tiny ? (negative ? -0.0 : 0.0)
                   : (negative ? -std::numeric_limits<double>::infinity()
                               : std::numeric_limits<double>::infinity());
    }
    out.push_back(value);
  });
  return out;
}

std::vector<std::vector<std::size_t>> parse_ancestor_lines(const std::string& text) {
  std::vector<std::vector<std::size_t>> lines;
  std::vector<std::size_t> line_numbers;
  for_each_token(text, [&](std::string_view token, std::size_t line) {
    if (line_numbers.empty() || line != line_numbers.back()) {
      lines.emplace_back();
      line_numbers.push_back(line);
    }
    std::size_t value = 0;
    const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (ec != std::errc() || ptr != token.data() + token.size()) {
      throw invalid_input("line " + std::to_string(line) + ": " + quoted(token) +
                              " is not a non-negative integer (index " +
                              std::to_string(lines.back().size()) + ")",
                          lines.back().size());
    }
    lines.back().push_back(value);
  });
  for (std::size_t k = 0; k < lines.size(); ++k) {
    const std::size_t n = lines[k].size();
    for (std::size_t i = 0; i < n; ++i) {
      if (lines[k][i] >= n) {
        throw invalid_input("line " + std::to_string(line_numbers[k]) + ": ancestor " +
                                std::to_string(lines[k][i]) + " at index " + std::to_string(i) +
                                " is outside [0, " + std::to_string(n) + ")",
                            i);
      }
    }
  }
  return lines;
}

}  // namespace resample::cli
