#include "mrope/service/position_service.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mrope/common/status_macros.h"
#include "mrope/positions/batch.h"
#include "mrope/positions/context_parallel.h"
#include "mrope/positions/limits.h"
#include "mrope/positions/sequence_positions.h"
#include "mrope/rotary/apply.h"
#include "mrope/rotary/rope_params.h"
#include "mrope/service/proto_convert.h"

namespace mrope {
namespace {

// Positions [num_axes][B][W] of tokens [begin, end) of every row.
template <typename Out>
absl::Status FillWindow(const BatchPlan& plan, TokenWindow window, const PositionLimits& limits,
                        PositionBuffer<Out>& out) {
  if (window.begin < 0 || window.end <= window.begin) {
    return absl::InvalidArgumentError(absl::StrCat("window [", window.begin, ", ", window.end,
                                                   ") must have 0 <= begin < end"));
  }
  const int64_t b = plan.batch_size;
  const int64_t w = window.end - window.begin;
  if (w > limits.max_tokens_per_row || w * b > limits.max_total_tokens) {
    return absl::InvalidArgumentError(absl::StrCat(
        "window of ", w, " tokens x ", b, " rows exceeds max_tokens_per_row = ",
        limits.max_tokens_per_row, " or max_total_tokens = ", limits.max_total_tokens));
  }
  out.resize(plan.num_axes * b * w);
  for (int64_t row = 0; row < b; ++row) {
    auto status =
        FillRowTokens<Out>(plan, row, window.begin, window.end, out.data() + row * w, b * w);
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat("row ", row, ": ", status.message()));
    }
  }
  return absl::OkStatus();
}

// Rank cp_rank's slice: of the padded batch as given, or of the rows' own tokens (packed).
template <typename Out>
absl::Status FillContextParallel(const BatchPlan& plan, const OutputOptions& options,
                                 const PositionLimits& limits, PositionResult<Out>& result) {
  if (options.window.has_value()) {
    return absl::InvalidArgumentError("cp_size: context parallelism does not take a window");
  }
  const ContextParallel& cp = *options.context_parallel;
  ContextParallelPositions<Out> slice;
  if (options.layout == OutputLayout::kPadded) {
    MROPE_ASSIGN_OR_RETURN(slice,
                           ContextParallelBatchSlice<Out>(plan, cp.cp_size, cp.cp_rank, limits));
    result.shape = {plan.num_axes, plan.batch_size, plan.seq_len / cp.cp_size};
  } else {
    std::vector<int64_t> lengths;
    lengths.reserve(plan.batch_size);
    for (int64_t row = 0; row < plan.batch_size; ++row) {
      lengths.push_back(RowTokenCount(plan, row));
    }
    MROPE_ASSIGN_OR_RETURN(
        slice, ContextParallelSlice<Out>(plan, lengths, cp.cp_size, cp.cp_rank, limits));
    result.shape = {plan.num_axes, slice.num_tokens};
  }
  result.position_ids = std::move(slice.positions);
  result.cu_seqlens = std::move(slice.cu_seqlens);
  result.cp_token_index = std::move(slice.token_index);
  return absl::OkStatus();
}

// An EVS request's positions: the window (or the whole prompt) as [3][1][W], or [3][W] packed.
template <typename Out>
absl::Status FillEvs(const VllmEvsPositions& evs, const OutputOptions& options,
                     const PositionLimits& limits, PositionResult<Out>& result) {
  const TokenWindow window = options.window.value_or(TokenWindow{0, evs.num_tokens()});
  if (window.begin < 0 || window.end <= window.begin ||
      window.end - window.begin > limits.max_tokens_per_row) {
    return absl::InvalidArgumentError(absl::StrCat(
        "window [", window.begin, ", ", window.end, ") must have 0 <= begin < end and at most "
        "max_tokens_per_row = ", limits.max_tokens_per_row, " tokens"));
  }
  const int64_t w = window.end - window.begin;
  result.position_ids.resize(3 * w);
  Out* t = result.position_ids.data();
  MROPE_RETURN_IF_ERROR(evs.Fill<Out>(window.begin, window.end, {t, t + w, t + 2 * w}));
  if (options.layout == OutputLayout::kPacked) {
    result.shape = {3, w};
    result.cu_seqlens = {0, w};
  } else {
    result.shape = {3, 1, w};
  }
  return absl::OkStatus();
}

