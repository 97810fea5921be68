// The position builder on the five large prompts of ../shared/perf (14-16k real tokens each,
// golden case format), through the service, next to a memset of the same output bytes in the
// same run: the ratio time(builder) / time(memset) is the figure to compare across machines.
// A sixth prompt, the largest Qwen3-Omni golden case (tests/golden/qwen3_omni/case_035.json:
// 10,895 tokens, two videos, float32 positions, half of them fractional), times the float path.
//
//   bazel run -c opt //benchmarks:large_prompts_benchmark -- --benchmark_repetitions=5
//
// The prompts are read from $MROPE_PERF_DIR, by default ../shared/perf next to the workspace;
// without them only the plan-scaling benchmarks run. Every prompt's token-id positions (the
// _vllm twins' included, which are not timed) are checked against its golden `outputs` first.
// <type> below is the output type: int64, int32 and float for integer positions, float only for
// the Qwen3-Omni prompt.
//
//   TokenIds/<prompt>/padded/<type>  scan + validate + plan + fill of the padded batch
//   Spans/<prompt>/<layout>/<type>   plan + fill from spans (what a runtime that knows where
//                                    media sit calls)
//   PlanFillReused/<prompt>/packed/<type>  plan + fill into a reused buffer (no allocation)
//   FillReused/<prompt>/packed/<type>      the fill alone (planned once), into a reused buffer
//   Plan/<prompt>                    the plan alone (spans in)
//   Memset/<prompt>/<layout>/<type>  memset of the same output bytes
//   Stores/<prompt>/<layout>/<type>  the fill's constant-run kernel over the same bytes: what
//                                    its vector stores alone cost
//   SpanStores/<prompt>/packed/<type>  the same kernel over the packed bytes cut at the spans'
//                                    boundaries, a run per span and plane (cut_stores.h)
//   FrameStores/<prompt>/packed/<type>  the same, grid spans also cut at markers and frames
//   ReadAndMemset/<prompt>/tokenpadded/<type>  a read of the ids and mask + that memset
//   PlanScaling/<block>/<tokens>     the plan of one growing media block

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "benchmarks/cut_stores.h"
#include "benchmarks/memset_reference.h"
#include "mrope/common/json.h"
#include "mrope/common/status_macros.h"
#include "mrope/common/json_reader.h"
#include "mrope/model/model_family.h"
#include "mrope/positions/fill_kernels.h"
#include "mrope/positions/limits.h"
#include "mrope/positions/scan_kernels.h"
#include "mrope/positions/sequence_positions.h"
#include "mrope/service/case_model.h"
#include "mrope/service/position_service.h"
#include "mrope/service/proto_convert.h"
#include "mrope/service/request_io.h"

