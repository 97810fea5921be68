#include "mrope/service/proto_convert.h"

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "mrope/common/status_macros.h"

namespace mrope {
namespace {

Grid GridFromProto(const v1::GridThw& g) { return {g.t(), g.h(), g.w()}; }

// Appends rows of one length L to `flat`, row-major.
absl::Status AppendRows(const google::protobuf::RepeatedPtrField<v1::TokenRow>& rows,
                        int64_t length, absl::string_view path, std::vector<int64_t>& flat) {
  // Hardening (tests/regression/service_regression_test.cc): reserving rows * length
  // before checking the rows let one long row and many empty ones (a 196 KB request) ask for
  // 32 GB. With every row checked first, the reservation is what the request really holds.
  for (int i = 0; i < rows.size(); ++i) {
    if (rows[i].ids_size() != length) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, "[", i, "] has ", rows[i].ids_size(), " entries, expected ", length,
          " (rows are padded to one length; attention_mask marks the padding)"));
    }
  }
  flat.reserve(flat.size() + rows.size() * length);
  for (const v1::TokenRow& row : rows) flat.insert(flat.end(), row.ids().begin(), row.ids().end());
  return absl::OkStatus();
}

// The request's batch, its ids and mask flattened into prompt.owned_tokens.
absl::Status BatchFromProto(const v1::PromptInputs& inputs, Prompt& prompt) {
  PromptBatch& batch = prompt.batch;
  batch.batch_size = inputs.input_ids_size();
  batch.seq_len = inputs.input_ids(0).ids_size();
  auto tokens = std::make_shared<std::vector<int64_t>>();
  MROPE_RETURN_IF_ERROR(
      AppendRows(inputs.input_ids(), batch.seq_len, "inputs.input_ids", *tokens));
  const size_t num_ids = tokens->size();
  // The mask's and the type ids' rows follow the ids in the same buffer.
  size_t ends[2] = {num_ids, num_ids};
  for (const auto& [i, name, rows] :
       {std::make_tuple(0, "attention_mask", &inputs.attention_mask()),
        std::make_tuple(1, "mm_token_type_ids", &inputs.mm_token_type_ids())}) {
    if (rows->size() != 0) {
      if (rows->size() != inputs.input_ids_size()) {
        return absl::InvalidArgumentError(absl::StrCat("inputs.", name, " has ", rows->size(),
                                                       " rows, input_ids has ",
                                                       inputs.input_ids_size()));
      }
      MROPE_RETURN_IF_ERROR(
          AppendRows(*rows, batch.seq_len, absl::StrCat("inputs.", name), *tokens));
    }
    ends[i] = tokens->size();
    if (i == 0) ends[1] = ends[0];
  }
  batch.input_ids = absl::MakeConstSpan(*tokens).subspan(0, num_ids);
  batch.attention_mask = absl::MakeConstSpan(*tokens).subspan(num_ids, ends[0] - num_ids);
  batch.mm_token_type_ids = absl::MakeConstSpan(*tokens).subspan(ends[0], ends[1] - ends[0]);
  prompt.owned_tokens = std::move(tokens);
  MediaInputs& media = batch.media;
  for (const v1::GridThw& g : inputs.image_grid_thw())
    media.image_grid_thw.push_back(GridFromProto(g));
  for (const v1::GridThw& g : inputs.video_grid_thw())
    media.video_grid_thw.push_back(GridFromProto(g));
  media.second_per_grid_ts.assign(inputs.second_per_grid_ts().begin(),
                                  inputs.second_per_grid_ts().end());
  media.video_second_per_grid.assign(inputs.video_second_per_grid().begin(),
                                     inputs.video_second_per_grid().end());
  media.audio_feature_lengths.assign(inputs.audio_feature_lengths().begin(),
                                     inputs.audio_feature_lengths().end());
  media.use_audio_in_video = inputs.use_audio_in_video();
  media.images_per_sample.assign(inputs.images_per_sample().begin(),
                                 inputs.images_per_sample().end());
  return absl::OkStatus();
}

