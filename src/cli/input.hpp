// Reading weights and ancestor vectors from a file or standard input.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace resample::cli {

/// The whole of `path`, or of standard input when there is none. Throws a clear message for a
/// file that cannot be opened.
std::string read_all(const std::optional<std::string>& path);

/// Whitespace-separated numbers ('#' starts a comment that runs to the end of its line). "nan" and
/// "inf" parse, so that the library can name them; anything else that is not a number is an error
/// naming the line and the 0-based index. Values are not checked here.
std::vector<double> parse_numbers(const std::string& text);

/// One ancestor vector per non-blank line, each entry a non-negative integer below the line's
/// length. Errors name the line and the index.
std::vector<std::vector<std::size_t>> parse_ancestor_lines(const std::string& text);

}  // namespace resample::cli
