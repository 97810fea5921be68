// Replays files through a fuzz target's LLVMFuzzerTestOneInput without libFuzzer, so the seed
// corpus and every kept crasher run as an ordinary test (any compiler, any sanitizer config).
//
// Usage: <test> PATH...   Each PATH is a file or a directory (read recursively, in sorted
// order); a missing one counts as empty (a target may have no crashers yet). Fails when no
// input is found at all, so a moved corpus cannot pass silently.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::string> InputFiles(const std::string& path) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  if (fs::is_directory(path)) {
    for (const auto& entry : fs::recursive_directory_iterator(path)) {
      if (entry.is_regular_file()) files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
  } else if (fs::is_regular_file(path)) {
    files.push_back(path);
  }
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  size_t replayed = 0;
  for (int i = 1; i < argc; ++i) {
    const std::vector<std::string> files = InputFiles(argv[i]);
    std::printf("%s: %zu inputs\n", argv[i], files.size());
    for (const std::string& file : files) {
      std::ifstream in(file, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++replayed;
    }
  }
  std::printf("replayed %zu inputs\n", replayed);
  if (replayed == 0) std::fprintf(stderr, "no inputs found\n");
  return replayed > 0 ? 0 : 1;
}
