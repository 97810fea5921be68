// Request JSON reading on the large prompts of ../shared/perf (14-16k tokens, golden-case
// format), in one run:
//   ReadRequestFile    ReadPositionRequest(path): file to PositionRequest (bytes/s = MB/s)
//   ProtobufJsonValue  protobuf's JSON parser into google.protobuf.Value, the first step of the
//                      reader this one replaced (a lower bound on its cost): the speed-up ratio
//   PeakMemory         a fresh process reads the file; counter peak_ratio = (peak RSS - RSS
//                      before reading) / file size
//   Cli/Help, Cli/Positions  `mrope --help` and `mrope positions --config=qwen2_5_vl
//                      --request=qwen2_5_vl_video.json` as whole processes (output to /dev/null)
//
//   bazel run -c opt //benchmarks:json_benchmark   (MROPE_PERF_DIR overrides ../shared/perf)

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "mrope/common/json_reader.h"
#include "mrope/service/request_io.h"

extern char** environ;

namespace mrope {
namespace {

constexpr const char* kPerfFiles[] = {"qwen2_5_vl_video.json", "qwen3_vl_video.json",
                                      "qwen2_vl_images.json", "qwen2_5_omni_aiv.json",
                                      "qwen2_5_vl_batch64.json"};
constexpr const char* kMeasureFlag = "--measure_peak_memory";

std::string PerfDir() {
  if (const char* dir = std::getenv("MROPE_PERF_DIR")) return dir;
  const char* workspace = std::getenv("BUILD_WORKSPACE_DIRECTORY");  // set by `bazel run`
  return std::string(workspace ? workspace : ".") + "/../shared/perf";
}

std::string PerfFile(int index) { return PerfDir() + "/" + kPerfFiles[index]; }

int64_t FileSize(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  return in ? static_cast<int64_t>(in.tellg()) : -1;
}

void ReadRequestFile(benchmark::State& state) {
  const std::string path = PerfFile(state.range(0));
  state.SetLabel(kPerfFiles[state.range(0)]);
  for (auto _ : state) {
    auto request = ReadPositionRequest(path);
    if (!request.ok()) {
      state.SkipWithError(std::string(request.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(request->inputs().input_ids_size());
  }
  state.SetBytesProcessed(state.iterations() * FileSize(path));
}

void ProtobufJsonValue(benchmark::State& state) {
  const std::string path = PerfFile(state.range(0));
  state.SetLabel(kPerfFiles[state.range(0)]);
  const auto text = ReadFileToString(path);
  if (!text.ok()) {
    state.SkipWithError(std::string(text.status().message()).c_str());
    return;
  }
  for (auto _ : state) {
    google::protobuf::Value value;
    if (!google::protobuf::util::JsonStringToMessage(*text, &value).ok()) {
      state.SkipWithError("protobuf refused the file");
      return;
    }
    benchmark::DoNotOptimize(value.struct_value().fields_size());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text->size()));
}

// Resident set size now, in bytes.
int64_t CurrentRss() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0;
  int64_t resident = 0;
  statm >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

// Runs argv to completion with stdout to /dev/null; returns its exit code, -1 if it did not exit.
int RunProcess(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  if (spawned != 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// In the child process (kMeasureFlag): prints the growth of the peak RSS while reading.
int MeasurePeakMemory(const std::string& path) {
  const int64_t before = CurrentRss();
  auto request = ReadPositionRequest(path);
  if (!request.ok()) return 1;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("%lld\n", static_cast<long long>(usage.ru_maxrss * 1024 - before));
  return 0;
}

std::string SelfPath() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  return std::string(path, n > 0 ? n : 0);
}

void PeakMemory(benchmark::State& state) {
  const std::string path = PerfFile(state.range(0));
  state.SetLabel(kPerfFiles[state.range(0)]);
  double growth = 0;
  for (auto _ : state) {
    const std::string command = SelfPath() + " " + kMeasureFlag + " " + path;
    FILE* child = popen(command.c_str(), "r");
    long long bytes = -1;
    if (child == nullptr || std::fscanf(child, "%lld", &bytes) != 1 || pclose(child) != 0) {
      state.SkipWithError("the measuring process failed");
      return;
    }
    growth = static_cast<double>(bytes);
  }
  state.counters["peak_bytes"] = growth;
  state.counters["peak_ratio"] = growth / static_cast<double>(FileSize(path));
}

std::string CliPath() {
  // `bazel run` starts in the runfiles tree, where the data dependency lives.
  return "cli/mrope";
}

void CliHelp(benchmark::State& state) {
  for (auto _ : state) {
    // The usage text; mrope exits 1 after it.
    if (RunProcess({CliPath(), "--help"}) < 0) state.SkipWithError("mrope --help failed");
  }
}

void CliPositions(benchmark::State& state) {
  const std::string request = "--request=" + PerfFile(0);
  for (auto _ : state) {
    if (RunProcess({CliPath(), "positions", "--config=qwen2_5_vl", request}) != 0) {
      state.SkipWithError("mrope positions failed");
    }
  }
}

void AllFiles(benchmark::internal::Benchmark* b) {
  for (int i = 0; i < static_cast<int>(std::size(kPerfFiles)); ++i) b->Arg(i);
}

BENCHMARK(ReadRequestFile)->Apply(AllFiles);
BENCHMARK(ProtobufJsonValue)->Apply(AllFiles);
BENCHMARK(PeakMemory)->Apply(AllFiles)->Iterations(1)->UseRealTime();
BENCHMARK(CliHelp)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(CliPositions)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mrope

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], mrope::kMeasureFlag) == 0) {
    return mrope::MeasurePeakMemory(argv[2]);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
