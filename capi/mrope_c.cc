// The C ABI's library, model, position and cos/sin functions (mrope/mrope_c.h); the kernel
// launches are in kernel_entry.cc.

#include "mrope/mrope_c.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "capi/internal/abi_util.h"
#include "capi/internal/handles.h"
#include "capi/internal/kernels_where.h"
#include "mrope/common/status_macros.h"
#include "mrope/model/model_family.h"
#include "mrope/positions/model_config.h"
#include "mrope/rotary/apply.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/rope_params.h"
#include "mrope/service/preset_overrides.h"
#include "mrope/service/model_spec.h"

namespace mrope {
namespace capi {
namespace {

// The first version's sizes: the least struct_size accepted.
constexpr size_t kLibraryInfoV1 = sizeof(mrope_library_info);
constexpr size_t kModelInfoV1 = offsetof(mrope_model_info, num_axes);
constexpr size_t kBatchV1 = offsetof(mrope_batch, mm_token_type_ids);
constexpr size_t kPositionsOutV1 = sizeof(mrope_positions_out);
constexpr size_t kRotaryInfoV1 = offsetof(mrope_rotary_info, num_axes);

// The C ABI's mrope_qk_norm_form of a family row's QkNorm.
int32_t QkNormForm(QkNorm norm) {
  switch (norm) {
    case QkNorm::kNone:
      return MROPE_QK_NORM_NONE;
    case QkNorm::kWeight:
      return MROPE_QK_NORM_WEIGHT;
    case QkNorm::kOnePlusWeight:
      return MROPE_QK_NORM_ONE_PLUS_WEIGHT;
    case QkNorm::kWeightAfterRotary:
      return MROPE_QK_NORM_WEIGHT_AFTER_ROTARY;
  }
  return MROPE_QK_NORM_NONE;
}

absl::Status MakeModel(absl::StatusOr<ModelSpec> spec, mrope_model** model) {
  if (model == nullptr) return NullArgument("model");
  *model = nullptr;
  MROPE_RETURN_IF_ERROR(spec.status());
  MROPE_ASSIGN_OR_RETURN(PositionService service, PositionService::Create(*std::move(spec)));
  std::string family(FamilyOf(service.spec().positions).name);
  *model = new mrope_model{std::move(service), std::move(family)};
  return absl::OkStatus();
}

// OK when a caller's list of `count` entries (of `width` values each) is readable: at most
// `limit` entries (the batch's token count: no list can have more entries than the batch has
// tokens), checked before anything is allocated.
template <typename T>
absl::Status CheckList(const T* data, int64_t count, int64_t limit, const char* name) {
  if (count < 0 || count > limit) {
    return absl::InvalidArgumentError(absl::StrCat("batch: ", name, " has ", count,
                                                   " entries, expected 0..", limit,
                                                   " (the batch's token count)"));
  }
  if (count > 0 && data == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch->", name, " is NULL with ", count, " entries"));
  }
  return absl::OkStatus();
}

// A list of T, held as Stored (the C ABI's float32 seconds are held as double, widened).
template <typename T, typename Stored = T>
absl::StatusOr<std::vector<Stored>> ReadList(const T* data, int64_t count, int64_t limit,
                                             const char* name) {
  MROPE_RETURN_IF_ERROR(CheckList(data, count, limit, name));
  return std::vector<Stored>(data, data + count);
}

// [count][3] (t, h, w) rows.
absl::StatusOr<std::vector<Grid>> ReadGrids(const int64_t* data, int64_t count, int64_t limit,
                                            const char* name) {
  MROPE_RETURN_IF_ERROR(CheckList(data, count, limit, name));
  std::vector<Grid> grids(count);
  for (int64_t i = 0; i < count; ++i) {
    grids[i] = {data[3 * i], data[3 * i + 1], data[3 * i + 2]};
  }
  return grids;
}

absl::StatusOr<Prompt> ReadBatch(const mrope_batch& in) {
  if (in.batch_size < 0 || in.seq_len < 0 ||
      (in.seq_len > 0 && in.batch_size > INT64_MAX / in.seq_len)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch: batch_size ", in.batch_size, " x seq_len ", in.seq_len, " is not a valid size"));
  }
  const int64_t tokens = in.batch_size * in.seq_len;
  if (tokens > 0 && in.input_ids == nullptr) return NullArgument("batch->input_ids");
  Prompt prompt;
  PromptBatch& batch = prompt.batch;
  batch.batch_size = in.batch_size;
  batch.seq_len = in.seq_len;
  batch.input_ids = absl::MakeConstSpan(in.input_ids, tokens);
  if (in.attention_mask != nullptr) {
    batch.attention_mask = absl::MakeConstSpan(in.attention_mask, tokens);
  }
  if (in.mm_token_type_ids != nullptr) {
    batch.mm_token_type_ids = absl::MakeConstSpan(in.mm_token_type_ids, tokens);
  }
  MediaInputs& media = batch.media;
  MROPE_ASSIGN_OR_RETURN(media.image_grid_thw,
                         ReadGrids(in.image_grid_thw, in.num_images, tokens, "image_grid_thw"));
  MROPE_ASSIGN_OR_RETURN(media.video_grid_thw,
                         ReadGrids(in.video_grid_thw, in.num_videos, tokens, "video_grid_thw"));
  MROPE_ASSIGN_OR_RETURN(
      media.second_per_grid_ts,
      (ReadList<float, double>(in.second_per_grid_ts, in.num_second_per_grid_ts, tokens,
                               "second_per_grid_ts")));
  MROPE_ASSIGN_OR_RETURN(
      media.video_second_per_grid,
      (ReadList<float, double>(in.video_second_per_grid, in.num_video_second_per_grid, tokens,
                               "video_second_per_grid")));
  MROPE_ASSIGN_OR_RETURN(media.audio_feature_lengths,
                         ReadList(in.audio_feature_lengths, in.num_audio_feature_lengths, tokens,
                                  "audio_feature_lengths"));
  media.use_audio_in_video = in.use_audio_in_video != 0;
  return prompt;
}

absl::Status CheckCapacity(const void* data, int64_t capacity, size_t needed, const char* name) {
  if (needed > 0 && data == nullptr) return NullArgument(name);
  if (capacity < 0 || static_cast<uint64_t>(capacity) < needed) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, "_capacity is ", capacity, ", the batch needs ", needed));
  }
  return absl::OkStatus();
}

