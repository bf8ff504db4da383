// The cuda particle filter against the CPU filter (its twin): the same states, weights and
// resampling decisions, and the same chunked sums (chunk_statistics.hpp), hence every output bit
// for bit: log-likelihood, increments, ESS, resampled flags, mean, sd and PIT. Each case runs the
// filter's CUDA C kernels and the PTX backend's (resample/ptx/filter.hpp: resample_bpf_move and
// the PTX resampler).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "backend_support.hpp"
#include "resample/bpf/chunk_statistics.hpp"
#include "resample/bpf/cuda_filter.hpp"
#include "resample/bpf/linear_gaussian_model.hpp"
#include "resample/bpf/simulate.hpp"
#include "resample/bpf/sv_model.hpp"
#include "resample/cpu/executor.hpp"
#include "resample/ptx/filter.hpp"

namespace {

using resample::bpf::filter_kind;
using resample::bpf::filter_options;

struct config {
  const char* name;
  bool sv;
  filter_kind kind;
  double threshold;
  resample::scheme scheme;
  double jitter;
  std::size_t n;
};

using resample::bpf::resampler_node;

/// The filter's per-particle kernels and resampler: CUDA C (null) or the PTX backend's.
template <class Model>
std::shared_ptr<resample::bpf::tick_kernels> kernels_for(const Model& model, bool ptx) {
  return ptx ? resample::ptx::tick_kernels_for(model) : nullptr;
}

class CudaFilter : public ::testing::TestWithParam<std::tuple<config, resampler_node, bool>> {
 protected:
  void SetUp() override { RESAMPLE_SKIP_WITHOUT_GPU(); }
};

template <class Model>
void expect_same_filter(const Model& model, const config& c, resampler_node node, bool ptx, std::size_t ticks = 40) {
  const auto data = resample::bpf::simulate(model, ticks, 5);
  filter_options opt;
  opt.particles = c.n;
  opt.seed = 0x123456789ull;
  opt.kind = c.kind;
  opt.ess_threshold = c.threshold;
  opt.resampler = c.scheme;
  opt.jitter = c.jitter;
  const auto y = std::span<const double>(data.observations);
  const auto truth = std::span<const double>(data.states);
  resample::cpu::parallel ex(4, 256);
  const auto cpu = resample::bpf::run_filter(model, ex, y, opt, truth);
  const auto gpu = resample::bpf::run_cuda_filter(model, y, opt, truth, nullptr, node, kernels_for(model, ptx));
  ASSERT_EQ(gpu.ticks.size(), y.size());
  EXPECT_EQ(cpu.log_likelihood, gpu.log_likelihood);
  std::size_t resampled = 0;
  for (std::size_t t = 0; t < y.size(); ++t) {
    const auto &a = cpu.ticks[t], &b = gpu.ticks[t];
    EXPECT_EQ(a.log_likelihood_increment, b.log_likelihood_increment) << "tick " << t;
    EXPECT_EQ(a.ess, b.ess) << "tick " << t;
    EXPECT_EQ(a.resampled, b.resampled) << "tick " << t;
    EXPECT_EQ(a.mean, b.mean) << "tick " << t;
    EXPECT_EQ(a.sd, b.sd) << "tick " << t;
    ASSERT_FALSE(std::isnan(b.pit)) << "tick " << t;  // the true states were given
    EXPECT_EQ(a.pit, b.pit) << "tick " << t;
    resampled += b.resampled;
  }
  if (c.threshold > 0) {
    EXPECT_GT(resampled, 0u);
  }
}

TEST_P(CudaFilter, SameBitsAsTheCpuFilter) {
  const auto [c, node, ptx] = GetParam();
  if (c.sv) {
    const double nu = c.scheme == resample::scheme::metropolis ? 0.0 : 5.0;  // one Gaussian SV case
    expect_same_filter(resample::bpf::sv_model({.mu = -4.5, .rho = 0.97, .sigma = 0.3, .nu_state = nu, .nu_obs = nu}),
                       c, node, ptx);
  } else {
    expect_same_filter(resample::bpf::linear_gaussian_model({.rho = 0.9, .sigma = 1.0, .tau = 1.0}), c, node, ptx);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Filters, CudaFilter,
    ::testing::Combine(::testing::Values(
        config{"sv_bootstrap_ess_systematic", true, filter_kind::bootstrap, 0.5, resample::scheme::systematic, 0, 10007},
        config{"sv_bootstrap_every_tick_stratified", true, filter_kind::bootstrap, 1.0, resample::scheme::stratified, 0, 4096},
        config{"sv_auxiliary_ess_jitter", true, filter_kind::auxiliary, 0.5, resample::scheme::systematic, 0.05, 3000},
        config{"sv_bootstrap_multinomial", true, filter_kind::bootstrap, 0.8, resample::scheme::multinomial, 0, 1000},
        config{"sv_bootstrap_metropolis", true, filter_kind::bootstrap, 0.8, resample::scheme::metropolis, 0, 1000},
        config{"sv_bootstrap_multinomial_sorted", true, filter_kind::bootstrap, 0.8,
               resample::scheme::multinomial_sorted, 0, 3000},
        config{"lg_bootstrap_residual", false, filter_kind::bootstrap, 0.6, resample::scheme::residual, 0, 5000},
        config{"lg_auxiliary_every_tick", false, filter_kind::auxiliary, 1.0, resample::scheme::systematic, 0, 70000},
        config{"lg_one_particle", false, filter_kind::bootstrap, 1.0, resample::scheme::systematic, 0, 1},
        config{"lg_never_resample", false, filter_kind::bootstrap, 0.0, resample::scheme::systematic, 0, 257}),
        // Every way of skipping the resampler (the gated one is what racecheck and synccheck run;
        // automatic gates it up to 8,192 particles for systematic and stratified).
        ::testing::Values(resampler_node::conditional, resampler_node::gated, resampler_node::automatic),
        ::testing::Bool()),  // the PTX kernels
    [](const auto& test) {
      return std::string(std::get<0>(test.param).name) +
             (std::get<1>(test.param) == resampler_node::gated         ? "_gated"
              : std::get<1>(test.param) == resampler_node::automatic ? "_automatic"
                                                                     : "_conditional") +
             (std::get<2>(test.param) ? "_ptx" : "");
    });

// A system of few chunks has each chunk moved by a cluster of 2, 4 or 8 blocks (blocks_per_chunk):
// every size the filter chooses on this GPU gives the CPU's bits, for the bootstrap filter and the
// auxiliary one (whose first stage runs on the clusters too), each at an N whose last chunk has 700
// particles (in a cluster of 8, blocks past the second move none), the last of them on one block
// per chunk. Gated, so that compute-sanitizer's synccheck runs it too (the conditional node
// launches the same kernels).
TEST(CudaFilterClusters, EveryClusterSizeGivesTheCpuBits) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  int device = 0, clusters = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, device), cudaSuccess);
  const resample::bpf::sv_model model({.mu = -4.5, .rho = 0.97, .sigma = 0.3, .nu_state = 5, .nu_obs = 5});
  std::vector<unsigned> tested;
  for (std::size_t chunks = 1; tested.empty() || tested.back() > 1; chunks += std::max<std::size_t>(1, chunks / 8)) {
    ASSERT_LE(chunks, 4096u) << "one block per chunk from some N on";
    filter_options opt;
    opt.particles = (chunks - 1) * resample::bpf::detail::chunk + 700;
    const unsigned blocks = resample::bpf::cuda_filter<resample::bpf::sv_model>(model, opt).blocks_per_chunk();
    ASSERT_TRUE(blocks == 1 || blocks == 2 || blocks == 4 || blocks == 8) << blocks;
    if (!tested.empty() && blocks == tested.back()) continue;
    ASSERT_TRUE(tested.empty() || blocks < tested.back()) << "fewer blocks per chunk as N grows";
    tested.push_back(blocks);
    std::cout << "N = " << opt.particles << ": " << blocks << " blocks per chunk\n";
    for (const auto kind : {filter_kind::bootstrap, filter_kind::auxiliary}) {
      SCOPED_TRACE(std::to_string(blocks) + " blocks per chunk, N = " + std::to_string(opt.particles) +
                   (kind == filter_kind::auxiliary ? ", auxiliary" : ", bootstrap"));
      expect_same_filter(model, config{"clusters", true, kind, 0.8, resample::scheme::systematic, 0, opt.particles},
                         resampler_node::gated, false, 12);
    }
  }
  if (clusters) {
    EXPECT_GE(tested.size(), 3u) << "an H100 or H200 runs clusters of 8, 4 and 2 blocks";
  } else {
    EXPECT_EQ(tested, std::vector<unsigned>{1u});
  }
}

