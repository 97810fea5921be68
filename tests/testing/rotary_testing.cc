#include "tests/testing/rotary_testing.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <system_error>
#include <vector>

namespace mrope {
namespace testing {
namespace {

// Maps float bits onto a line where adjacent floats differ by 1 and -0 == +0.
int64_t OrderedBits(float x) {
  int32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return bits >= 0 ? int64_t{bits} : -int64_t{bits & 0x7fffffff};
}

}  // namespace

int64_t UlpDistance(float a, float b) {
  if (a == b) return 0;
  if (!std::isfinite(a) || !std::isfinite(b)) return std::numeric_limits<int64_t>::max();
  const int64_t d = OrderedBits(a) - OrderedBits(b);
  return d < 0 ? -d : d;
}

std::string RunfilesPath(const std::string& repo_relative) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) return repo_relative;
  return std::string(srcdir) + "/" + workspace + "/" + repo_relative;
}

std::vector<std::string> ListJsonFiles(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> RotaryGoldenCases() {
  std::vector<std::string> cases;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator(RunfilesPath("tests/golden"), error)) {
    if (!entry.is_directory() || entry.path().filename().string().rfind("rotary_", 0) != 0) {
      continue;
    }
    for (std::string& file : ListJsonFiles(entry.path().string())) cases.push_back(file);
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

std::string GoldenCaseName(const ::testing::TestParamInfo<std::string>& info) {
  const std::filesystem::path path(info.param);
  return path.parent_path().filename().string() + "_" + path.stem().string();
}

}  // namespace testing
}  // namespace mrope