template <typename Out>
absl::Status ComputeInto(const PositionService& service, const Prompt& prompt,
                         const mrope_positions_out& out) {
  MROPE_ASSIGN_OR_RETURN(PositionResult<Out> result, service.Compute<Out>(prompt, OutputOptions()));
  const auto& positions = result.position_ids;
  const auto& deltas = result.mrope_position_deltas;
  MROPE_RETURN_IF_ERROR(CheckCapacity(out.position_ids, out.position_ids_capacity, positions.size(),
                                      "out->position_ids"));
  MROPE_RETURN_IF_ERROR(CheckCapacity(out.mrope_position_deltas, out.mrope_position_deltas_capacity,
                                      deltas.size(), "out->mrope_position_deltas"));
  if (!positions.empty()) {
    std::memcpy(out.position_ids, positions.data(), positions.size() * sizeof(Out));
  }
  if (!deltas.empty()) {
    std::memcpy(out.mrope_position_deltas, deltas.data(), deltas.size() * sizeof(Out));
  }
  return absl::OkStatus();
}

absl::Status ComputePositions(const mrope_model* model, const mrope_batch* batch_in,
                              mrope_positions_out* out_in) {
  if (model == nullptr) return NullArgument("model");
  MROPE_ASSIGN_OR_RETURN(const mrope_batch batch, ReadVersioned(batch_in, "batch", kBatchV1));
  MROPE_ASSIGN_OR_RETURN(const mrope_positions_out out,
                         ReadVersioned(out_in, "out", kPositionsOutV1));
  MROPE_ASSIGN_OR_RETURN(const Prompt prompt, ReadBatch(batch));
  switch (out.position_type) {
    case MROPE_POSITIONS_INT64:
      return ComputeInto<int64_t>(model->service, prompt, out);
    case MROPE_POSITIONS_INT32:
      return ComputeInto<int32_t>(model->service, prompt, out);
    case MROPE_POSITIONS_FLOAT32:
      return ComputeInto<float>(model->service, prompt, out);
    default:
      return absl::InvalidArgumentError(absl::StrCat("out->position_type is ", out.position_type,
                                                     ", expected 0 (int64), 1 (int32) or "
                                                     "2 (float32)"));
  }
}

