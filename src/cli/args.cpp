#include "args.hpp"

#include <charconv>
#include <cmath>
#include <sstream>

namespace resample::cli {

args::args(std::string_view command, std::span<char* const> argv, std::span<const flag_spec> spec)
    : command_(command) {
  for (std::size_t k = 0; k < argv.size(); ++k) {
    std::string_view word = argv[k];
    if (!word.starts_with("--") || word.size() == 2) {
      throw usage_error("unexpected argument '" + std::string(word) + "' for '" + command_ +
                        "' (see resample " + command_ + " --help)");
    }
    word.remove_prefix(2);
    std::optional<std::string> inline_value;
    if (const auto eq = word.find('='); eq != std::string_view::npos) {
      inline_value = std::string(word.substr(eq + 1));
      word = word.substr(0, eq);
    }
    const flag_spec* found = nullptr;
    for (const flag_spec& f : spec) {
      if (f.name == word) found = &f;
    }
    if (found == nullptr) {
      throw usage_error("unknown flag --" + std::string(word) + " for '" + command_ +
                        "' (see resample " + command_ + " --help)");
    }
    std::string value;
    if (!found->value.empty()) {
      if (inline_value) {
        value = *inline_value;
      } else if (k + 1 < argv.size()) {
        value = argv[++k];
      } else {
        throw usage_error("flag --" + std::string(word) + " needs a value " +
                          std::string(found->value));
      }
    } else if (inline_value) {
      throw usage_error("flag --" + std::string(word) + " takes no value");
    }
    values_[std::string(word)] = value;
  }
}

std::optional<std::string> args::text(std::string_view name) const {
  const auto it = values_.find(std::string(name));
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::uint64_t args::unsigned_integer(std::string_view name, std::uint64_t fallback) const {
  const auto value = text(name);
  if (!value) return fallback;
  std::uint64_t out = 0;
  const char* end = value->data() + value->size();
  const auto [ptr, ec] = std::from_chars(value->data(), end, out);
  if (ec != std::errc() || ptr != end || value->empty()) {
    throw usage_error("--" + std::string(name) + " expects a non-negative integer, got '" +
                      *value + "'");
  }
  return out;
}

double args::real(std::string_view name, double fallback) const {
  const auto value = text(name);
  if (!value) return fallback;
  double out = 0;
  const bool plus = value->starts_with('+') && !value->substr(1).starts_with('-');
  const char* begin = value->data() + (plus ? 1 : 0);
  const char* end = value->data() + value->size();
  const auto [ptr, ec] = std::from_chars(begin, end, out);
  if (ec != std::errc() || ptr != end || begin == end || !std::isfinite(out)) {
    throw usage_error("--" + std::string(name) + " expects a finite number, got '" + *value + "'");
  }
  return out;
}

std::string help_text(std::string_view command, std::string_view synopsis, std::string_view about,
                      std::span<const flag_spec> spec) {
  std::ostringstream s;
  s << "usage: resample " << command << ' ' << synopsis << "\n\n" << about << "\n\noptions:\n";
  for (const flag_spec& f : spec) {
    std::string left = "  --" + std::string(f.name);
    if (!f.value.empty()) left += ' ' + std::string(f.value);
    s << left;
    s << std::string(left.size() < 24 ? 24 - left.size() : 1, ' ') << f.help << '\n';
  }
  s << "  --help                show this help\n";
  return s.str();
}

}  // namespace resample::cli
