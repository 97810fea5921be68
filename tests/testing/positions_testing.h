#ifndef MROPE_TESTS_TESTING_POSITIONS_TESTING_H_
#define MROPE_TESTS_TESTING_POSITIONS_TESTING_H_

// Building and reading positions in tests: presets, sequences from spans, windows as vectors.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "mrope/model/model_family.h"
#include "mrope/positions/batch.h"
#include "mrope/positions/model_config.h"
#include "mrope/positions/sequence_positions.h"

namespace mrope {

// Planar positions of a whole sequence, one vector per axis.
template <typename T>
struct Axes {
  std::vector<T> t, h, w;
};

inline ModelConfig Preset(absl::string_view name) {
  auto config = PresetConfig(name);
  EXPECT_TRUE(config.ok()) << config.status();
  return *config;
}

template <typename T = int64_t>
Axes<T> Window(const SequencePositions& seq, int64_t begin, int64_t end) {
  Axes<T> axes;
  axes.t.resize(end - begin);
  axes.h.resize(end - begin);
  axes.w.resize(end - begin);
  const auto status = seq.Fill<T>(begin, end, {axes.t.data(), axes.h.data(), axes.w.data()});
  EXPECT_TRUE(status.ok()) << status;
  return axes;
}

template <typename T = int64_t>
Axes<T> AllPositions(const SequencePositions& seq) {
  return Window<T>(seq, 0, seq.num_tokens());
}

// A PromptBatch with the ids and mask it views (a PromptBatch borrows its caller's memory):
// tests edit the vectors, then pass View().
struct TestBatch {
  int64_t batch_size = 0;
  int64_t seq_len = 0;
  std::vector<int64_t> input_ids;
  std::vector<int64_t> attention_mask;
  MediaInputs media;
  std::vector<int64_t> mm_token_type_ids;

  PromptBatch View() const {
    return {batch_size, seq_len, input_ids, attention_mask, media, mm_token_type_ids};
  }
};

// A batch of one unpadded row of token ids (media lists left for the caller).
inline TestBatch OneRow(std::vector<int64_t> ids) {
  TestBatch batch;
  batch.batch_size = 1;
  batch.seq_len = static_cast<int64_t>(ids.size());
  batch.input_ids = std::move(ids);
  return batch;
}

inline SequencePositions Build(absl::string_view preset, std::vector<Span> spans) {
  auto seq = SequencePositions::Create(Preset(preset), std::move(spans));
  EXPECT_TRUE(seq.ok()) << seq.status();
  return std::move(seq).value();
}

// Samples for a packed batch (training tests): Qwen2.5-VL text only, an image prompt and a
// video prompt.
inline std::vector<SequencePositions> MixedSamples() {
  std::vector<SequencePositions> samples;
  samples.push_back(Build("qwen2_5_vl", {Span::Text(37)}));
  samples.push_back(
      Build("qwen2_5_vl", {Span::Text(5), Span::Image({1, 8, 12}), Span::Text(9)}));
  samples.push_back(
      Build("qwen2_5_vl", {Span::Text(3), Span::Video({4, 6, 8}, 2.0f), Span::Text(11)}));
  return samples;
}

}  // namespace mrope

#endif  // MROPE_TESTS_TESTING_POSITIONS_TESTING_H_
