// Position-builder throughput (tokens/s) on the four prompts, next to a memset of the
// same output bytes in the same run: the ratio items_per_second(builder) / items_per_second
// (memset) is the figure to compare across machines.
//
//   bazel run -c opt //benchmarks:positions_benchmark
//
// "Spans" is the runtime path (spans known, plan + fill); "BuildFromTokenIds" adds the token
// scan and writes the padded batch [3][B][L], whose reference is "MemsetTokenPadded" (the same
// as the unpadded memset for the single prompts, which have no padding). "SpanStoresInt64" and
// "FrameStoresInt64" are the stores of the Spans output cut at the spans (or also at the
// frames), with nothing else (cut_stores.h).

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "benchmarks/cut_stores.h"
#include "benchmarks/memset_reference.h"
#include "mrope/model/model_family.h"
#include "mrope/positions/batch.h"
#include "mrope/positions/sequence_positions.h"

namespace mrope {
namespace {

constexpr int64_t kVisionStart = 151652;
constexpr int64_t kVisionEnd = 151653;
constexpr int64_t kImage = 151655;
constexpr int64_t kVideo = 151656;
constexpr int64_t kPad = 151643;  // <|endoftext|>, what Qwen processors pad with

ModelConfig Config() { return PresetConfig("qwen2_5_vl").value(); }

// The four prompts of the issue, as spans.
std::vector<Span> TextPrompt() { return {Span::Text(16384)}; }

// 12 images of 1x36x36 patches (324 tokens each) with short captions: ~4k tokens, 95% vision.
std::vector<Span> ImagePrompt() {
  std::vector<Span> spans;
  for (int i = 0; i < 12; ++i) {
    spans.push_back(Span::Text(16));
    spans.push_back(Span::Image({1, 36, 36}));
  }
  spans.push_back(Span::Text(32));
  return spans;
}

// One video of 32 temporal grids of 2x(32x64) patches: 16384 video tokens + 20 text.
std::vector<Span> VideoPrompt() {
  return {Span::Text(10), Span::Video({32, 32, 64}, 0.5f), Span::Text(10)};
}

// Mixed prompt number i of the 64-row batch: text, then an image or a video.
std::vector<Span> MixedPrompt(int i) {
  std::vector<Span> spans = {Span::Text(32 + i)};
  if (i % 3 == 0) spans.push_back(Span::Video({4 + i % 5, 16, 24}, 1.0f));
  if (i % 3 != 2) spans.push_back(Span::Image({1, 28, 20 + 2 * (i % 7)}));
  spans.push_back(Span::Text(24));
  return spans;
}

// Token ids of a span list (padding-free), as a processor would emit them.
std::vector<int64_t> TokenIds(const std::vector<Span>& spans, MediaInputs& media) {
  std::vector<int64_t> ids;
  for (const Span& s : spans) {
    if (s.kind == SpanKind::kText) {
      ids.insert(ids.end(), s.text_tokens, 1000);
      continue;
    }
    const int64_t tokens = s.grid.t * (s.grid.h / 2) * (s.grid.w / 2);
    ids.push_back(kVisionStart);
    ids.insert(ids.end(), tokens, s.kind == SpanKind::kImage ? kImage : kVideo);
    ids.push_back(kVisionEnd);
    if (s.kind == SpanKind::kImage) {
      media.image_grid_thw.push_back(s.grid);
    } else {
      media.video_grid_thw.push_back(s.grid);
      media.second_per_grid_ts.push_back(s.seconds_per_grid);
    }
  }
  return ids;
}

template <typename Out>
void BuildFromSpans(benchmark::State& state, std::vector<std::vector<Span>> prompts) {
  const ModelConfig config = Config();
  int64_t total = 0;
  for (const auto& p : prompts) total += SequencePositions::Create(config, p)->num_tokens();
  std::vector<Out> out(3 * total);
  // One planner for every prompt, as the service plans a batch's rows: the config is validated
  // once, not once per row (SequencePositions::Create validates it at each call).
  const SequencePlanner planner = SequencePlanner::Create(config).value();
  SequencePositions seq;
  for (auto _ : state) {
    int64_t at = 0;
    for (const auto& p : prompts) {
      if (!planner.Plan(p, seq).ok()) state.SkipWithError("plan failed");
      const int64_t n = seq.num_tokens();
      Out* base = out.data();
      if (!seq.Fill<Out>(0, n, {base + at, base + total + at, base + 2 * total + at}).ok()) {
        state.SkipWithError("fill failed");
      }
      at += n;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * total);
  state.SetBytesProcessed(state.iterations() * total * 3 * sizeof(Out));
}

// The prompts as one padded batch, rows left-padded to the longest prompt (what an HF
// processor gives); `batch` views `ids` and `mask`.
struct PaddedBatch {
  explicit PaddedBatch(const std::vector<std::vector<Span>>& prompts) {
    std::vector<std::vector<int64_t>> rows;
    for (const auto& p : prompts) rows.push_back(TokenIds(p, batch.media));
    batch.batch_size = rows.size();
    for (const auto& r : rows) batch.seq_len = std::max<int64_t>(batch.seq_len, r.size());
    for (const auto& r : rows) {
      const int64_t pad = batch.seq_len - r.size();
      ids.insert(ids.end(), pad, kPad);
      ids.insert(ids.end(), r.begin(), r.end());
      mask.insert(mask.end(), pad, 0);
      mask.insert(mask.end(), r.size(), 1);
      real_tokens += r.size();
    }
    batch.input_ids = ids;
    batch.attention_mask = mask;
  }
  PaddedBatch(const PaddedBatch&) = delete;
  PaddedBatch& operator=(const PaddedBatch&) = delete;

  std::vector<int64_t> ids;
  std::vector<int64_t> mask;
  PromptBatch batch;
  int64_t real_tokens = 0;
};

void BuildFromTokenIds(benchmark::State& state, std::vector<std::vector<Span>> prompts) {
  const ModelConfig config = Config();
  const PaddedBatch padded(prompts);
  std::vector<int64_t> out;
  for (auto _ : state) {
    auto plan = PlanBatch(config, padded.batch);
    if (!plan.ok() || !FillBatch(*plan, out).ok()) state.SkipWithError("build failed");
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * padded.real_tokens);
}

// The token path's reference: memset of the padded [3][B][L] int64 output it writes (the
// unpadded memset below for single prompts, which have no padding).
void MemsetTokenPadded(benchmark::State& state, std::vector<std::vector<Span>> prompts) {
  const PaddedBatch padded(prompts);
  std::vector<int64_t> out(3 * padded.batch.batch_size * padded.batch.seq_len);
  int round = 0;
  for (auto _ : state) MemsetOnce(out, round);
  state.SetItemsProcessed(state.iterations() * padded.real_tokens);
}

// The bandwidth reference: memset of the same [3][total] output.
template <typename Out>
void MemsetOutput(benchmark::State& state, std::vector<std::vector<Span>> prompts) {
  int64_t total = 0;
  for (const auto& p : prompts) total += SequencePositions::Create(Config(), p)->num_tokens();
  std::vector<Out> out(3 * total);
  int round = 0;
  for (auto _ : state) MemsetOnce(out, round);
  state.SetItemsProcessed(state.iterations() * total);
  state.SetBytesProcessed(state.iterations() * total * 3 * sizeof(Out));
}

// The same [3][total] output's stores cut at the prompts' spans or frames (cut_stores.h).
void CutStoresInt64(benchmark::State& state, std::vector<std::vector<Span>> prompts,
                    StoreCut cut) {
  std::vector<SequencePositions> rows;
  for (const auto& p : prompts) rows.push_back(SequencePositions::Create(Config(), p).value());
  CutStores<int64_t>(state, rows, cut);
}
void SpanStoresInt64(benchmark::State& s, std::vector<std::vector<Span>> p) {
  CutStoresInt64(s, std::move(p), StoreCut::kSpans);
}
void FrameStoresInt64(benchmark::State& s, std::vector<std::vector<Span>> p) {
  CutStoresInt64(s, std::move(p), StoreCut::kFrames);
}

std::vector<std::vector<Span>> Batch64() {
  std::vector<std::vector<Span>> prompts;
  for (int i = 0; i < 64; ++i) prompts.push_back(MixedPrompt(i));
  return prompts;
}

std::vector<std::vector<Span>> Text16k() { return {TextPrompt()}; }
std::vector<std::vector<Span>> ImageHeavy() { return {ImagePrompt()}; }
std::vector<std::vector<Span>> Video16k() { return {VideoPrompt()}; }

void SpansInt64(benchmark::State& s, std::vector<std::vector<Span>> p) {
  BuildFromSpans<int64_t>(s, std::move(p));
}
void SpansInt32(benchmark::State& s, std::vector<std::vector<Span>> p) {
  BuildFromSpans<int32_t>(s, std::move(p));
}
void MemsetInt64(benchmark::State& s, std::vector<std::vector<Span>> p) {
  MemsetOutput<int64_t>(s, std::move(p));
}
void MemsetInt32(benchmark::State& s, std::vector<std::vector<Span>> p) {
  MemsetOutput<int32_t>(s, std::move(p));
}

#define MROPE_PROMPT_BENCHMARKS(name)                          \
  BENCHMARK_CAPTURE(SpansInt64, name, name());                 \
  BENCHMARK_CAPTURE(MemsetInt64, name, name());                \
  BENCHMARK_CAPTURE(SpanStoresInt64, name, name());            \
  BENCHMARK_CAPTURE(FrameStoresInt64, name, name());           \
  BENCHMARK_CAPTURE(SpansInt32, name, name());                 \
  BENCHMARK_CAPTURE(MemsetInt32, name, name());                \
  BENCHMARK_CAPTURE(BuildFromTokenIds, name, name())

MROPE_PROMPT_BENCHMARKS(Text16k);
MROPE_PROMPT_BENCHMARKS(ImageHeavy);
MROPE_PROMPT_BENCHMARKS(Video16k);
MROPE_PROMPT_BENCHMARKS(Batch64);
BENCHMARK_CAPTURE(MemsetTokenPadded, Batch64, Batch64());

}  // namespace
}  // namespace mrope

BENCHMARK_MAIN();