TEST(CudaFilterInput, BadObservationsAndOptionsAreRefused) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const resample::bpf::sv_model model{resample::bpf::sv_parameters{}};
  filter_options opt;
  opt.particles = 100;
  const std::vector<double> y = {0.1, NAN, 0.2};
  EXPECT_THROW(resample::bpf::run_cuda_filter(model, std::span<const double>(y), opt), resample::invalid_input);
  opt.particles = 0;
  EXPECT_THROW(resample::bpf::cuda_filter<resample::bpf::sv_model>(model, opt), resample::invalid_input);
}

/// What the CPU filter, the cuda filter and the cuda filter with the PTX kernels refuse a run with
/// (empty where one runs through).
template <class Model>
std::tuple<std::string, std::string, std::string> refusals(const Model& model, const std::vector<double>& y,
                                                           const filter_options& opt) {
  std::tuple<std::string, std::string, std::string> messages;
  try {
    resample::bpf::run_filter(model, resample::cpu::serial{}, std::span<const double>(y), opt);
  } catch (const resample::invalid_input& e) {
    std::get<0>(messages) = e.what();
  }
  try {
    resample::bpf::run_cuda_filter(model, std::span<const double>(y), opt);
  } catch (const resample::invalid_input& e) {
    std::get<1>(messages) = e.what();
  }
  try {
    resample::bpf::run_cuda_filter(model, std::span<const double>(y), opt, {}, nullptr, resampler_node::conditional,
                                   resample::ptx::tick_kernels_for(model));
  } catch (const resample::invalid_input& e) {
    std::get<2>(messages) = e.what();
  }
  return messages;
}

