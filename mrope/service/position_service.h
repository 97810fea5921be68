#ifndef MROPE_SERVICE_POSITION_SERVICE_H_
#define MROPE_SERVICE_POSITION_SERVICE_H_

// PositionService: M-RoPE positions (and optionally their cos/sin) for one model, built once and
// then shared by any number of threads. It holds no mutable state; every method is const.
//
//   auto service = PositionService::Create(*PresetModelSpec("qwen2_5_vl"));
//   Prompt prompt;
//   prompt.batch = ...;  // token ids + grids, as HF processors give them
//   auto result = service->Compute<int64_t>(prompt, OutputOptions());
//   // result->position_ids is [3][B][L]; result->mrope_position_deltas is [B].
//
// Underneath is mrope/positions (PlanBatch, SequencePositions); Handle() is the same over the
// mrope.v1.PositionRequest / mrope.v1.PositionResponse protos (proto/mrope.proto).

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "mrope/positions/batch.h"
#include "mrope/positions/limits.h"
#include "mrope/positions/position_buffer.h"
#include "mrope/positions/sequence_positions.h"
#include "mrope/positions/span.h"
#include "mrope/positions/vllm_evs.h"
#include "mrope/positions/vllm_request.h"
#include "mrope/service/model_spec.h"
#include "proto/mrope.pb.h"

namespace mrope {

// A prompt: a padded batch of token ids + media (HF processor outputs), explicit spans (one
// span list per sequence), or one vLLM request (mm_features, optionally EVS-pruned). Exactly one
// is given.
//
// Explicit sequences follow the per-request convention (as vLLM): each sequence's delta is
// against its own length, decode continues at its length + delta, and in the padded layout the
// sequences are right-aligned (left padding) with padding slots holding 0.
struct Prompt {
  PromptBatch batch;  // batch_size == 0: not given
  std::vector<std::vector<Span>> sequences;
  // vLLM's get_mrope_input_positions(input_tokens, mm_features) (mrope/positions/vllm_request.h)
  // and its EVS-pruned form (vllm_evs.h): planned under the vLLM convention of the model's family
  // (its ids, merge size and video time rounding), whatever the model's own convention; the
  // response is one unpadded row.
  std::optional<VllmRequest> vllm;
  std::optional<VllmEvsRequest> vllm_evs;
  // The memory batch.input_ids and batch.attention_mask view when the prompt owns it
  // (PromptFromProto flattens the request's rows into it: ids, then mask); null when they view
  // the caller's memory. Shared, so that copies of the prompt stay valid.
  std::shared_ptr<const std::vector<int64_t>> owned_tokens;
};

// Token indices [begin, end) of every row's own tokens (padding removed), as a runtime serving
// that row as one request sees them. Indices at or beyond a row's length n are decode steps:
// index + the row's own delta (SequencePositions::delta()) on every axis. This equals
// decode_position_ids (n + k + delta) except for HF text-only batches with padding, where HF
// counts the padding in the maximum (tests/golden/README.md, quirk 5). HunYuan-VL
// (PositionScheme::kSequentialGrid): the row's last token + 1 + k, axis by axis, its
// decode_position_ids when that token ends the padded row (no right padding).
struct TokenWindow {
  int64_t begin = 0;
  int64_t end = 0;
};

// The leading 3 is num_axes for HunYuan-VL, here and below.
enum class OutputLayout {
  kPadded,  // [3][B][L], or [3][B][W] for a window of W tokens
  kPacked,  // [3][total], padding dropped, with cu_seqlens (FlashAttention varlen layout)
};

// Rank cp_rank of cp_size's slice (mrope/positions/context_parallel.h). Padded layout: the
// [B][L] batch as given ([3][B][L / cp_size], cp_token_index = row * L + column: real tokens at
// their own positions wherever the padding sits, decode positions after a row's last real token,
// get_rope_index's pad value in other padding slots). Packed: every row's own tokens, each row's
// length a multiple of 2 * cp_size (cp_token_index into the packed batch, padding dropped).
struct ContextParallel {
  int cp_size = 1;
  int cp_rank = 0;
};

struct OutputOptions {
  OutputLayout layout = OutputLayout::kPadded;
  std::optional<TokenWindow> window;  // absent: the whole prompt
  int64_t decode_steps = 0;           // also the next decode_steps positions of every row
  bool cos_sin = false;               // also cos/sin (needs the spec's rotary parameters)
  // Padded layout, whole prompt: padding slots as get_rope_index returns them, not as
  // generate() prefills them (they differ for GLM's and ERNIE's text-only batches under
  // hf_v5_2). Python's get_rope_index sets it.
  bool rope_index_padding = false;
  std::optional<ContextParallel> context_parallel;  // not with a window
};

// Positions in the output type Out (int64_t, int32_t or float). int32 refuses values above
// INT32_MAX and integer types refuse fractional values (Qwen3-Omni), naming the value.
//
// position_ids and decode_position_ids are PositionBuffers (mrope/positions/position_buffer.h):
// std::vectors whose allocation skips the zero-fill, since Fill writes every entry anyway. Read
// them as any vector (data(), size(), [], iterators).
template <typename Out>
struct PositionResult {
  std::vector<int64_t> shape;  // of position_ids: {3, B, L}, {3, B, W} or {3, total}
  PositionBuffer<Out> position_ids;
  std::vector<int64_t> cu_seqlens;          // packed: {0, n0, n0 + n1, ...}
  // context_parallel: of each token, its index in the batch (padded: row * L + column; packed:
  // in the rows' own tokens back to back); cu_seqlens: the rank's local lengths, either layout.
  std::vector<int64_t> cp_token_index;
  std::vector<Out> mrope_position_deltas;   // [B]: get_rope_index's second return
  std::vector<Out> rope_deltas;             // [B]: what generation adds to the cache position
  int64_t decode_steps = 0;
  PositionBuffer<Out> decode_position_ids;  // [3][B][decode_steps]
  // cos_sin: cos and sin [tokens][num_pairs] of the tokens of position_ids (row-major over
  // shape[1..]), num_pairs = rotary_dim / 2, axis map and attention scaling applied; with
  // per_element (XD-RoPE, whose pairs' two elements take their own axes) [tokens][rotary_dim],
  // element d's own at column d (NeoX: the pairs' first elements, then their second).
  int32_t num_pairs = 0;
  bool per_element = false;
  std::vector<float> cos;
  std::vector<float> sin;
  // Columns of cos and sin per token.
  int32_t cos_sin_columns() const { return per_element ? 2 * num_pairs : num_pairs; }
};

class PositionService {
 public:
  // Validates the spec (ids, scales, rotary parameters) once.
  static absl::StatusOr<PositionService> Create(ModelSpec spec, PositionLimits limits = {});

