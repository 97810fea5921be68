#ifndef MROPE_TESTS_TESTING_ROTARY_TESTING_H_
#define MROPE_TESTS_TESTING_ROTARY_TESTING_H_

// Test helpers shared by the rotary tests, the rotary CLI test and the kernel test (testonly).

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace mrope {
namespace testing {

// Number of float32 values strictly between a and b, plus one if they differ (0 when equal,
// +0 and -0 count as equal). Non-finite values are "infinitely" far (INT64_MAX) unless equal.
int64_t UlpDistance(float a, float b);

// Absolute path of a repository directory in the test's runfiles (e.g. "tests/golden/x"),
// from TEST_SRCDIR and TEST_WORKSPACE.
std::string RunfilesPath(const std::string& repo_relative);

// The *.json files directly in `dir`, sorted. Empty if the directory cannot be read.
std::vector<std::string> ListJsonFiles(const std::string& dir);

// Every rotary golden case in the test's runfiles: tests/golden/rotary_*/*.json, sorted (needs
// //tests/golden:rotary_cases as data). The one listing the rotary and kernel tests use.
std::vector<std::string> RotaryGoldenCases();

// A gtest parameter name for a golden case path: "<folder>_<file stem>", e.g.
// "rotary_glm4v_case_001".
std::string GoldenCaseName(const ::testing::TestParamInfo<std::string>& info);

}  // namespace testing
}  // namespace mrope

#endif  // MROPE_TESTS_TESTING_ROTARY_TESTING_H_
