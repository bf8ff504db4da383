// Bad input to the filter: each refusal names the parameter, the tick or the line, and nothing runs.
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "resample/bpf/linear_gaussian_model.hpp"
#include "resample/bpf/observations.hpp"
#include "resample/bpf/particle_filter.hpp"
#include "resample/bpf/sv_model.hpp"
#include "resample/cpu/executor.hpp"

namespace {

using resample::invalid_input;
using resample::bpf::linear_gaussian_model;
using resample::bpf::linear_gaussian_parameters;
using resample::bpf::sv_model;
using resample::bpf::sv_parameters;

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();

/// The message of the invalid_input that f throws (fails the test if it throws nothing).
template <class F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const invalid_input& e) {
    return e.what();
  }
  ADD_FAILURE() << "no invalid_input thrown";
  return "";
}

sv_parameters sv(double mu, double rho, double sigma, double nu_state, double nu_obs) {
  return {.mu = mu, .rho = rho, .sigma = sigma, .nu_state = nu_state, .nu_obs = nu_obs};
}

TEST(BpfBadInput, SvParametersAreChecked) {
  EXPECT_NE(refusal([] { sv_model(sv(-1, 1.0, 0.2, 0, 0)); }).find("rho = 1 is invalid"), std::string::npos);
  EXPECT_NE(refusal([] { sv_model(sv(-1, -1.5, 0.2, 0, 0)); }).find("rho = -1.5"), std::string::npos);
  EXPECT_NE(refusal([] { sv_model(sv(-1, nan, 0.2, 0, 0)); }).find("rho = nan"), std::string::npos);
  EXPECT_NE(refusal([] { sv_model(sv(-1, 0.9, 0.0, 0, 0)); }).find("sigma = 0 is invalid"), std::string::npos);
  EXPECT_NE(refusal([] { sv_model(sv(-1, 0.9, -0.1, 0, 0)); }).find("sigma = -0.1"), std::string::npos);
  EXPECT_NE(refusal([] { sv_model(sv(-1, 0.9, inf, 0, 0)); }).find("sigma = inf"), std::string::npos);
  EXPECT_NE(refusal([] { sv_model(sv(inf, 0.9, 0.1, 0, 0)); }).find("mu = inf"), std::string::npos);
  EXPECT_NE(refusal([] { sv_model(sv(-1, 0.9, 0.1, 2.0, 0)); }).find("nu_state = 2 is invalid"), std::string::npos);
  EXPECT_NE(refusal([] { sv_model(sv(-1, 0.9, 0.1, 1.0, 0)); }).find("nu_state = 1"), std::string::npos);
  EXPECT_NE(refusal([] { sv_model(sv(-1, 0.9, 0.1, 0, -3)); }).find("nu_obs = -3"), std::string::npos);
  EXPECT_NE(refusal([] { sv_model(sv(-1, 0.9, 0.1, 0, nan)); }).find("nu_obs = nan"), std::string::npos);
  // The edges that are legal.
  EXPECT_NO_THROW(sv_model(sv(-1, -0.999, 1e-9, 2.0000001, 0)));
  EXPECT_NO_THROW(sv_model(sv(-1, 0.0, 3.0, 0, 30)));
}

TEST(BpfBadInput, LinearGaussianParametersAreChecked) {
  auto lg = [](double rho, double sigma, double tau) {
    return linear_gaussian_model(linear_gaussian_parameters{.rho = rho, .sigma = sigma, .tau = tau});
  };
  EXPECT_NE(refusal([&] { lg(1.0, 1, 1); }).find("rho = 1"), std::string::npos);
  EXPECT_NE(refusal([&] { lg(0.5, 0, 1); }).find("sigma = 0"), std::string::npos);
  EXPECT_NE(refusal([&] { lg(0.5, 1, -2); }).find("tau = -2"), std::string::npos);
  EXPECT_NE(refusal([&] { lg(0.5, 1, nan); }).find("tau = nan"), std::string::npos);
}

