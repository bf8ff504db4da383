// The three kinds of uniform draw the references need, from any uniform random bit generator.
#pragma once

#include <cstddef>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>

namespace resample::reference {

/// The generator the references use unless told otherwise (the paper's CPU choice, appendix E).
using default_urbg = boost::random::mt19937;

/// u ~ U[0, 1), as the paper writes it.
template <class URBG>
double uniform_closed_open(URBG& rng) {
  return boost::random::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

/// u ~ U(0, 1]. Used where u = 0 would select a zero weight (u <= w_j / w_max with w_j = 0) or
/// take log(0); P(u <= p) = p still holds.
template <class URBG>
double uniform_open_closed(URBG& rng) {
  return 1.0 - uniform_closed_open(rng);
}

/// j ~ U{0, ..., n - 1}, without modulo bias. Requires n >= 1.
template <class URBG>
std::size_t uniform_index(URBG& rng, std::size_t n) {
  return boost::random::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
}

}  // namespace resample::reference