  const ModelSpec& spec() const { return spec_; }
  const PositionLimits& limits() const { return planner_.limits(); }
  // True for Qwen3-Omni: positions are float32 values (request float output).
  bool float_positions() const { return planner_.policy().float_positions; }

  // Plans the prompt's positions; Fill then writes any window of them. A runtime doing chunked
  // prefill plans once and fills each chunk. Plan's cost is O(spans + audio-in-video frames and
  // chunks) (mrope/positions/sequence_positions.h), plus a scan of the ids and mask for a batch.
  absl::StatusOr<BatchPlan> Plan(const Prompt& prompt) const;

  template <typename Out>
  absl::StatusOr<PositionResult<Out>> Fill(const BatchPlan& plan,
                                           const OutputOptions& options) const;

  // Plan + Fill.
  template <typename Out>
  absl::StatusOr<PositionResult<Out>> Compute(const Prompt& prompt,
                                              const OutputOptions& options) const;

  // The same over protos: output_type AUTO is INT64, or FLOAT32 when float_positions().
  absl::StatusOr<v1::PositionResponse> Handle(const v1::PositionRequest& request) const;

 private:
  PositionService(ModelSpec spec, SequencePlanner planner,
                  absl::StatusOr<SequencePlanner> vllm_planner)
      : spec_(std::move(spec)),
        planner_(std::move(planner)),
        vllm_planner_(std::move(vllm_planner)) {}

  absl::StatusOr<BatchPlan> PlanVllm(const Prompt& prompt) const;

  ModelSpec spec_;
  // The positions config and limits, validated and their policy derived once for every request.
  SequencePlanner planner_;
  // The same under the vLLM convention, for vLLM requests; the error when the family has none.
  absl::StatusOr<SequencePlanner> vllm_planner_;
};

extern template absl::StatusOr<PositionResult<int64_t>> PositionService::Fill<int64_t>(
    const BatchPlan&, const OutputOptions&) const;
extern template absl::StatusOr<PositionResult<int32_t>> PositionService::Fill<int32_t>(
    const BatchPlan&, const OutputOptions&) const;
extern template absl::StatusOr<PositionResult<float>> PositionService::Fill<float>(
    const BatchPlan&, const OutputOptions&) const;
extern template absl::StatusOr<PositionResult<int64_t>> PositionService::Compute<int64_t>(
    const Prompt&, const OutputOptions&) const;
extern template absl::StatusOr<PositionResult<int32_t>> PositionService::Compute<int32_t>(
    const Prompt&, const OutputOptions&) const;
extern template absl::StatusOr<PositionResult<float>> PositionService::Compute<float>(
    const Prompt&, const OutputOptions&) const;

}  // namespace mrope

#endif  // MROPE_SERVICE_POSITION_SERVICE_H_