TEST(BpfBadInput, FilterOptionsAreChecked) {
  const sv_model model(sv_parameters{});
  resample::cpu::serial ex;
  auto with = [&](std::size_t n, double threshold, double jitter) {
    resample::bpf::filter_options o;
    o.particles = n;
    o.ess_threshold = threshold;
    o.jitter = jitter;
    return o;
  };
  EXPECT_NE(refusal([&] { resample::bpf::particle_filter(model, ex, with(0, 0.5, 0)); }).find("N = 0"), std::string::npos);
  EXPECT_NE(refusal([&] { resample::bpf::particle_filter(model, ex, with(10, -0.1, 0)); }).find("ess_threshold = -0.1"),
            std::string::npos);
  EXPECT_NE(refusal([&] { resample::bpf::particle_filter(model, ex, with(10, nan, 0)); }).find("ess_threshold = nan"),
            std::string::npos);
  EXPECT_NE(refusal([&] { resample::bpf::particle_filter(model, ex, with(10, 0.5, -1)); }).find("jitter = -1"),
            std::string::npos);
  // Fast precision is the cuda filter's; the CPU filters are exact only.
  auto fast = with(10, 0.5, 0);
  fast.precision = resample::bpf::filter_precision::fast;
  EXPECT_EQ(refusal([&] { resample::bpf::particle_filter(model, ex, fast); }),
            "precision 'fast' runs on the cuda backend only (the CPU filters are exact)");
  // The resampler's exponentials follow the precision (options::fast_exp is set by 'fast' itself).
  auto own_fast_exp = with(10, 0.5, 0);
  own_fast_exp.resampling.fast_exp = true;
  EXPECT_EQ(refusal([&] { resample::bpf::particle_filter(model, ex, own_fast_exp); }),
            "filter_options::resampling.fast_exp is the filter's to set: precision 'fast' gives its resampler the "
            "GPU's approximate exp, precision 'exact' the CPU's bits");
}

// A non-finite observation is refused before any tick runs, naming its index.
TEST(BpfBadInput, NonFiniteObservationsAreNamed) {
  const sv_model model(sv_parameters{});
  resample::cpu::serial ex;
  const std::vector<double> y = {0.1, -0.3, 0.2, nan, 0.5};
  resample::bpf::filter_options o;
  o.particles = 100;
  try {
    resample::bpf::run_filter(model, ex, std::span<const double>(y), o);
    ADD_FAILURE() << "NaN observation accepted";
  } catch (const invalid_input& e) {
    EXPECT_NE(std::string(e.what()).find("observation 3 is nan"), std::string::npos) << e.what();
    EXPECT_EQ(e.index(), 3u);
  }
  resample::bpf::particle_filter pf(model, ex, o);
  pf.step(0.1);
  EXPECT_NE(refusal([&] { pf.step(inf); }).find("observation 1 is inf"), std::string::npos);
  EXPECT_EQ(pf.ticks(), 1u);  // the refused tick did not run
  const std::vector<double> truth(2, 0.0);
  EXPECT_NE(refusal([&] { resample::bpf::run_filter(model, ex, std::span<const double>(y), o, std::span<const double>(truth)); })
                .find("differ in length"),
            std::string::npos);
  EXPECT_NE(refusal([&] { resample::bpf::run_filter(model, ex, std::span<const double>(), o); }).find("T = 0"),
            std::string::npos);
}

TEST(BpfBadInput, DataFilesNameTheLine) {
  auto read = [](const std::string& text) {
    std::istringstream in(text);
    return resample::bpf::read_observations(in, "data.txt");
  };
  EXPECT_EQ(read("# returns\n0.5\n\n -1.25  # a comment\n3e-2\n"), (std::vector<double>{0.5, -1.25, 0.03}));
  EXPECT_NE(refusal([&] { read("0.5\n# x\nnan\n"); }).find("data.txt line 3: the observation is NaN"), std::string::npos);
  EXPECT_NE(refusal([&] { read("0.5\n1.0 2.0\n"); }).find("data.txt line 2: '1.0 2.0' is not one number"),
            std::string::npos);
  EXPECT_NE(refusal([&] { read("0.5\nx\n"); }).find("line 2: 'x'"), std::string::npos);
  EXPECT_NE(refusal([&] { read("inf\n"); }).find("line 1: the observation is infinite"), std::string::npos);
  EXPECT_NE(refusal([&] { read("1e999\n"); }).find("line 1: '1e999' is out of range"), std::string::npos);
  EXPECT_NE(refusal([&] { read("# nothing\n\n"); }).find("holds no observations"), std::string::npos);
}

}  // namespace