absl::StatusOr<Span> SpanFromProto(const v1::PromptSpan& s, const std::string& path) {
  const double seconds = s.has_seconds_per_grid() ? s.seconds_per_grid() : 1.0;
  Span span;
  switch (s.kind()) {
    case v1::PromptSpan::TEXT:
      span = Span::Text(s.text_tokens());
      break;
    case v1::PromptSpan::IMAGE:
      span = Span::Image(GridFromProto(s.grid()));
      break;
    case v1::PromptSpan::VIDEO:
      span = Span::Video(GridFromProto(s.grid()), seconds);
      break;
    case v1::PromptSpan::AUDIO:
      span = Span::Audio(s.audio_tokens());
      break;
    case v1::PromptSpan::AUDIO_IN_VIDEO:
      span = Span::AudioInVideo(GridFromProto(s.grid()), seconds, s.audio_tokens());
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(path, ".kind: unknown span kind ", static_cast<int>(s.kind())));
  }
  span.closed = !s.open();
  return span;
}

// A vLLM request, its tokens owned by prompt.owned_tokens.
absl::Status VllmFromProto(const v1::VllmPrompt& vllm, Prompt& prompt) {
  auto tokens = std::make_shared<std::vector<int64_t>>(vllm.input_tokens().begin(),
                                                       vllm.input_tokens().end());
  VllmRequest request;
  request.input_tokens = *tokens;
  prompt.owned_tokens = std::move(tokens);
  for (const v1::VllmFeature& f : vllm.mm_features()) {
    MultiModalFeature& feature = request.features.emplace_back();
    const bool image = f.modality() == v1::VllmFeature::IMAGE;
    feature.modality = image ? Modality::kImage : Modality::kVideo;
    feature.offset = f.mm_position().offset();
    feature.length = f.mm_position().length();
    feature.grid = GridFromProto(image ? f.data().image_grid_thw() : f.data().video_grid_thw());
    if (f.data().has_second_per_grid_ts()) {
      feature.second_per_grid = f.data().second_per_grid_ts();
    }
  }
  if (!vllm.has_evs()) {
    prompt.vllm = std::move(request);
    return absl::OkStatus();
  }
  VllmEvsRequest& evs = prompt.vllm_evs.emplace();
  evs.pruned = std::move(request);
  for (const v1::TokenRow& mask : vllm.evs().keep_masks()) {
    evs.keep_masks.emplace_back(mask.ids().begin(), mask.ids().end());
  }
  evs.embed_dtype = vllm.evs().embed_dtype() == v1::VllmEvs::FLOAT32 ? EmbedDType::kFloat32
                                                                     : EmbedDType::kBfloat16;
  if (vllm.evs().has_video_pruning_rate()) {
    evs.video_pruning_rate = vllm.evs().video_pruning_rate();
  }
  return absl::OkStatus();
}

// `values`: a std::vector or a PositionBuffer.
template <typename Values>
void SetValues(const Values& values, std::vector<int64_t> shape, v1::PositionArray& array) {
  using Out = typename Values::value_type;
  array.mutable_shape()->Add(shape.begin(), shape.end());
  if (std::is_same<Out, int64_t>::value) {
    for (Out v : values) array.add_int64_values(static_cast<int64_t>(v));
  } else if (std::is_same<Out, int32_t>::value) {
    for (Out v : values) array.add_int32_values(static_cast<int32_t>(v));
  } else {
    for (Out v : values) array.add_float_values(static_cast<float>(v));
  }
}

}  // namespace