// Weights that are all zero (y so large that every particle's density underflows) are refused with
// the CPU filter's message, not resampled from undrawn ancestors.
TEST(CudaFilterInput, AllZeroWeightsAreRefusedLikeOnTheCpu) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const resample::bpf::sv_model model{resample::bpf::sv_parameters{}};
  filter_options opt;
  opt.particles = 500;
  const std::vector<double> y = {0.1, 1e160, 0.2};
  const auto [cpu_message, gpu_message, ptx_message] = refusals(model, y, opt);
  EXPECT_EQ(cpu_message, "tick 1: every particle has zero weight");
  EXPECT_EQ(gpu_message, cpu_message);
  EXPECT_EQ(ptx_message, cpu_message);
}

// A resampler that refuses its input on the device (a rejection bound below a weight) is reported
// with the CPU's message, not left to write nothing unseen.
TEST(CudaFilterInput, ResamplerRefusalIsReportedLikeOnTheCpu) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const resample::bpf::sv_model model{resample::bpf::sv_parameters{}};
  filter_options opt;
  opt.particles = 300;
  opt.ess_threshold = 1.0;
  opt.resampler = resample::scheme::rejection;
  opt.resampling.rejection_log_bound = -50.0;
  const std::vector<double> y = {0.1, 0.2, 0.3};
  const auto [cpu_message, gpu_message, ptx_message] = refusals(model, y, opt);
  EXPECT_NE(cpu_message.find("rejection bound"), std::string::npos) << cpu_message;
  EXPECT_EQ(gpu_message, cpu_message);
  EXPECT_EQ(ptx_message, cpu_message);
}

// Ticks enqueued in several calls give the same as one call (the second call outgrows the first
// buffers, so the tick graphs are captured again, and the PTX kernels' arguments written again);
// ticks enqueued without true states have a NaN PIT even after others had them.
TEST(CudaFilterInput, EnqueueingInPiecesIsTheSame) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const resample::bpf::sv_model model{resample::bpf::sv_parameters{}};
  const std::size_t T = 101;
  const auto data = resample::bpf::simulate(model, T, 9);
  filter_options opt;
  opt.particles = 2000;
  const auto y = std::span<const double>(data.observations);
  const auto truth = std::span<const double>(data.states);
  const auto cpu = resample::bpf::run_filter(model, resample::cpu::serial{}, y, opt, truth);
  for (const bool ptx : {false, true}) {
    const std::string what = ptx ? "ptx kernels" : "CUDA C kernels";
    const auto node = resampler_node::conditional;
    const auto whole = resample::bpf::run_cuda_filter(model, y, opt, truth, nullptr, node, kernels_for(model, ptx));
    resample::bpf::cuda_filter<resample::bpf::sv_model> f(model, opt, nullptr, node, kernels_for(model, ptx));
    f.enqueue(y.first(7), truth.first(7));
    f.enqueue(y.subspan(7), truth.subspan(7));
    const auto pieces = f.collect();
    ASSERT_EQ(pieces.ticks.size(), T) << what;
    resample::bpf::cuda_filter<resample::bpf::sv_model> g(model, opt, nullptr, node, kernels_for(model, ptx));
    g.enqueue(y.first(10), truth.first(10));
    g.enqueue(y.subspan(10));
    const auto partial_truth = g.collect();
    EXPECT_FALSE(std::isnan(partial_truth.ticks[9].pit)) << what;
    EXPECT_TRUE(std::isnan(partial_truth.ticks[10].pit)) << what;
    EXPECT_EQ(partial_truth.log_likelihood, whole.log_likelihood) << what;
    EXPECT_EQ(whole.log_likelihood, pieces.log_likelihood) << what;
    for (std::size_t t = 0; t < T; ++t) {
      ASSERT_FALSE(std::isnan(whole.ticks[t].pit)) << t << ", " << what;
      EXPECT_EQ(whole.ticks[t].pit, pieces.ticks[t].pit) << t << ", " << what;
      EXPECT_EQ(whole.ticks[t].mean, pieces.ticks[t].mean) << t << ", " << what;
      EXPECT_EQ(whole.ticks[t].resampled, pieces.ticks[t].resampled) << t << ", " << what;
    }
    EXPECT_EQ(cpu.log_likelihood, whole.log_likelihood) << what;
  }
}

}  // namespace