namespace mrope {
namespace {

struct LargePrompt {
  std::string name;
  PositionService service;
  Prompt token_ids;  // the case's padded batch
  Prompt spans;      // the same rows as explicit spans
  int64_t padded_slots = 0;
  int64_t real_tokens = 0;
};

std::string PerfDir() {
  if (const char* dir = std::getenv("MROPE_PERF_DIR")) return dir;
  // bazel run sets BUILD_WORKSPACE_DIRECTORY; the prompts sit next to the workspace.
  const char* workspace = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  return absl::StrCat(workspace != nullptr ? workspace : ".", "/../shared/perf");
}

// The golden case of tests/golden timed as the float-position prompt (bazel run finds it in the
// runfiles, a direct run from the workspace root in the source tree).
constexpr char kFloatPromptFile[] = "tests/golden/qwen3_omni/case_035.json";
constexpr char kFloatPromptName[] = "qwen3_omni_videos";

// The service's positions of `input` equal the golden `position_ids` of `doc` bit for bit.
template <typename Out>
absl::Status CheckGolden(const PositionService& service, const Prompt& input,
                         const google::protobuf::Value& doc) {
  MROPE_ASSIGN_OR_RETURN(const auto result, service.Compute<Out>(input, OutputOptions()));
  MROPE_ASSIGN_OR_RETURN(const google::protobuf::Value* outputs, GetField(doc, "outputs", ""));
  MROPE_ASSIGN_OR_RETURN(const google::protobuf::Value* golden,
                         GetField(*outputs, "position_ids", "outputs"));
  std::vector<Out> expected;
  if constexpr (std::is_floating_point<Out>::value) {
    MROPE_ASSIGN_OR_RETURN(expected, AsFloatArray(*golden, "outputs.position_ids"));
  } else {
    MROPE_ASSIGN_OR_RETURN(expected, AsInt64Array(*golden, "outputs.position_ids"));
  }
  if (result.position_ids.size() != expected.size() ||
      std::memcmp(result.position_ids.data(), expected.data(), expected.size() * sizeof(Out)) !=
          0) {
    return absl::InternalError("positions differ from golden");
  }
  return absl::OkStatus();
}

// Reads one case and checks the token-id path against its golden positions.
absl::StatusOr<LargePrompt> LoadPrompt(const std::filesystem::path& file, std::string name) {
  MROPE_ASSIGN_OR_RETURN(const std::string text, ReadFileToString(file.string()));
  MROPE_ASSIGN_OR_RETURN(const google::protobuf::Value doc, ParseJson(text));
  MROPE_ASSIGN_OR_RETURN(ModelSpec model, ModelSpecFromCase(doc));
  model.rope.reset();  // positions only
  MROPE_ASSIGN_OR_RETURN(const v1::PositionRequest request, PositionRequestFromJson(text));
  MROPE_ASSIGN_OR_RETURN(PositionService service, PositionService::Create(std::move(model)));
  LargePrompt prompt{std::move(name), std::move(service)};
  MROPE_ASSIGN_OR_RETURN(prompt.token_ids, PromptFromProto(request));
  MROPE_ASSIGN_OR_RETURN(const BatchPlan plan, prompt.service.Plan(prompt.token_ids));
  for (const SequencePositions& row : plan.rows) {
    std::vector<Span> spans;
    for (const PlacedSpan& placed : row.spans()) spans.push_back(placed.span);
    prompt.spans.sequences.push_back(std::move(spans));
    prompt.real_tokens += row.num_tokens();
  }
  prompt.padded_slots = plan.batch_size * plan.seq_len;

  const absl::Status golden =
      prompt.service.float_positions()
          ? CheckGolden<float>(prompt.service, prompt.token_ids, doc)
          : CheckGolden<int64_t>(prompt.service, prompt.token_ids, doc);
  if (!golden.ok()) {
    return absl::InternalError(absl::StrCat(file.string(), ": ", golden.message()));
  }
  return prompt;
}

template <typename Out>
void Compute(benchmark::State& state, const LargePrompt& prompt, const Prompt& input,
             OutputLayout layout) {
  OutputOptions options;
  options.layout = layout;
  for (auto _ : state) {
    auto result = prompt.service.Compute<Out>(input, options);
    if (!result.ok()) state.SkipWithError(std::string(result.status().message()).c_str());
    benchmark::DoNotOptimize(result->position_ids.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * prompt.real_tokens);
}

template <typename Out>
void Memset(benchmark::State& state, const LargePrompt& prompt, int64_t slots) {
  std::vector<Out> out(3 * slots);
  int round = 0;
  for (auto _ : state) MemsetOnce(out, round);
  state.SetItemsProcessed(state.iterations() * prompt.real_tokens);
}

// The stores alone, as the fill's kernels issue them: FillConstant over the whole output (a
// first block, 64-byte blocks aligned to 64 bytes, a last block). Within L2 they take less time
// than glibc's memset, beyond it more (memset's `rep stosb`): the two floors of RESULTS.md.
template <typename Out>
void Stores(benchmark::State& state, const LargePrompt& prompt, int64_t slots) {
  std::vector<Out> out(3 * slots);
  int round = 0;
  for (auto _ : state) {
    FillConstant(out.data(), static_cast<int64_t>(out.size()), static_cast<Out>(++round & 0x7f));
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * prompt.real_tokens);
}

// The packed output's stores cut where the prompt's spans (or frames) are cut.
template <typename Out>
void PromptCutStores(benchmark::State& state, const LargePrompt& prompt, StoreCut cut) {
  const auto plan = prompt.service.Plan(prompt.spans);
  if (!plan.ok()) {
    state.SkipWithError(std::string(plan.status().message()).c_str());
    return;
  }
  CutStores<Out>(state, plan->rows, cut);
}

// The token path's memory floor: one read of the batch's ids and mask, by the scan's own kernel
// (every id and mask value of these prompts is in range, so it reads to the end), and a memset
// of the padded output.
template <typename Out>
void ReadAndMemset(benchmark::State& state, const LargePrompt& prompt) {
  std::vector<Out> out(3 * prompt.padded_slots);
  const PromptBatch& batch = prompt.token_ids.batch;
  int round = 0;
  for (auto _ : state) {
    const int64_t ids_read = BelowRunEnd(batch.input_ids, 0, kMaxTokenId + 1);
    const int64_t mask_read = BelowRunEnd(batch.attention_mask, 0, 2);  // empty: all ones
    if (ids_read != prompt.padded_slots ||
        mask_read != static_cast<int64_t>(batch.attention_mask.size())) {
      state.SkipWithError("the read stopped early");
    }
    MemsetOnce(out, round);
  }
  state.SetItemsProcessed(state.iterations() * prompt.real_tokens);
}

// Every row of `plan` packed into `out` ([3][real tokens]).
template <typename Out>
void FillPacked(benchmark::State& state, const BatchPlan& plan, std::vector<Out>& out) {
  const int64_t total = out.size() / 3;
  int64_t at = 0;
  for (const SequencePositions& row : plan.rows) {
    Out* base = out.data() + at;
    if (!row.Fill<Out>(0, row.num_tokens(), {base, base + total, base + 2 * total}).ok()) {
      state.SkipWithError("fill failed");
    }
    at += row.num_tokens();
  }
  benchmark::DoNotOptimize(out.data());
  benchmark::ClobberMemory();
}

// Plan + fill of the packed layout into a buffer the caller reuses (a runtime's own tensor): no
// allocation of the result, which the service paths pay.
template <typename Out>
void PlanFillReused(benchmark::State& state, const LargePrompt& prompt) {
  std::vector<Out> out(3 * prompt.real_tokens);
  for (auto _ : state) {
    auto plan = prompt.service.Plan(prompt.spans);
    if (!plan.ok()) state.SkipWithError(std::string(plan.status().message()).c_str());
    FillPacked(state, *plan, out);
  }
  state.SetItemsProcessed(state.iterations() * prompt.real_tokens);
}

// The fill alone: a plan made once, written into a reused buffer at every iteration.
template <typename Out>
void FillReused(benchmark::State& state, const LargePrompt& prompt) {
  std::vector<Out> out(3 * prompt.real_tokens);
  const auto plan = prompt.service.Plan(prompt.spans);
  if (!plan.ok()) state.SkipWithError(std::string(plan.status().message()).c_str());
  for (auto _ : state) FillPacked(state, *plan, out);
  state.SetItemsProcessed(state.iterations() * prompt.real_tokens);
}

void Plan(benchmark::State& state, const LargePrompt& prompt) {
  for (auto _ : state) {
    auto plan = prompt.service.Plan(prompt.spans);
    if (!plan.ok()) state.SkipWithError(std::string(plan.status().message()).c_str());
    benchmark::DoNotOptimize(plan->rows.data());
  }
}

// Registers <what>/<prompt>/<layout>/<type>, timing run(state).
template <typename Run>
void RegisterFor(const LargePrompt& p, const char* what, const char* layout, const char* type,
                 Run run) {
  benchmark::RegisterBenchmark(absl::StrCat(what, "/", p.name, "/", layout, "/", type).c_str(),
                               run);
}

// Slots of the span path's padded output: the batch's [B][L], or the single row's tokens.
int64_t PaddedSpanSlots(const LargePrompt& p) {
  return p.spans.sequences.size() == 1 ? p.real_tokens : p.padded_slots;
}

template <typename Out>
void RegisterOutputType(const LargePrompt& p, const char* type) {
  RegisterFor(p, "Spans", "padded", type, [&p](benchmark::State& s) {
    Compute<Out>(s, p, p.spans, OutputLayout::kPadded);
  });
  RegisterFor(p, "Memset", "padded", type, [&p](benchmark::State& s) {
    Memset<Out>(s, p, PaddedSpanSlots(p));
  });
  RegisterFor(p, "Stores", "padded", type, [&p](benchmark::State& s) {
    Stores<Out>(s, p, PaddedSpanSlots(p));
  });
  RegisterFor(p, "Spans", "packed", type, [&p](benchmark::State& s) {
    Compute<Out>(s, p, p.spans, OutputLayout::kPacked);
  });
  RegisterFor(p, "Memset", "packed", type,
              [&p](benchmark::State& s) { Memset<Out>(s, p, p.real_tokens); });
  RegisterFor(p, "Stores", "packed", type,
              [&p](benchmark::State& s) { Stores<Out>(s, p, p.real_tokens); });
  RegisterFor(p, "SpanStores", "packed", type, [&p](benchmark::State& s) {
    PromptCutStores<Out>(s, p, StoreCut::kSpans);
  });
  RegisterFor(p, "FrameStores", "packed", type, [&p](benchmark::State& s) {
    PromptCutStores<Out>(s, p, StoreCut::kFrames);
  });
  RegisterFor(p, "PlanFillReused", "packed", type,
              [&p](benchmark::State& s) { PlanFillReused<Out>(s, p); });
  RegisterFor(p, "FillReused", "packed", type,
              [&p](benchmark::State& s) { FillReused<Out>(s, p); });
}

// The token path in the prompt's position type: padded output, its memset and its floor.
template <typename Out>
void RegisterTokenPath(const LargePrompt& p, const char* type) {
  RegisterFor(p, "TokenIds", "padded", type, [&p](benchmark::State& s) {
    Compute<Out>(s, p, p.token_ids, OutputLayout::kPadded);
  });
  RegisterFor(p, "Memset", "tokenpadded", type,
              [&p](benchmark::State& s) { Memset<Out>(s, p, p.padded_slots); });
  RegisterFor(p, "ReadAndMemset", "tokenpadded", type,
              [&p](benchmark::State& s) { ReadAndMemset<Out>(s, p); });
}

void RegisterPrompt(const LargePrompt& p) {
  if (p.service.float_positions()) {  // float32 positions: float output only
    RegisterTokenPath<float>(p, "float");
    RegisterOutputType<float>(p, "float");
  } else {
    RegisterTokenPath<int64_t>(p, "int64");
    RegisterOutputType<int64_t>(p, "int64");
    RegisterOutputType<int32_t>(p, "int32");
    RegisterOutputType<float>(p, "float");
  }
  benchmark::RegisterBenchmark(absl::StrCat("Plan/", p.name).c_str(),
                               [&p](benchmark::State& s) { Plan(s, p); });
}

// The plan of one media block of `state.range(0)` tokens: flat in the tokens per frame.
void PlanScaling(benchmark::State& state, const char* preset, SpanKind kind) {
  const ModelConfig config = PresetConfig(preset).value();
  const int64_t frames = 32;
  const int64_t per_frame = state.range(0) / (kind == SpanKind::kImage ? 1 : frames);
  // A near-square merged grid of per_frame tokens: h * w / 4 = per_frame.
  int64_t rows = 1;
  while (rows * rows * 4 <= per_frame) rows *= 2;
  const Grid grid{kind == SpanKind::kImage ? 1 : frames, 2 * rows, 2 * (per_frame / rows)};
  std::vector<Span> spans = {Span::Text(8)};
  spans.push_back(kind == SpanKind::kImage ? Span::Image(grid)
                                           : Span::AudioInVideo(grid, 1.0f, 800));
  spans.push_back(Span::Text(8));
  for (auto _ : state) {
    auto seq = SequencePositions::Create(config, spans);
    if (!seq.ok()) state.SkipWithError(std::string(seq.status().message()).c_str());
    benchmark::DoNotOptimize(seq->max_position());
  }
  state.counters["tokens"] = SequencePositions::Create(config, spans)->num_tokens();
}

}  // namespace
}  // namespace mrope

int main(int argc, char** argv) {
  using mrope::LargePrompt;
  std::vector<LargePrompt> prompts;
  const std::filesystem::path dir = mrope::PerfDir();
  if (std::filesystem::is_directory(dir)) {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() == ".json") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    std::vector<std::pair<std::filesystem::path, std::string>> named;
    for (const auto& file : files) named.emplace_back(file, file.stem().string());
    if (std::filesystem::exists(mrope::kFloatPromptFile)) {
      named.emplace_back(mrope::kFloatPromptFile, mrope::kFloatPromptName);
    } else {
      std::cerr << "no " << mrope::kFloatPromptFile
                << " (run from the workspace root): the float-position prompt is left out\n";
    }
    prompts.reserve(named.size());
    for (const auto& [file, name] : named) {
      auto prompt = mrope::LoadPrompt(file, name);
      if (!prompt.ok()) {
        std::cerr << prompt.status() << "\n";
        return 1;
      }
      prompts.push_back(*std::move(prompt));
    }
  } else {
    std::cerr << "no prompts at " << dir << " (set MROPE_PERF_DIR): plan scaling only\n";
  }
  // The _vllm twins are checked against their golden positions above, not timed.
  for (const LargePrompt& p : prompts) {
    if (!absl::EndsWith(p.name, "_vllm")) mrope::RegisterPrompt(p);
  }
  for (const auto& [name, preset, kind] :
       {std::tuple{"PlanScaling/image", "qwen2_5_vl", mrope::SpanKind::kImage},
        std::tuple{"PlanScaling/audio_in_video", "qwen2_5_omni",
                   mrope::SpanKind::kAudioInVideo}}) {
    benchmark::RegisterBenchmark(name, [preset = preset, kind = kind](benchmark::State& s) {
      mrope::PlanScaling(s, preset, kind);
    })->RangeMultiplier(4)->Range(1 << 10, 1 << 16);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