absl::Status CreateRotary(const mrope_model* model, int64_t seq_len, int32_t sincos_math,
                          mrope_rotary** rotary) {
  if (rotary == nullptr) return NullArgument("rotary");
  *rotary = nullptr;
  if (model == nullptr) return NullArgument("model");
  const ModelSpec& spec = model->service.spec();
  if (!spec.rope.has_value()) return SingleRope(spec).status();
  if (sincos_math != MROPE_SINCOS_DOUBLE && sincos_math != MROPE_SINCOS_FLOAT32) {
    return absl::InvalidArgumentError(
        absl::StrCat("sincos_math is ", sincos_math, ", expected 0 (double) or 1 (float32)"));
  }
  MROPE_ASSIGN_OR_RETURN(RotarySpec rotary_spec,
                         BuildRotarySpec(*spec.rope, RotaryLayoutOf(spec), seq_len));
  rotary_spec.sincos_math = static_cast<SinCosMath>(sincos_math);
  *rotary = new mrope_rotary{std::move(rotary_spec)};
  return absl::OkStatus();
}

absl::Status RotaryCosSin(const mrope_rotary* rotary, const mrope_positions_view* positions,
                          float* cos, float* sin, int64_t capacity) {
  if (rotary == nullptr) return NullArgument("rotary");
  if (positions == nullptr) return NullArgument("positions");
  PositionsView view;
  view.data = positions->data;
  view.is_int64 = positions->is_int64 != 0;
  view.num_tokens = positions->num_tokens;
  view.axis_stride = positions->axis_stride;
  MROPE_ASSIGN_OR_RETURN(const std::vector<CosSin> values, ComputeCosSin(rotary->spec, view));
  MROPE_RETURN_IF_ERROR(CheckCapacity(cos, capacity, values.size(), "cos"));
  MROPE_RETURN_IF_ERROR(CheckCapacity(sin, capacity, values.size(), "sin"));
  for (size_t i = 0; i < values.size(); ++i) {
    cos[i] = values[i].cos;
    sin[i] = values[i].sin;
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace capi
}  // namespace mrope

using mrope::capi::Guarded;
using mrope::capi::NullArgument;

extern "C" {

uint32_t mrope_c_api_version(void) { return MROPE_C_API_VERSION; }

int mrope_library_get_info(mrope_library_info* info, char* message, size_t message_size) {
  return Guarded(message, message_size, [&] {
    mrope_library_info value{};
    value.api_version = MROPE_C_API_VERSION;
    value.kernels_on_host = mrope::capi::kKernelsOnHost ? 1 : 0;
    return mrope::capi::WriteVersioned(value, info, "info", mrope::capi::kLibraryInfoV1);
  });
}

int mrope_model_load(const char* preset_or_path, mrope_model** model, char* message,
                     size_t message_size) {
  return Guarded(message, message_size, [&] {
    if (preset_or_path == nullptr) return NullArgument("preset_or_path");
    return mrope::capi::MakeModel(mrope::LoadModelSpec(preset_or_path), model);
  });
}

int mrope_model_from_config_text(const char* path, const char* text, size_t text_size,
                                 mrope_model** model, char* message, size_t message_size) {
  return Guarded(message, message_size, [&] {
    if (path == nullptr) return NullArgument("path");
    if (text == nullptr && text_size > 0) return NullArgument("text");
    const mrope::ConfigFile file{path, std::string(text, text_size)};
    return mrope::capi::MakeModel(mrope::ModelSpecFromConfigFile(file), model);
  });
}

int mrope_model_with_overrides(const char* preset, const char* overrides_json, mrope_model** model,
                               char* message, size_t message_size) {
  return Guarded(message, message_size, [&] {
    if (preset == nullptr) return NullArgument("preset");
    if (overrides_json == nullptr) return NullArgument("overrides_json");
    return mrope::capi::MakeModel(mrope::PresetModelSpecWithOverrides(preset, overrides_json),
                                  model);
  });
}

void mrope_model_free(mrope_model* model) { delete model; }

int mrope_model_for_layer_type(const mrope_model* model, const char* layer_type,
                               mrope_model** out, char* message, size_t message_size) {
  return Guarded(message, message_size, [&] {
    if (model == nullptr) return NullArgument("model");
    if (layer_type == nullptr) return NullArgument("layer_type");
    return mrope::capi::MakeModel(
        mrope::ModelSpecForLayerType(model->service.spec(), layer_type), out);
  });
}

int mrope_model_get_info(const mrope_model* model, mrope_model_info* info, char* message,
                         size_t message_size) {
  return Guarded(message, message_size, [&] {
    if (model == nullptr) return NullArgument("model");
    const mrope::ModelSpec& spec = model->service.spec();
    mrope_model_info value{};
    value.float_positions = model->service.float_positions() ? 1 : 0;
    value.has_rope = spec.rope.has_value() ? 1 : 0;
    value.qk_norm = mrope::capi::QkNormForm(mrope::FamilyOf(spec.positions).qk_norm);
    value.num_axes = spec.positions.num_axes;
    value.name = spec.name.c_str();
    value.family = model->family.c_str();
    return mrope::capi::WriteVersioned(value, info, "info", mrope::capi::kModelInfoV1);
  });
}

int mrope_compute_positions(const mrope_model* model, const mrope_batch* batch,
                            mrope_positions_out* out, char* message, size_t message_size) {
  return Guarded(message, message_size,
                 [&] { return mrope::capi::ComputePositions(model, batch, out); });
}

int mrope_rotary_create(const mrope_model* model, int64_t seq_len, int32_t sincos_math,
                        mrope_rotary** rotary, char* message, size_t message_size) {
  return Guarded(message, message_size,
                 [&] { return mrope::capi::CreateRotary(model, seq_len, sincos_math, rotary); });
}

void mrope_rotary_free(mrope_rotary* rotary) { delete rotary; }

int mrope_rotary_get_info(const mrope_rotary* rotary, mrope_rotary_info* info, char* message,
                          size_t message_size) {
  return Guarded(message, message_size, [&] {
    if (rotary == nullptr) return NullArgument("rotary");
    const mrope::RotarySpec& spec = rotary->spec;
    mrope_rotary_info value{};
    value.head_dim = spec.head_dim;
    value.rotary_dim = spec.rotary_dim;
    value.num_pairs = spec.rotary_dim / 2;
    value.layout = static_cast<int32_t>(spec.layout);
    value.attention_scaling = spec.attention_scaling;
    value.num_axes = mrope::AxisCount(spec.axis_map);
    value.split_halves = spec.axis_map.split_halves ? 1 : 0;
    return mrope::capi::WriteVersioned(value, info, "info", mrope::capi::kRotaryInfoV1);
  });
}

int mrope_rotary_cos_sin(const mrope_rotary* rotary, const mrope_positions_view* positions,
                         float* cos, float* sin, int64_t capacity, char* message,
                         size_t message_size) {
  return Guarded(message, message_size,
                 [&] { return mrope::capi::RotaryCosSin(rotary, positions, cos, sin, capacity); });
}

}  // extern "C"