// Its decode steps [3][1][steps]: the tokens past the prompt.
template <typename Out>
absl::Status FillEvsDecode(const VllmEvsPositions& evs, int64_t steps,
                           const PositionLimits& limits, PositionBuffer<Out>& out) {
  if (steps < 0 || steps > limits.max_decode_steps) {
    return absl::InvalidArgumentError(absl::StrCat("decode_steps must be in [0, ",
                                                   limits.max_decode_steps, "], got ", steps));
  }
  out.resize(3 * steps);
  Out* t = out.data();
  const int64_t n = evs.num_tokens();
  return evs.Fill<Out>(n, n + steps, {t, t + steps, t + 2 * steps});
}

// cos/sin [tokens][pairs] of planar positions [num_axes][tokens] ([tokens][rotary_dim] for
// XD-RoPE's split halves).
template <typename Out>
absl::Status FillCosSin(const RopeParameters& rope, RotaryLayout layout, int32_t num_axes,
                        const PositionBuffer<Out>& planar, PositionResult<Out>& result) {
  const int64_t tokens = planar.size() / num_axes;
  // The rotary math takes integer positions; float32 ones must be integral.
  std::vector<int64_t> widened;
  const void* data = planar.data();
  bool is_int64 = std::is_same<Out, int64_t>::value;
  if (std::is_floating_point<Out>::value) {
    widened.reserve(planar.size());
    for (size_t i = 0; i < planar.size(); ++i) {
      const double p = static_cast<double>(planar[i]);
      if (p != std::trunc(p)) {
        return absl::UnimplementedError(absl::StrCat(
            "cos_sin: position ", p, " is fractional; mrope's cos/sin take integer positions"));
      }
      widened.push_back(static_cast<int64_t>(p));
    }
    data = widened.data();
    is_int64 = true;
  }
  // HF evaluates dynamic / LongRoPE frequencies at the sequence length max(position) + 1.
  const double max_position =
      planar.empty() ? 0 : static_cast<double>(*std::max_element(planar.begin(), planar.end()));
  MROPE_ASSIGN_OR_RETURN(const RotarySpec spec,
                         BuildRotarySpec(rope, layout,
                                         static_cast<int64_t>(max_position) + 1));
  result.num_pairs = spec.axis_map.num_pairs;
  result.per_element = spec.axis_map.split_halves;
  const int columns = result.cos_sin_columns();
  MROPE_RETURN_IF_ERROR(CheckCosSinEntries(tokens, columns));
  result.cos.reserve(tokens * columns);
  result.sin.reserve(tokens * columns);
  // In chunks of tokens, so that the interleaved pairs never exist for the whole prompt beside
  // the two planes (that doubled the peak: ~3 GB for a request at the entry limit).
  constexpr int64_t kChunkTokens = 4096;
  const int64_t position_bytes = is_int64 ? sizeof(int64_t) : sizeof(int32_t);
  for (int64_t begin = 0; begin < tokens; begin += kChunkTokens) {
    PositionsView chunk;
    chunk.data = static_cast<const char*>(data) + begin * position_bytes;
    chunk.is_int64 = is_int64;
    chunk.num_tokens = std::min(kChunkTokens, tokens - begin);
    chunk.axis_stride = tokens;
    MROPE_ASSIGN_OR_RETURN(const std::vector<CosSin> cos_sin,
                           result.per_element ? ComputeElementCosSin(spec, chunk)
                                              : ComputeCosSin(spec, chunk));
    for (const CosSin& value : cos_sin) {
      result.cos.push_back(value.cos);
      result.sin.push_back(value.sin);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PositionService> PositionService::Create(ModelSpec spec, PositionLimits limits) {
  MROPE_ASSIGN_OR_RETURN(SequencePlanner planner, SequencePlanner::Create(spec.positions, limits));
  if (spec.rope.has_value()) MROPE_RETURN_IF_ERROR(ValidateRopeParameters(*spec.rope));
  if (spec.rope.has_value() && spec.positions.rules->policy.scheme ==
                                   PositionScheme::kSequentialGrid &&
      static_cast<int32_t>(spec.rope->mrope_section.size()) != spec.positions.num_axes) {
    return absl::InvalidArgumentError(absl::StrCat(
        spec.name, ": num_axes = ", spec.positions.num_axes, " but mrope_section has ",
        spec.rope->mrope_section.size(), " entries; ", spec.positions.rules->name,
        " takes one position axis per section"));
  }
  ModelConfig vllm = spec.positions;
  vllm.convention = Convention::kVllm;
  absl::StatusOr<SequencePlanner> vllm_planner = SequencePlanner::Create(vllm, limits);
  if (!vllm_planner.ok()) {
    vllm_planner = absl::InvalidArgumentError(absl::StrCat(
        "a vLLM request needs the vLLM convention, and ", spec.name, " has none in mrope: ",
        vllm_planner.status().message()));
  }
  return PositionService(std::move(spec), std::move(planner), std::move(vllm_planner));
}

absl::StatusOr<BatchPlan> PositionService::Plan(const Prompt& prompt) const {
  const int given = (prompt.batch.batch_size > 0) + !prompt.sequences.empty() +
                    prompt.vllm.has_value() + prompt.vllm_evs.has_value();
  if (given != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a prompt needs exactly one of a batch of token ids, explicit sequences or a vLLM "
        "request, got ", given));
  }
  if (prompt.batch.batch_size > 0) return PlanBatch(planner_, prompt.batch);
  if (!prompt.sequences.empty()) return PlanSequences(planner_, prompt.sequences);
  return PlanVllm(prompt);
}

absl::StatusOr<BatchPlan> PositionService::PlanVllm(const Prompt& prompt) const {
  if (!vllm_planner_.ok()) return vllm_planner_.status();
  const SequencePlanner& planner = *vllm_planner_;
  if (prompt.vllm.has_value()) {
    MROPE_ASSIGN_OR_RETURN(std::vector<Span> spans,
                           VllmRequestSpans(planner.config(), *prompt.vllm, planner.limits()));
    return PlanSequences(planner, {std::move(spans)});
  }
  MROPE_ASSIGN_OR_RETURN(VllmEvsPositions evs,
                         VllmEvsPositions::Create(planner.config(), *prompt.vllm_evs,
                                                  planner.limits()));
  BatchPlan plan;
  plan.batch_size = 1;
  plan.seq_len = evs.num_tokens();
  plan.pad_value = plan.rope_index_pad_value = 0;
  plan.limits = planner.limits();
  RowLayout& layout = plan.layouts.emplace_back();
  layout.delta = layout.decode_delta = static_cast<double>(evs.delta());
  layout.decode_offset = evs.num_tokens();
  plan.evs = std::make_shared<const VllmEvsPositions>(std::move(evs));
  return plan;
}

template <typename Out>
absl::StatusOr<PositionResult<Out>> PositionService::Fill(const BatchPlan& plan,
                                                          const OutputOptions& options) const {
  if (options.cos_sin && !spec_.rope.has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cos_sin: ", SingleRope(spec_).status().message()));
  }
  PositionResult<Out> result;
  const int64_t b = plan.batch_size;
  if (plan.evs != nullptr) {
    if (options.context_parallel.has_value()) {
      return absl::InvalidArgumentError(
          "cp_size: context parallelism slices training batches, not a vLLM EVS request");
    }
    MROPE_RETURN_IF_ERROR(FillEvs(*plan.evs, options, limits(), result));
  } else if (options.context_parallel.has_value()) {
    MROPE_RETURN_IF_ERROR(FillContextParallel(plan, options, limits(), result));
  } else if (options.window.has_value()) {
    MROPE_RETURN_IF_ERROR(FillWindow(plan, *options.window, limits(), result.position_ids));
    const int64_t w = options.window->end - options.window->begin;
    if (options.layout == OutputLayout::kPacked) {
      result.shape = {plan.num_axes, b * w};
      for (int64_t row = 0; row <= b; ++row) result.cu_seqlens.push_back(row * w);
    } else {
      result.shape = {plan.num_axes, b, w};
    }
  } else if (options.layout == OutputLayout::kPacked) {
    MROPE_ASSIGN_OR_RETURN(PackedPositions<Out> packed, PackBatch<Out>(plan, limits()));
    result.shape = {plan.num_axes, packed.total_tokens};
    result.position_ids = std::move(packed.positions);
    result.cu_seqlens = std::move(packed.cu_seqlens);
  } else {
    MROPE_RETURN_IF_ERROR(FillBatch(
        plan, result.position_ids,
        options.rope_index_padding ? Padding::kGetRopeIndex : Padding::kPrefill));
    result.shape = {plan.num_axes, b, plan.seq_len};
  }
  result.mrope_position_deltas = PerRowDeltas<Out>(plan, &RowLayout::delta);
  result.rope_deltas = PerRowDeltas<Out>(plan, &RowLayout::decode_delta);
  if (options.decode_steps != 0) {
    MROPE_RETURN_IF_ERROR(plan.evs != nullptr
                              ? FillEvsDecode(*plan.evs, options.decode_steps, plan.limits,
                                              result.decode_position_ids)
                              : FillDecode(plan, options.decode_steps, result.decode_position_ids));
    result.decode_steps = options.decode_steps;
  }
  if (options.cos_sin) {
    MROPE_RETURN_IF_ERROR(
        FillCosSin(*spec_.rope, RotaryLayoutOf(spec_), plan.num_axes, result.position_ids, result));
  }
  return result;
}

template <typename Out>
absl::StatusOr<PositionResult<Out>> PositionService::Compute(const Prompt& prompt,
                                                             const OutputOptions& options) const {
  MROPE_ASSIGN_OR_RETURN(const BatchPlan plan, Plan(prompt));
  return Fill<Out>(plan, options);
}

absl::StatusOr<v1::PositionResponse> PositionService::Handle(
    const v1::PositionRequest& request) const {
  MROPE_ASSIGN_OR_RETURN(const Prompt prompt, PromptFromProto(request));
  MROPE_ASSIGN_OR_RETURN(const OutputOptions options, OutputOptionsFromProto(request.options()));
  v1::PositionOptions::OutputType type = request.options().output_type();
  if (type == v1::PositionOptions::AUTO) {
    type = float_positions() ? v1::PositionOptions::FLOAT32 : v1::PositionOptions::INT64;
  }
  switch (type) {
    case v1::PositionOptions::INT64: {
      MROPE_ASSIGN_OR_RETURN(auto result, Compute<int64_t>(prompt, options));
      return ResponseFromResult(result, type);
    }
    case v1::PositionOptions::INT32: {
      MROPE_ASSIGN_OR_RETURN(auto result, Compute<int32_t>(prompt, options));
      return ResponseFromResult(result, type);
    }
    case v1::PositionOptions::FLOAT32: {
      MROPE_ASSIGN_OR_RETURN(auto result, Compute<float>(prompt, options));
      return ResponseFromResult(result, type);
    }
    default:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("options.output_type: unknown value ", static_cast<int>(type)));
}

template absl::StatusOr<PositionResult<int64_t>> PositionService::Fill<int64_t>(
    const BatchPlan&, const OutputOptions&) const;
template absl::StatusOr<PositionResult<int32_t>> PositionService::Fill<int32_t>(
    const BatchPlan&, const OutputOptions&) const;
template absl::StatusOr<PositionResult<float>> PositionService::Fill<float>(
    const BatchPlan&, const OutputOptions&) const;
template absl::StatusOr<PositionResult<int64_t>> PositionService::Compute<int64_t>(
    const Prompt&, const OutputOptions&) const;
template absl::StatusOr<PositionResult<int32_t>> PositionService::Compute<int32_t>(
    const Prompt&, const OutputOptions&) const;
template absl::StatusOr<PositionResult<float>> PositionService::Compute<float>(
    const Prompt&, const OutputOptions&) const;

}  // namespace mrope
