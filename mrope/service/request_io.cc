#include "mrope/service/request_io.h"

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/descriptor.h"
#include "mrope/common/json_reader.h"
#include "mrope/common/status_macros.h"
#include "mrope/positions/limits.h"
#include "mrope/service/textproto.h"

namespace mrope {
namespace {

using ::google::protobuf::EnumDescriptor;
using ::google::protobuf::EnumValueDescriptor;
using ::google::protobuf::RepeatedField;
using ::google::protobuf::RepeatedPtrField;

constexpr int64_t kMinInt64 = std::numeric_limits<int64_t>::min();
constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();

constexpr std::initializer_list<absl::string_view> kRequestKeys = {"inputs", "sequences",
                                                                   "options", "vllm"};
// Keys of a golden case file that are not part of the request.
constexpr std::initializer_list<absl::string_view> kGoldenMetadataKeys = {
    "format", "kind",   "model",  "case",        "tags",   "layout",
    "batch_size", "seq_len", "source", "config", "inputs_from", "outputs", "convention",
    "num_tokens", "num_tokens_unpruned"};
constexpr std::initializer_list<absl::string_view> kInputKeys = {
    "input_ids",          "attention_mask",        "image_grid_thw",
    "video_grid_thw",     "second_per_grid_ts",    "video_second_per_grid",
    "audio_feature_lengths", "feature_attention_mask", "use_audio_in_video",
    "pixel_values",       "pixel_values_videos",   "input_features",
    "mm_token_type_ids",  "video_timestamps",      "images_per_sample",
    // vLLM requests (the golden vllm_request and vllm_evs_request cases)
    "input_tokens",       "mm_features",           "keep_masks",
    "embed_dtype",        "video_pruning_rate",    "unpruned_input_ids"};
// What HF processors (every supported family) return next to the inputs above that does not
// affect positions: image and video pixels, the audio's mel features, and Qwen3-VL's frame
// timestamps (their text is in the prompt). They are skipped without being stored (the reader
// still checks their syntax and depth).
// An EVS request's unpruned prompt is informational too: the pruned prompt and the keep masks
// determine the positions.
constexpr std::initializer_list<absl::string_view> kIgnoredTensorKeys = {
    "pixel_values", "pixel_values_videos", "input_features", "video_timestamps",
    "unpruned_input_ids"};
constexpr std::initializer_list<absl::string_view> kFeatureKeys = {"modality", "identifier",
                                                                   "mm_position", "data"};
constexpr std::initializer_list<absl::string_view> kPlaceholderKeys = {"offset", "length",
                                                                       "is_embed"};
constexpr std::initializer_list<absl::string_view> kFeatureDataKeys = {
    "image_grid_thw", "video_grid_thw", "second_per_grid_ts", "timestamps"};
constexpr std::initializer_list<absl::string_view> kVllmKeys = {"input_tokens", "mm_features",
                                                                "evs"};
constexpr std::initializer_list<absl::string_view> kEvsKeys = {"keep_masks", "embed_dtype",
                                                               "video_pruning_rate"};
constexpr std::initializer_list<absl::string_view> kSpanKeys = {
    "kind", "text_tokens", "grid", "seconds_per_grid", "audio_tokens", "open"};
constexpr std::initializer_list<absl::string_view> kOptionKeys = {
    "output_type", "layout", "window_begin", "window_end", "decode_steps", "cos_sin",
    "cp_size",     "cp_rank"};

// `key` is the proto field `name` (snake_case) or its proto3 JSON name (lowerCamelCase).
bool IsField(absl::string_view key, absl::string_view name) {
  if (key == name) return true;
  size_t k = 0;
  for (size_t i = 0; i < name.size(); ++i, ++k) {
    char want = name[i];
    if (want == '_' && i + 1 < name.size()) want = absl::ascii_toupper(name[++i]);
    if (k >= key.size() || key[k] != want) return false;
  }
  return k == key.size();
}

bool IsOneOf(absl::string_view key, std::initializer_list<absl::string_view> names) {
  for (absl::string_view name : names) {
    if (IsField(key, name)) return true;
  }
  return false;
}

// ForEachField that treats a null value as an absent key.
absl::Status ForEachSetField(
    JsonValue& object, absl::FunctionRef<absl::Status(absl::string_view, JsonValue&)> field) {
  return object.ForEachField([&](absl::string_view key, JsonValue& value) -> absl::Status {
    MROPE_ASSIGN_OR_RETURN(const bool null, value.IsNull());
    return null ? absl::OkStatus() : field(key, value);
  });
}

// An enum by name (in upper or lower case) or number.
absl::StatusOr<int> ReadEnum(JsonValue& value, const EnumDescriptor* type) {
  MROPE_ASSIGN_OR_RETURN(const JsonValue::Kind kind, value.kind());
  const EnumValueDescriptor* found = nullptr;
  std::string given;
  if (kind == JsonValue::Kind::kString) {
    MROPE_ASSIGN_OR_RETURN(given, value.String());
    found = type->FindValueByName(given);
    // vLLM's lower-case spellings ("image", "bfloat16") name the same values.
    if (found == nullptr) found = type->FindValueByName(absl::AsciiStrToUpper(given));
  } else {
    MROPE_ASSIGN_OR_RETURN(const int64_t number, value.Int64(INT32_MIN, INT32_MAX));
    given = absl::StrCat(number);
    found = type->FindValueByNumber(static_cast<int>(number));
  }
  if (found == nullptr) {
    std::vector<std::string> names;
    for (int i = 0; i < type->value_count(); ++i) names.push_back(type->value(i)->name());
    return value.Error(
        absl::StrCat("expected one of ", absl::StrJoin(names, ", "), ", got ", given));
  }
  return found->number();
}

// Passes a read value to a proto setter (enums from int, float fields from double).
template <typename T, typename Message, typename Arg>
absl::Status Set(absl::StatusOr<T> value, Message& message, void (Message::*set)(Arg)) {
  if (!value.ok()) return value.status();
  (message.*set)(static_cast<Arg>(*value));
  return absl::OkStatus();
}

// A token row: [ids...] or {"ids": [ids...]}. `total` counts the tokens of all rows.
absl::Status ReadTokenRow(JsonValue& value, int64_t min, int64_t max, const PositionLimits& limits,
                          int64_t& total, v1::TokenRow& row) {
  const auto read_ids = [&](JsonValue& ids) -> absl::Status {
    MROPE_RETURN_IF_ERROR(ReadInt64List(ids, min, max, limits.max_tokens_per_row,
                                        [&](int64_t id) { row.add_ids(id); }));
    total += row.ids_size();
    if (total > limits.max_total_tokens) {
      return ids.Error(absl::StrCat("the rows hold more than ", limits.max_total_tokens,
                                    " tokens in all"));
    }
    return absl::OkStatus();
  };
  MROPE_ASSIGN_OR_RETURN(const JsonValue::Kind kind, value.kind());
  if (kind != JsonValue::Kind::kObject) return read_ids(value);
  return ForEachSetField(value, [&](absl::string_view key, JsonValue& field) {
    return key == "ids" ? read_ids(field) : field.UnknownKey(key, {"ids"});
  });
}

// [B][L] rows of values in [min, max].
absl::Status ReadTokenRows(JsonValue& value, int64_t min, int64_t max, const PositionLimits& limits,
                           RepeatedPtrField<v1::TokenRow>& rows) {
  int64_t total = 0;
  return value.ForEachItem([&](int64_t index, JsonValue& row) -> absl::Status {
    if (index >= limits.max_batch_rows) {
      return value.Error(absl::StrCat("more than ", limits.max_batch_rows, " rows"));
    }
    return ReadTokenRow(row, min, max, limits, total, *rows.Add());
  });
}

// A grid: [t, h, w] or {"t": t, "h": h, "w": w}.
absl::Status ReadGrid(JsonValue& value, v1::GridThw& grid) {
  MROPE_ASSIGN_OR_RETURN(const JsonValue::Kind kind, value.kind());
  if (kind == JsonValue::Kind::kObject) {
    return ForEachSetField(value, [&](absl::string_view key, JsonValue& field) -> absl::Status {
      void (v1::GridThw::*set)(int64_t) = key == "t"   ? &v1::GridThw::set_t
                                          : key == "h" ? &v1::GridThw::set_h
                                          : key == "w" ? &v1::GridThw::set_w
                                                       : nullptr;
      if (set == nullptr) return field.UnknownKey(key, {"t", "h", "w"});
      return Set(field.Int64(), grid, set);
    });
  }
  int64_t thw[3] = {0, 0, 0};
  int64_t count = 0;
  MROPE_RETURN_IF_ERROR(value.ForEachItem([&](int64_t index, JsonValue& item) -> absl::Status {
    if (index >= 3) return value.Error("expected [t, h, w], got more than 3 numbers");
    MROPE_ASSIGN_OR_RETURN(thw[index], item.Int64());
    ++count;
    return absl::OkStatus();
  }));
  if (count != 3) {
    return value.Error(absl::StrCat("expected [t, h, w], got ", count, " numbers"));
  }
  grid.set_t(thw[0]);
  grid.set_h(thw[1]);
  grid.set_w(thw[2]);
  return absl::OkStatus();
}

absl::Status ReadGrids(JsonValue& value, const PositionLimits& limits,
                       RepeatedPtrField<v1::GridThw>& grids) {
  return value.ForEachItem([&](int64_t index, JsonValue& item) -> absl::Status {
    if (index >= limits.max_total_tokens) {
      return value.Error(absl::StrCat("more than ", limits.max_total_tokens, " grids"));
    }
    return ReadGrid(item, *grids.Add());
  });
}

absl::Status ReadFloats(JsonValue& value, const PositionLimits& limits,
                        RepeatedField<float>& out) {
  return value.ForEachItem([&](int64_t index, JsonValue& item) -> absl::Status {
    if (index >= limits.max_total_tokens) {
      return value.Error(absl::StrCat("more than ", limits.max_total_tokens, " numbers"));
    }
    MROPE_ASSIGN_OR_RETURN(const double x, item.Double());
    out.Add(static_cast<float>(x));
    return absl::OkStatus();
  });
}

// Reads the Omni processors' feature_attention_mask ([num_audios][max_frames] of 0/1) as the
// audio lengths. HF's thinker takes each row's sum as that audio's length
// (`audio_feature_lengths = torch.sum(feature_attention_mask, dim=1)`), and the Whisper feature
// extractor pads at the end, so a row is ones then zeros; any other row would make the sum a
// length the audio does not have, and is refused.
absl::Status ReadFeatureAttentionMask(JsonValue& value, const PositionLimits& limits,
                                      v1::PromptInputs& inputs) {
  return value.ForEachItem([&](int64_t row, JsonValue& mask) -> absl::Status {
    if (row >= limits.max_total_tokens) {
      return value.Error(absl::StrCat("more than ", limits.max_total_tokens, " rows"));
    }
    int64_t length = 0;
    MROPE_RETURN_IF_ERROR(mask.ForEachItem([&](int64_t index, JsonValue& item) -> absl::Status {
      if (index >= limits.max_total_tokens) {
        return mask.Error(absl::StrCat("more than ", limits.max_total_tokens, " items"));
      }
      MROPE_ASSIGN_OR_RETURN(const int64_t bit, item.Int64(0, 1));
      if (bit == 1 && length < index) {
        return item.Error(absl::StrCat(
            "got 1 after a 0 at index ", length,
            "; a row must be ones then zeros (HF uses its sum as the audio's length)"));
      }
      length += bit;
      return absl::OkStatus();
    }));
    inputs.add_audio_feature_lengths(length);
    return absl::OkStatus();
  });
}

// One item of vLLM's mm_features: {"modality", "identifier", "mm_position": {"offset", "length",
// "is_embed"}, "data": {"image_grid_thw" | "video_grid_thw", "second_per_grid_ts",
// "timestamps"}}. identifier, is_embed and timestamps do not affect positions (is_embed is
// checked by the placeholder's tokens, timestamps' text is in the prompt) and are skipped.
absl::Status ReadFeature(JsonValue& value, v1::VllmFeature& feature) {
  return ForEachSetField(value, [&](absl::string_view key, JsonValue& field) -> absl::Status {
    if (key == "modality") {
      return Set(ReadEnum(field, v1::VllmFeature::Modality_descriptor()), feature,
                 &v1::VllmFeature::set_modality);
    }
    if (key == "identifier") return field.Skip();
    if (IsField(key, "mm_position")) {
      v1::VllmPlaceholderRange& range = *feature.mutable_mm_position();
      return ForEachSetField(field, [&](absl::string_view name, JsonValue& item) -> absl::Status {
        if (name == "offset")
          return Set(item.Int64(), range, &v1::VllmPlaceholderRange::set_offset);
        if (name == "length")
          return Set(item.Int64(), range, &v1::VllmPlaceholderRange::set_length);
        if (IsField(name, "is_embed")) return item.Skip();
        return item.UnknownKey(name, kPlaceholderKeys);
      });
    }
    if (key == "data") {
      v1::VllmFeatureData& data = *feature.mutable_data();
      return ForEachSetField(field, [&](absl::string_view name, JsonValue& item) -> absl::Status {
        if (IsField(name, "image_grid_thw")) return ReadGrid(item, *data.mutable_image_grid_thw());
        if (IsField(name, "video_grid_thw")) return ReadGrid(item, *data.mutable_video_grid_thw());
        if (IsField(name, "second_per_grid_ts")) {
          return Set(item.Double(), data, &v1::VllmFeatureData::set_second_per_grid_ts);
        }
        if (name == "timestamps") return item.Skip();
        return item.UnknownKey(name, kFeatureDataKeys);
      });
    }
    return field.UnknownKey(key, kFeatureKeys);
  });
}

// One key of a vLLM request (the golden cases' `inputs`, or `vllm` and its `evs`).
absl::Status ReadVllmInput(absl::string_view key, JsonValue& value, const PositionLimits& limits,
                           v1::VllmPrompt& vllm) {
  if (IsField(key, "input_tokens")) {
    return ReadInt64List(value, 0, kMaxTokenId, limits.max_tokens_per_row,
                         [&](int64_t id) { vllm.add_input_tokens(id); });
  }
  if (IsField(key, "mm_features")) {
    return value.ForEachItem([&](int64_t index, JsonValue& item) -> absl::Status {
      if (index >= limits.max_tokens_per_row) {
        return value.Error(absl::StrCat("more than ", limits.max_tokens_per_row, " features"));
      }
      return ReadFeature(item, *vllm.add_mm_features());
    });
  }
  v1::VllmEvs& evs = *vllm.mutable_evs();
  if (IsField(key, "keep_masks")) {
    int64_t total = 0;
    return value.ForEachItem([&](int64_t index, JsonValue& mask) -> absl::Status {
      if (index >= limits.max_tokens_per_row) {
        return value.Error(absl::StrCat("more than ", limits.max_tokens_per_row, " masks"));
      }
      return ReadTokenRow(mask, 0, 1, limits, total, *evs.add_keep_masks());
    });
  }
  if (IsField(key, "embed_dtype")) {
    return Set(ReadEnum(value, v1::VllmEvs::EmbedDType_descriptor()), evs,
               &v1::VllmEvs::set_embed_dtype);
  }
  if (IsField(key, "video_pruning_rate")) {
    return Set(value.Double(), evs, &v1::VllmEvs::set_video_pruning_rate);
  }
  return value.UnknownKey(key, kVllmKeys);
}

// Which of the two forms of the audio lengths a request used.
struct AudioLengthForms {
  bool lengths = false;  // audio_feature_lengths
  bool mask = false;     // feature_attention_mask
};

// One key of the golden `inputs` object (also the top level of a bare processor output).
absl::Status ReadInput(absl::string_view key, JsonValue& value, const PositionLimits& limits,
                       AudioLengthForms& audio, v1::PositionRequest& request) {
  if (IsOneOf(key, {"input_tokens", "mm_features", "keep_masks", "embed_dtype",
                    "video_pruning_rate"})) {
    return ReadVllmInput(key, value, limits, *request.mutable_vllm());
  }
  v1::PromptInputs& inputs = *request.mutable_inputs();
  const bool lengths = IsField(key, "audio_feature_lengths");
  if (lengths || IsField(key, "feature_attention_mask")) {
    (lengths ? audio.lengths : audio.mask) = true;
    if (audio.lengths && audio.mask) {
      return value.Error(
          "audio_feature_lengths and feature_attention_mask are both given; give one");
    }
    if (!lengths) return ReadFeatureAttentionMask(value, limits, inputs);
    return ReadInt64List(value, kMinInt64, kMaxInt64, limits.max_total_tokens,
                         [&](int64_t x) { inputs.add_audio_feature_lengths(x); });
  }
  if (IsOneOf(key, kIgnoredTensorKeys)) return value.Skip();
  if (IsField(key, "input_ids")) {
    return ReadTokenRows(value, 0, kMaxTokenId, limits, *inputs.mutable_input_ids());
  }
  if (IsField(key, "attention_mask")) {
    return ReadTokenRows(value, 0, 1, limits, *inputs.mutable_attention_mask());
  }
  if (IsField(key, "mm_token_type_ids")) {
    return ReadTokenRows(value, 0, 2, limits, *inputs.mutable_mm_token_type_ids());
  }
  if (IsField(key, "image_grid_thw")) {
    return ReadGrids(value, limits, *inputs.mutable_image_grid_thw());
  }
  if (IsField(key, "video_grid_thw")) {
    return ReadGrids(value, limits, *inputs.mutable_video_grid_thw());
  }
  if (IsField(key, "second_per_grid_ts")) {
    return ReadFloats(value, limits, *inputs.mutable_second_per_grid_ts());
  }
  if (IsField(key, "video_second_per_grid")) {
    return ReadFloats(value, limits, *inputs.mutable_video_second_per_grid());
  }
  if (IsField(key, "images_per_sample")) {
    return ReadInt64List(value, 0, kMaxInt64, limits.max_batch_rows,
                         [&](int64_t x) { inputs.add_images_per_sample(x); });
  }
  if (IsField(key, "use_audio_in_video")) {
    return Set(value.Bool(), inputs, &v1::PromptInputs::set_use_audio_in_video);
  }
  return value.UnknownKey(key, kInputKeys);
}

absl::Status ReadSpan(JsonValue& value, v1::PromptSpan& span) {
  return ForEachSetField(value, [&](absl::string_view key, JsonValue& field) -> absl::Status {
    if (IsField(key, "kind")) {
      return Set(ReadEnum(field, v1::PromptSpan::Kind_descriptor()), span,
                 &v1::PromptSpan::set_kind);
    }
    if (IsField(key, "text_tokens"))
      return Set(field.Int64(), span, &v1::PromptSpan::set_text_tokens);
    if (IsField(key, "grid")) return ReadGrid(field, *span.mutable_grid());
    if (IsField(key, "seconds_per_grid")) {
      return Set(field.Double(), span, &v1::PromptSpan::set_seconds_per_grid);
    }
    if (IsField(key, "audio_tokens")) {
      return Set(field.Int64(), span, &v1::PromptSpan::set_audio_tokens);
    }
    if (IsField(key, "open")) return Set(field.Bool(), span, &v1::PromptSpan::set_open);
    return field.UnknownKey(key, kSpanKeys);
  });
}

absl::Status ReadSequences(JsonValue& value, const PositionLimits& limits,
                           RepeatedPtrField<v1::SpanSequence>& sequences) {
  int64_t spans = 0;
  return value.ForEachItem([&](int64_t index, JsonValue& item) -> absl::Status {
    if (index >= limits.max_batch_rows) {
      return value.Error(absl::StrCat("more than ", limits.max_batch_rows, " sequences"));
    }
    v1::SpanSequence& sequence = *sequences.Add();
    return ForEachSetField(item, [&](absl::string_view key, JsonValue& field) -> absl::Status {
      if (key != "spans") return field.UnknownKey(key, {"spans"});
      return field.ForEachItem([&](int64_t, JsonValue& span) -> absl::Status {
        if (++spans > limits.max_total_tokens) {
          return field.Error(absl::StrCat("more than ", limits.max_total_tokens, " spans"));
        }
        return ReadSpan(span, *sequence.add_spans());
      });
    });
  });
}

absl::Status ReadOptions(JsonValue& value, v1::PositionOptions& options) {
  using Options = v1::PositionOptions;
  return ForEachSetField(value, [&](absl::string_view key, JsonValue& field) -> absl::Status {
    if (IsField(key, "output_type")) {
      return Set(ReadEnum(field, Options::OutputType_descriptor()), options,
                 &Options::set_output_type);
    }
    if (IsField(key, "layout")) {
      return Set(ReadEnum(field, Options::Layout_descriptor()), options, &Options::set_layout);
    }
    if (IsField(key, "window_begin")) {
      return Set(field.Int64(), options, &Options::set_window_begin);
    }
    if (IsField(key, "window_end")) return Set(field.Int64(), options, &Options::set_window_end);
    if (IsField(key, "decode_steps")) {
      return Set(field.Int64(), options, &Options::set_decode_steps);
    }
    if (IsField(key, "cos_sin")) return Set(field.Bool(), options, &Options::set_cos_sin);
    // int32 fields; their values are checked by the service (context_parallel.h).
    constexpr int64_t kMinInt32 = std::numeric_limits<int32_t>::min();
    constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();
    if (IsField(key, "cp_size")) {
      return Set(field.Int64(kMinInt32, kMaxInt32), options, &Options::set_cp_size);
    }
    if (IsField(key, "cp_rank")) {
      return Set(field.Int64(kMinInt32, kMaxInt32), options, &Options::set_cp_rank);
    }
    return field.UnknownKey(key, kOptionKeys);
  });
}

absl::Status ReadRequest(JsonValue& root, const PositionLimits& limits,
                         v1::PositionRequest& request) {
  bool nested_inputs = false;  // {"inputs": {...}}
  bool bare_inputs = false;    // the processor output's keys at the top level
  AudioLengthForms audio;
  MROPE_ASSIGN_OR_RETURN(const JsonValue::Kind kind, root.kind());
  if (kind != JsonValue::Kind::kObject) return root.Error("request: expected a JSON object");
  MROPE_RETURN_IF_ERROR(
      ForEachSetField(root, [&](absl::string_view key, JsonValue& value) -> absl::Status {
        if (key == "inputs") {
          nested_inputs = true;
          return ForEachSetField(value, [&](absl::string_view name, JsonValue& input) {
            return ReadInput(name, input, limits, audio, request);
          });
        }
        if (IsOneOf(key, kInputKeys)) {
          bare_inputs = true;
          return ReadInput(key, value, limits, audio, request);
        }
        if (key == "sequences") return ReadSequences(value, limits, *request.mutable_sequences());
        if (key == "options") return ReadOptions(value, *request.mutable_options());
        if (key == "vllm") {
          return ForEachSetField(value, [&](absl::string_view name, JsonValue& field) {
            if (name != "evs") return ReadVllmInput(name, field, limits, *request.mutable_vllm());
            return ForEachSetField(field, [&](absl::string_view evs_key, JsonValue& evs_value) {
              return IsOneOf(evs_key, kEvsKeys)
                         ? ReadVllmInput(evs_key, evs_value, limits, *request.mutable_vllm())
                         : evs_value.UnknownKey(evs_key, kEvsKeys);
            });
          });
        }
        if (IsOneOf(key, kGoldenMetadataKeys)) return value.Skip();
        std::vector<absl::string_view> accepted(kRequestKeys);
        accepted.insert(accepted.end(), kInputKeys.begin(), kInputKeys.end());
        return value.UnknownKey(key, accepted);
      }));
  if (nested_inputs && bare_inputs) {
    return absl::InvalidArgumentError(
        "request: the inputs are given both under 'inputs' and at the top level; use one");
  }
  return absl::OkStatus();
}

// Text: a std::string with ReadFileToString's spare capacity (read in place), or a string_view.
template <typename Text>
absl::StatusOr<v1::PositionRequest> RequestFromJson(const Text& json,
                                                    const PositionLimits& limits) {
  v1::PositionRequest request;
  MROPE_RETURN_IF_ERROR(
      ReadJson(json, [&](JsonValue& root) { return ReadRequest(root, limits, request); }));
  return request;
}

}  // namespace

absl::StatusOr<v1::PositionRequest> PositionRequestFromJson(absl::string_view json,
                                                            const PositionLimits& limits) {
  return RequestFromJson(json, limits);
}

absl::StatusOr<v1::PositionRequest> PositionRequestFromTextproto(absl::string_view text) {
  v1::PositionRequest request;
  MROPE_RETURN_IF_ERROR(ParseTextproto(text, "request", request));
  return request;
}

absl::StatusOr<v1::PositionRequest> ReadPositionRequest(const std::string& path,
                                                        const PositionLimits& limits) {
  MROPE_ASSIGN_OR_RETURN(const std::string text, ReadFileToString(path));
  absl::StatusOr<v1::PositionRequest> request;
  if (absl::EndsWith(path, ".json")) {
    request = RequestFromJson(text, limits);
  } else if (IsTextprotoPath(path)) {
    request = PositionRequestFromTextproto(text);
  } else {
    const absl::string_view content = absl::StripLeadingAsciiWhitespace(text);
    request = absl::StartsWith(content, "{") ? RequestFromJson(text, limits)
                                             : PositionRequestFromTextproto(text);
  }
  if (!request.ok()) {
    return absl::Status(request.status().code(), absl::StrCat(path == "-" ? "stdin" : path, ": ",
                                                              request.status().message()));
  }
  return request;
}

}  // namespace mrope