absl::StatusOr<Prompt> PromptFromProto(const v1::PositionRequest& request) {
  const bool has_inputs = request.inputs().input_ids_size() > 0;
  const bool has_sequences = request.sequences_size() > 0;
  const bool has_vllm = request.has_vllm();
  if (has_inputs + has_sequences + has_vllm != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a request needs exactly one of inputs.input_ids, sequences and a vLLM request "
        "(input_tokens, mm_features), got ", has_inputs + has_sequences + has_vllm));
  }
  Prompt prompt;
  if (has_vllm) {
    MROPE_RETURN_IF_ERROR(VllmFromProto(request.vllm(), prompt));
    return prompt;
  }
  if (has_inputs) {
    MROPE_RETURN_IF_ERROR(BatchFromProto(request.inputs(), prompt));
    return prompt;
  }
  for (int i = 0; i < request.sequences_size(); ++i) {
    const v1::SpanSequence& sequence = request.sequences(i);
    std::vector<Span> spans;
    for (int j = 0; j < sequence.spans_size(); ++j) {
      MROPE_ASSIGN_OR_RETURN(
          Span span,
          SpanFromProto(sequence.spans(j), absl::StrCat("sequences[", i, "].spans[", j, "]")));
      spans.push_back(span);
    }
    prompt.sequences.push_back(std::move(spans));
  }
  return prompt;
}

absl::StatusOr<OutputOptions> OutputOptionsFromProto(const v1::PositionOptions& options) {
  OutputOptions out;
  switch (options.layout()) {
    case v1::PositionOptions::PADDED:
      out.layout = OutputLayout::kPadded;
      break;
    case v1::PositionOptions::PACKED:
      out.layout = OutputLayout::kPacked;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("options.layout: unknown value ", static_cast<int>(options.layout())));
  }
  if (options.has_window_begin() != options.has_window_end()) {
    return absl::InvalidArgumentError(
        "options.window_begin and options.window_end must be given together");
  }
  if (options.has_window_begin()) {
    out.window = TokenWindow{options.window_begin(), options.window_end()};
  }
  out.decode_steps = options.decode_steps();
  out.cos_sin = options.cos_sin();
  if (options.cp_size() != 0) {
    out.context_parallel = ContextParallel{options.cp_size(), options.cp_rank()};
  } else if (options.cp_rank() != 0) {
    return absl::InvalidArgumentError(absl::StrCat("options.cp_rank=", options.cp_rank(),
                                                   " needs options.cp_size"));
  }
  return out;
}

template <typename Out>
v1::PositionResponse ResponseFromResult(const PositionResult<Out>& result,
                                        v1::PositionOptions::OutputType type) {
  v1::PositionResponse response;
  response.set_output_type(type);
  SetValues(result.position_ids, result.shape, *response.mutable_position_ids());
  response.mutable_cu_seqlens()->Add(result.cu_seqlens.begin(), result.cu_seqlens.end());
  response.mutable_cp_token_index()->Add(result.cp_token_index.begin(),
                                         result.cp_token_index.end());
  const int64_t b = result.mrope_position_deltas.size();
  SetValues(result.mrope_position_deltas, {b}, *response.mutable_mrope_position_deltas());
  SetValues(result.rope_deltas, {b}, *response.mutable_rope_deltas());
  if (result.decode_steps > 0) {
    // One plane per position axis: 3, or HunYuan-VL's len(mrope_section).
    const int64_t planes =
        static_cast<int64_t>(result.decode_position_ids.size()) / (b * result.decode_steps);
    SetValues(result.decode_position_ids, {planes, b, result.decode_steps},
              *response.mutable_decode_position_ids());
  }
  if (result.num_pairs > 0) {
    std::vector<int64_t> shape(result.shape.begin() + 1, result.shape.end());
    shape.push_back(result.cos_sin_columns());
    SetValues(result.cos, shape, *response.mutable_cos());
    SetValues(result.sin, shape, *response.mutable_sin());
  }
  return response;
}

template v1::PositionResponse ResponseFromResult<int64_t>(const PositionResult<int64_t>&,
                                                          v1::PositionOptions::OutputType);
template v1::PositionResponse ResponseFromResult<int32_t>(const PositionResult<int32_t>&,
                                                          v1::PositionOptions::OutputType);
template v1::PositionResponse ResponseFromResult<float>(const PositionResult<float>&,
                                                        v1::PositionOptions::OutputType);

}  // namespace mrope
