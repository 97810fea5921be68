// The extension module mrope._mrope: mrope's PositionService (mrope/service/position_service.h)
// over numpy arrays. The pure-Python package (python/mrope) builds the HF-style and vLLM-style
// calls and the torch conversions on top of it.
//
// Every computation runs with the GIL released; a Model is immutable and may be shared by any
// number of threads. Outputs are numpy arrays that own mrope's result buffers (no copy).

#include <algorithm>
#include <cstdint>
#include <memory>
#include <array>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "google/protobuf/util/json_util.h"
#include "mrope/common/json.h"
#include "mrope/positions/batch.h"
#include "mrope/service/case_model.h"
#include "mrope/service/compare.h"
#include "mrope/positions/model_config.h"
#include "mrope/model/conventions.h"
#include "mrope/model/model_family.h"
#include "mrope/service/model_spec.h"
#include "mrope/service/position_service.h"
#include "mrope/service/preset_overrides.h"
#include "mrope/rotary/hf_cos_sin.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/rope_params.h"
#include "mrope/rotary/rotary_spec.h"
#include "mrope/rotary/tensor_view.h"
#include "pybind11/numpy.h"
#include "pybind11/pybind11.h"
#include "pybind11/stl.h"
#include "python/src/convert.h"

namespace mrope {
namespace python {
namespace {

namespace py = pybind11;
using py::literals::operator""_a;

// Calls fn(Out{}) with Out = float for float positions (Qwen3-Omni), int64_t otherwise: the
// dtypes HF's get_rope_index returns.
template <typename Fn>
auto WithPositionType(bool float_positions, Fn&& fn) {
  return float_positions ? fn(float{}) : fn(int64_t{});
}

// The optional arguments of a prompt (kPromptArgsDoc), from a dict of them by name; absent
// ones are None.
struct PromptOptions {
  py::handle attention_mask;
  py::handle second_per_grid_ts;
  py::handle video_second_per_grid;
  py::handle audio_feature_lengths;
  py::handle use_audio_in_video;
  py::handle mm_token_type_ids;
  py::handle images_per_sample;
};

struct OptionName {
  const char* name;
  py::handle PromptOptions::*field;
};

// mrope's names, then HF's spellings of the Omni arguments.
constexpr OptionName kOptionNames[] = {
    {"attention_mask", &PromptOptions::attention_mask},
    {"second_per_grid_ts", &PromptOptions::second_per_grid_ts},
    {"video_second_per_grid", &PromptOptions::video_second_per_grid},
    {"audio_feature_lengths", &PromptOptions::audio_feature_lengths},
    {"use_audio_in_video", &PromptOptions::use_audio_in_video},
    {"mm_token_type_ids", &PromptOptions::mm_token_type_ids},
    {"images_per_sample", &PromptOptions::images_per_sample},
    {"second_per_grids", &PromptOptions::video_second_per_grid},
    {"audio_seqlens", &PromptOptions::audio_feature_lengths},
};

// One pass over the (few) given names; unknown names and an argument given under both of its
// names raise TypeError, as Python calls do.
PromptOptions ReadOptions(const py::dict& options) {
  PromptOptions out;
  for (const auto& [key, value] : options) {
    Py_ssize_t size = 0;
    const char* chars = PyUnicode_AsUTF8AndSize(key.ptr(), &size);
    if (chars == nullptr) throw py::error_already_set();
    const absl::string_view name(chars, size);
    const OptionName* match = absl::c_find_if(
        kOptionNames, [&](const OptionName& option) { return name == option.name; });
    if (match == std::end(kOptionNames)) {
      throw py::type_error(absl::StrCat("unexpected keyword argument '", name, "'"));
    }
    py::handle& field = out.*(match->field);
    if (field) {
      const OptionName* other = absl::c_find_if(kOptionNames, [&](const OptionName& option) {
        return option.field == match->field && &option != match;
      });
      throw py::type_error(absl::StrCat("got both '", other->name, "' and '", name,
                                        "': one argument under two names"));
    }
    field = value;
  }
  for (const OptionName& option : kOptionNames) {
    if (!(out.*(option.field))) out.*(option.field) = py::none();
  }
  return out;
}

// A padded batch as HF processors give it ([B, L] ids, the batch's grids, and the optional
// arguments by name). prompt.batch views the numpy arrays held here (the caller's own when
// they are C-contiguous int64, else converted copies), so they live as long as the batch is
// in use.
struct BatchInput {
  py::array_t<int64_t> input_ids;
  py::array_t<int64_t> attention_mask;     // empty when not given
  py::array_t<int64_t> mm_token_type_ids;  // empty when not given
  Prompt prompt;
};

// An optional [B, L] argument shaped as input_ids, held in `array`; its values as a span.
absl::Span<const int64_t> ReadRowsLikeIds(py::handle given, const char* name,
                                          const PromptBatch& batch, py::array_t<int64_t>& array) {
  if (given.is_none()) return {};
  array = ReadInt64Array(given, name);
  if (array.ndim() != 2 || array.shape(0) != batch.batch_size ||
      array.shape(1) != batch.seq_len) {
    throw py::value_error(absl::StrCat(name, ": expected the shape of input_ids [",
                                       batch.batch_size, ", ", batch.seq_len, "]"));
  }
  return absl::MakeConstSpan(array.data(), array.size());
}

BatchInput ReadBatch(py::handle input_ids, py::handle image_grid_thw, py::handle video_grid_thw,
                     const py::dict& options) {
  const PromptOptions given = ReadOptions(options);
  BatchInput in;
  in.input_ids = ReadInt64Array(input_ids, "input_ids");
  if (in.input_ids.ndim() != 2) {
    throw py::value_error(absl::StrCat("input_ids: expected a 2-D [batch, length] array, got ",
                                       in.input_ids.ndim(), " dimensions"));
  }
  PromptBatch& batch = in.prompt.batch;
  batch.batch_size = in.input_ids.shape(0);
  batch.seq_len = in.input_ids.shape(1);
  batch.input_ids = absl::MakeConstSpan(in.input_ids.data(), in.input_ids.size());
  batch.attention_mask =
      ReadRowsLikeIds(given.attention_mask, "attention_mask", batch, in.attention_mask);
  batch.mm_token_type_ids =
      ReadRowsLikeIds(given.mm_token_type_ids, "mm_token_type_ids", batch, in.mm_token_type_ids);
  MediaInputs& media = batch.media;
  media.image_grid_thw = ReadGrids(image_grid_thw, "image_grid_thw");
  media.video_grid_thw = ReadGrids(video_grid_thw, "video_grid_thw");
  media.second_per_grid_ts = ReadSeconds(given.second_per_grid_ts, "second_per_grid_ts");
  media.video_second_per_grid = ReadSeconds(given.video_second_per_grid, "video_second_per_grid");
  media.audio_feature_lengths =
      ReadInt64s(given.audio_feature_lengths, "audio_feature_lengths");
  const int use_audio_in_video = PyObject_IsTrue(given.use_audio_in_video.ptr());
  if (use_audio_in_video < 0) throw py::error_already_set();
  media.use_audio_in_video = use_audio_in_video == 1;
  media.images_per_sample = ReadInt64s(given.images_per_sample, "images_per_sample");
  return in;
}

// The installed transformers' version (its package metadata); ValueError saying what `needs` it
// when none is installed. The one reader of it: Python's convention="installed" and the
// integrations come through convention_preset.
std::string InstalledTransformers(absl::string_view needs) {
  const py::module_ metadata = py::module_::import("importlib.metadata");
  try {
    return metadata.attr("version")("transformers").cast<std::string>();
  } catch (py::error_already_set& e) {
    if (!e.matches(metadata.attr("PackageNotFoundError"))) throw;
    throw py::value_error(absl::StrCat(needs, ", and transformers is not installed"));
  }
}

// The transformers release whose text rotary modules layout="hf" follows: `transformers` as
// given, else the installed package's version.
TransformersRelease ReleaseOf(const std::optional<std::string>& transformers) {
  return ValueOrThrow(ParseTransformersRelease(
      transformers.has_value()
          ? *transformers
          : InstalledTransformers("transformers: layout 'hf' follows the installed "
                                  "transformers' rotary module (or name a release, e.g. "
                                  "transformers='5.23.0')")));
}

// cos/sin of `rows` ([3][tokens] positions each) as the family's rotary module returns them.
py::tuple HfCosSinArrays(const ModelSpec& spec, CosSinLayout layout,
                         absl::Span<const PositionsView> rows, int64_t max_position) {
  if (!spec.rope.has_value()) {
    throw py::value_error(absl::StrCat("cos_sin: ", SingleRope(spec).status().message()));
  }
  absl::StatusOr<HfCosSin> computed;
  {
    py::gil_scoped_release release;
    // HF evaluates dynamic / LongRoPE frequencies at the sequence length max(position) + 1.
    absl::StatusOr<RotarySpec> rotary =
        BuildRotarySpec(*spec.rope, RotaryLayoutOf(spec), max_position + 1);
    computed = rotary.ok() ? ComputeHfCosSin(*rotary, layout, rows) : rotary.status();
  }
  HfCosSin cos_sin = ValueOrThrow(std::move(computed));
  const std::vector<py::ssize_t> shape(cos_sin.shape.begin(), cos_sin.shape.end());
  return py::make_tuple(MoveToNumpy(std::move(cos_sin.cos), shape),
                        MoveToNumpy(std::move(cos_sin.sin), shape));
}

template <typename Out>
PositionResult<Out> FillOrThrow(const PositionService& service, const BatchPlan& plan,
                                const OutputOptions& options) {
  absl::StatusOr<PositionResult<Out>> result;
  {
    py::gil_scoped_release release;
    result = service.Fill<Out>(plan, options);
  }
  return ValueOrThrow(std::move(result));
}

// [B, 1] deltas in the output type, as get_rope_index returns them.
template <typename Out>
py::array DeltaColumn(const BatchPlan& plan, double RowLayout::*delta) {
  std::vector<Out> values = PerRowDeltas<Out>(plan, delta);
  const auto rows = static_cast<py::ssize_t>(values.size());
  return MoveToNumpy(std::move(values), {rows, 1});
}

// The planned positions of one prompt: any window, decode steps or cos/sin, without re-planning.
class Plan {
 public:
  Plan(std::shared_ptr<const PositionService> service, BatchPlan plan)
      : service_(std::move(service)), plan_(std::move(plan)) {}

  py::array Positions(std::optional<int64_t> begin, std::optional<int64_t> end,
                      std::optional<int> cp_size, std::optional<int> cp_rank) const {
    OutputOptions options = Options(begin, end, "positions");
    if (cp_size.has_value() != cp_rank.has_value()) {
      throw py::value_error("positions: give both cp_size and cp_rank, or neither");
    }
    if (cp_size.has_value()) options.context_parallel = ContextParallel{*cp_size, *cp_rank};
    return WithPositionType(plan_.float_positions, [&](auto zero) {
      auto result = FillOrThrow<decltype(zero)>(*service_, plan_, options);
      return MoveToNumpy(std::move(result.position_ids), Shape(result.shape));
    });
  }

  // (positions, token_index, cu_seqlens) of rank cp_rank's slice (OutputOptions's
  // context_parallel), padded or packed.
  py::tuple ContextParallelSlice(int cp_size, int cp_rank, bool packed) const {
    OutputOptions options;
    options.layout = packed ? OutputLayout::kPacked : OutputLayout::kPadded;
    options.context_parallel = ContextParallel{cp_size, cp_rank};
    return WithPositionType(plan_.float_positions, [&](auto zero) {
      auto result = FillOrThrow<decltype(zero)>(*service_, plan_, options);
      const auto tokens = static_cast<py::ssize_t>(result.cp_token_index.size());
      const auto sequences = static_cast<py::ssize_t>(result.cu_seqlens.size());
      return py::make_tuple(MoveToNumpy(std::move(result.position_ids), Shape(result.shape)),
                            MoveToNumpy(std::move(result.cp_token_index), {tokens}),
                            MoveToNumpy(std::move(result.cu_seqlens), {sequences}));
    });
  }

  py::array DecodePositions(int64_t steps) const {
    if (steps < 1) throw py::value_error(absl::StrCat("steps must be >= 1, got ", steps));
    OutputOptions options;
    options.window = TokenWindow{0, 1};  // the smallest prompt output; only decode is kept
    options.decode_steps = steps;
    return WithPositionType(plan_.float_positions, [&](auto zero) {
      auto result = FillOrThrow<decltype(zero)>(*service_, plan_, options);
      return MoveToNumpy(std::move(result.decode_position_ids),
                         {plan_.num_axes, plan_.batch_size, steps});
    });
  }

  // layout "pairs": [B, W, rotary_dim / 2], one value per pair; "hf": as the family's rotary
  // module in transformers `transformers` (default: the installed one) returns them
  // (mrope/rotary/hf_cos_sin.h).
  py::tuple CosSin(std::optional<int64_t> begin, std::optional<int64_t> end,
                   const std::string& layout,
                   const std::optional<std::string>& transformers) const {
    if (layout != "pairs" && layout != "hf") {
      throw py::value_error(
          absl::StrCat("cos_sin: layout must be 'pairs' or 'hf', got '", layout, "'"));
    }
    if (layout == "pairs" && transformers.has_value()) {
      throw py::value_error("cos_sin: transformers= chooses the 'hf' layout's release; "
                            "layout 'pairs' has none");
    }
    const CosSinLayout hf_layout =
        layout == "hf" ? HfCosSinLayout(FamilyOf(service_->spec().positions),
                                        ReleaseOf(transformers))
                       : CosSinLayout::kCat;
    if (layout == "hf" && hf_layout == CosSinLayout::kPerAxis) return PerAxisCosSin(begin, end);
    OutputOptions options = Options(begin, end, "cos_sin");
    options.cos_sin = true;
    return WithPositionType(plan_.float_positions, [&](auto zero) {
      auto result = FillOrThrow<decltype(zero)>(*service_, plan_, options);
      const py::ssize_t rows = result.shape[1], tokens = result.shape[2];
      if (result.per_element) {  // XD-RoPE: element d's own, HF's cat layout
        if (layout == "pairs" || hf_layout != CosSinLayout::kCat) {
          throw py::value_error(
              "cos_sin: XD-RoPE gives a pair's two elements their own cos/sin: layout='hf' "
              "(one per element) holds them, layout='pairs' cannot");
        }
        const std::vector<py::ssize_t> shape = {rows, tokens, result.cos_sin_columns()};
        return py::make_tuple(MoveToNumpy(std::move(result.cos), shape),
                              MoveToNumpy(std::move(result.sin), shape));
      }
      if (layout == "pairs") {
        const std::vector<py::ssize_t> shape = {rows, tokens, result.num_pairs};
        return py::make_tuple(MoveToNumpy(std::move(result.cos), shape),
                              MoveToNumpy(std::move(result.sin), shape));
      }
      // Each pair's value in the columns the layout gives it.
      const int rotary_dim = 2 * result.num_pairs;
      std::vector<float> cos, sin;
      cos.reserve(result.cos.size() * 2);
      sin.reserve(result.sin.size() * 2);
      for (int64_t token = 0; token < rows * tokens; ++token) {
        for (int d = 0; d < rotary_dim; ++d) {
          const int64_t i = token * result.num_pairs + CosSinColumnPair(hf_layout, d, rotary_dim);
          cos.push_back(result.cos[i]);
          sin.push_back(result.sin[i]);
        }
      }
      const std::vector<py::ssize_t> shape = {rows, tokens, rotary_dim};
      return py::make_tuple(MoveToNumpy(std::move(cos), shape),
                            MoveToNumpy(std::move(sin), shape));
    });
  }

  py::array Deltas() const {
    return WithPositionType(plan_.float_positions,
                            [&](auto zero) {
                              return DeltaColumn<decltype(zero)>(plan_, &RowLayout::delta);
                            });
  }

  py::array RopeDeltas() const {
    return WithPositionType(plan_.float_positions, [&](auto zero) {
      return DeltaColumn<decltype(zero)>(plan_, &RowLayout::decode_delta);
    });
  }

  // An EVS request's vLLM defects: (feature, rule, what, reproduced) tuples.
  py::list VllmDefects() const {
    py::list out;
    if (plan_.evs == nullptr) return out;
    for (const VllmDefect& d : plan_.evs->vllm_defects()) {
      out.append(py::make_tuple(d.feature, d.rule, d.what, d.reproduced));
    }
    return out;
  }

  int64_t batch_size() const { return plan_.batch_size; }
  int64_t seq_len() const { return plan_.seq_len; }

  std::vector<int64_t> RowLengths() const {
    std::vector<int64_t> lengths;
    if (plan_.evs != nullptr) lengths.push_back(plan_.evs->num_tokens());
    for (const SequencePositions& row : plan_.rows) lengths.push_back(row.num_tokens());
    return lengths;
  }

 private:
  static std::vector<py::ssize_t> Shape(const std::vector<int64_t>& shape) {
    return std::vector<py::ssize_t>(shape.begin(), shape.end());
  }

  // [3, B, W, rotary_dim]: every pair at each axis's position (the families with integer
  // positions whose reference module returns per-axis cos/sin, transformers v4.57.6's Qwen2-VL).
  py::tuple PerAxisCosSin(std::optional<int64_t> begin, std::optional<int64_t> end) const {
    if (plan_.float_positions) {
      throw py::value_error("cos_sin: layout 'hf' is per-axis only for integer positions");
    }
    const PositionResult<int64_t> result =
        FillOrThrow<int64_t>(*service_, plan_, Options(begin, end, "cos_sin"));
    const int64_t rows = result.shape[1], tokens = result.shape[2];
    const int64_t max_position =
        result.position_ids.empty() ? 0 : *absl::c_max_element(result.position_ids);
    std::vector<PositionsView> views;
    for (int64_t b = 0; b < rows; ++b) {
      views.push_back({result.position_ids.data() + b * tokens, true, tokens, rows * tokens});
    }
    return HfCosSinArrays(service_->spec(), CosSinLayout::kPerAxis, views, max_position);
  }

  static OutputOptions Options(std::optional<int64_t> begin, std::optional<int64_t> end,
                               const char* name) {
    OutputOptions options;
    if (begin.has_value() != end.has_value()) {
      throw py::value_error(absl::StrCat(name, ": give both begin and end, or neither"));
    }
    if (begin.has_value()) options.window = TokenWindow{*begin, *end};
    return options;
  }

  std::shared_ptr<const PositionService> service_;
  BatchPlan plan_;
};

using VllmFeatureTuple = std::tuple<std::string, int64_t, int64_t, std::array<int64_t, 3>,
                                    std::optional<double>>;

// A model: its PositionService, built once. Immutable, so shared freely across threads.
class Model {
 public:
  explicit Model(ModelSpec spec, std::optional<ConfigFile> config = std::nullopt)
      : service_(std::make_shared<const PositionService>(
            ValueOrThrow(PositionService::Create(std::move(spec))))),
        policy_(PolicyFor(service_->spec().positions)),
        config_(std::move(config)) {}

  // LoadModelSpec, keeping the config file it read (pickling sends its contents).
  static std::shared_ptr<Model> Load(const std::string& preset_or_path) {
    std::optional<ConfigFile> config = ValueOrThrow(ReadConfigFile(preset_or_path));
    if (!config.has_value()) {
      return std::make_shared<Model>(ValueOrThrow(LoadModelSpec(preset_or_path)));
    }
    return FromConfigFile(std::move(config->path), std::move(config->text));
  }

  static std::shared_ptr<Model> FromConfigFile(std::string path, std::string text) {
    ConfigFile config{std::move(path), std::move(text)};
    ModelSpec spec = ValueOrThrow(ModelSpecFromConfigFile(config));
    return std::make_shared<Model>(std::move(spec), std::move(config));
  }

  // A preset with some of its values replaced: `overrides_json` is an object of the golden
  // files' flat `config` keys (mrope/service/preset_overrides.h).
  static std::shared_ptr<Model> WithOverrides(const std::string& preset,
                                              const std::string& overrides_json) {
    return std::make_shared<Model>(
        ValueOrThrow(PresetModelSpecWithOverrides(preset, overrides_json)));
  }

  // (preset, overrides_json) of a golden case file's model, for WithOverrides
  // (mrope/service/case_model.h: its provenance keys dropped).
  static std::pair<std::string, std::string> CaseOverrides(const std::string& case_json) {
    const CaseModel model = ValueOrThrow(CaseModelOf(ValueOrThrow(ParseJson(case_json))));
    std::string overrides_json;
    const auto printed =
        google::protobuf::util::MessageToJsonString(model.overrides, &overrides_json);
    if (!printed.ok()) throw std::runtime_error(std::string(printed.message()));
    return {model.preset, overrides_json};
  }

  Plan MakePlan(py::handle input_ids, py::handle image_grid_thw, py::handle video_grid_thw,
                const py::dict& options) const {
    const BatchInput in = ReadBatch(input_ids, image_grid_thw, video_grid_thw, options);
    absl::StatusOr<BatchPlan> plan;
    {
      py::gil_scoped_release release;
      plan = service_->Plan(in.prompt);
    }
    return Plan(service_, ValueOrThrow(std::move(plan)));
  }

  // vLLM's get_mrope_input_positions(input_tokens, mm_features): `features` as (modality,
  // offset, length, (t, h, w), second_per_grid_ts or None) tuples, read from vLLM's feature
  // objects by the Python side; keep_masks given: the videos were pruned by EVS.
  Plan MakeVllmPlan(py::handle input_tokens, const std::vector<VllmFeatureTuple>& features,
                    py::handle keep_masks, const std::string& embed_dtype,
                    std::optional<double> video_pruning_rate) const {
    const py::array_t<int64_t> tokens = ReadInt64Array(input_tokens, "input_tokens");
    if (tokens.ndim() != 1) {
      throw py::value_error(absl::StrCat("input_tokens: expected a flat list, got ",
                                         tokens.ndim(), " dimensions"));
    }
    VllmRequest request;
    request.input_tokens = absl::MakeConstSpan(tokens.data(), tokens.size());
    for (const auto& [modality, offset, length, grid, seconds] : features) {
      if (modality != "image" && modality != "video") {
        throw py::value_error(absl::StrCat("mm_features[", request.features.size(),
                                           "].modality must be 'image' or 'video', got '",
                                           modality, "'"));
      }
      MultiModalFeature& f = request.features.emplace_back();
      f.modality = modality == "image" ? Modality::kImage : Modality::kVideo;
      f.offset = offset;
      f.length = length;
      f.grid = {grid[0], grid[1], grid[2]};
      f.second_per_grid = seconds.value_or(1.0);
    }
    Prompt prompt;
    if (keep_masks.is_none()) {
      prompt.vllm = std::move(request);
    } else {
      VllmEvsRequest& evs = prompt.vllm_evs.emplace();
      evs.pruned = std::move(request);
      for (const py::handle mask : keep_masks) {
        evs.keep_masks.push_back(ReadInt64s(mask, "keep_masks"));
      }
      if (embed_dtype != "bfloat16" && embed_dtype != "float32") {
        throw py::value_error(absl::StrCat("embed_dtype must be 'bfloat16' or 'float32', got '",
                                           embed_dtype, "'"));
      }
      evs.embed_dtype = embed_dtype == "float32" ? EmbedDType::kFloat32 : EmbedDType::kBfloat16;
      evs.video_pruning_rate = video_pruning_rate;
    }
    absl::StatusOr<BatchPlan> plan;
    {
      py::gil_scoped_release release;
      plan = service_->Plan(prompt);
    }
    return Plan(service_, ValueOrThrow(std::move(plan)));
  }

  // (agree, report) of the batch under each of `conventions` (mrope/service/compare.h).
  py::tuple Compare(py::handle input_ids, py::handle image_grid_thw, py::handle video_grid_thw,
                    const py::dict& options, const std::vector<std::string>& conventions) const {
    const BatchInput in = ReadBatch(input_ids, image_grid_thw, video_grid_thw, options);
    std::vector<Convention> parsed;
    for (const std::string& name : conventions) {
      parsed.push_back(ValueOrThrow(ParseConvention(name)));
    }
    absl::StatusOr<ConventionComparison> comparison;
    {
      py::gil_scoped_release release;
      comparison = CompareConventions(service_->spec(), in.prompt, parsed);
    }
    const ConventionComparison out = ValueOrThrow(std::move(comparison));
    return py::make_tuple(out.agree, out.report);
  }

  py::tuple GetRopeIndex(py::handle input_ids, py::handle image_grid_thw,
                         py::handle video_grid_thw, const py::dict& options) const {
    const BatchInput in = ReadBatch(input_ids, image_grid_thw, video_grid_thw, options);
    return WithPositionType(service_->float_positions(), [&](auto zero) {
      using Out = decltype(zero);
      absl::StatusOr<PositionResult<Out>> computed;
      {
        py::gil_scoped_release release;
        OutputOptions options;
        options.rope_index_padding = true;  // get_rope_index's own padding
        computed = service_->Compute<Out>(in.prompt, options);
      }
      PositionResult<Out> result = ValueOrThrow(std::move(computed));
      const auto rows = static_cast<py::ssize_t>(result.mrope_position_deltas.size());
      return py::make_tuple(
          MoveToNumpy(std::move(result.position_ids),
                      {result.shape[0], result.shape[1], result.shape[2]}),
          MoveToNumpy(std::move(result.mrope_position_deltas), {rows, 1}));
    });
  }

  // The family's text rotary module's forward(x, position_ids) in transformers `transformers`
  // (default: the installed one): position_ids [num_axes, B, T] (or [B, T]: every axis the
  // same) integers.
  py::tuple CosSin(py::handle position_ids, const std::optional<std::string>& transformers) const {
    const py::array_t<int64_t> positions = ReadInt64Array(position_ids, "position_ids");
    const bool planar = positions.ndim() == 3;
    const int32_t axes = spec().positions.num_axes;
    if (!(planar && positions.shape(0) == axes) && positions.ndim() != 2) {
      throw py::value_error(absl::StrCat("position_ids: expected [", axes,
                                         ", batch, tokens] or [batch, tokens]"));
    }
    const int64_t rows = positions.shape(planar ? 1 : 0);
    const int64_t tokens = positions.shape(planar ? 2 : 1);
    std::vector<PositionsView> views;
    for (int64_t b = 0; b < rows; ++b) {
      views.push_back({positions.data() + b * tokens, true, tokens, planar ? rows * tokens : 0});
    }
    const int64_t max_position =
        positions.size() == 0 ? 0 : *std::max_element(positions.data(),
                                                       positions.data() + positions.size());
    return HfCosSinArrays(
        spec(), HfCosSinLayout(FamilyOf(spec().positions), ReleaseOf(transformers)), views,
        max_position);
  }

  // The model with the rotary of its layer type `layer_type` (ModelSpecForLayerType).
  std::shared_ptr<Model> ForLayerType(const std::string& layer_type) const {
    return std::make_shared<Model>(ValueOrThrow(ModelSpecForLayerType(spec(), layer_type)));
  }

  const ModelSpec& spec() const { return service_->spec(); }
  const PositionPolicy& policy() const { return policy_; }
  bool float_positions() const { return service_->float_positions(); }
  const std::optional<ConfigFile>& config() const { return config_; }

 private:
  std::shared_ptr<const PositionService> service_;
  PositionPolicy policy_;
  std::optional<ConfigFile> config_;  // the file it was loaded from; none for presets
};

// Qwen2.5-VL's time index reads second_per_grid_ts (HF's name); Omni reads
// video_second_per_grid.
bool ReadsSecondPerGridTs(const PositionPolicy& policy) {
  return policy.video_time == TimeIndex::kTruncateIntervalFirst ||
         policy.video_time == TimeIndex::kScaleThenTruncate;
}

constexpr char kPromptArgsDoc[] =
    "input_ids: [B, L] integers; image_grid_thw and video_grid_thw: [N, 3] (t, h, w) rows for "
    "the whole batch, row 0 first, or None; options: a dict of the optional arguments by name "
    "(absent ones are None): attention_mask ([B, L] of 0/1), second_per_grid_ts (Qwen2.5-VL) "
    "or video_second_per_grid (HF: second_per_grids; Omni): one float per video, "
    "audio_feature_lengths (HF: audio_seqlens; Omni): mel frames per audio clip, "
    "use_audio_in_video (Omni), mm_token_type_ids ([B, L] of 0 text, 1 image, 2 video: blocks "
    "from its runs), images_per_sample (GLM-Image: grids per row). Unknown names raise "
    "TypeError.";

constexpr char kHfCosSinDoc[] =
    "the layout of the family's rotary module in transformers `transformers` (a release such "
    "as '5.23.0'; default: the installed transformers' version). From 5.17 on (PR #48105) "
    "[B, W, rotary_dim] with the sections applied, column d on the axis of pair d mod "
    "rotary_dim / 2, or d // 2 where the rotation pairs (2j, 2j + 1) (GLM-4.1V, GLM-4.6V, "
    "GLM-OCR, ERNIE-4.5-VL). Before 5.17 the same with pair d mod rotary_dim / 2 (ERNIE: d // "
    "2), except [3, B, W, rotary_dim], every pair at each axis's position, for the families "
    "whose apply_multimodal_rotary_pos_emb picked the axes (Qwen2-VL, Qwen2.5-VL, "
    "Qwen2.5-Omni, PaddleOCR-VL, and in 4.x GLM-4.1V and GLM-4.5V). Needs the model's rotary "
    "parameters.";

void DefineModule(py::module_& m) {
  m.doc() = "mrope's C++ position service over numpy arrays (use the `mrope` package).";

  m.def("presets", &PresetNames,
        "The preset names Model.from_config accepts: every model family and its variants "
        "(e.g. 'qwen2_5_vl_hf', 'qwen2_5_vl_vllm'), in the family table's order.");

  m.def(
      "convention_preset",
      [](const std::string& family, const std::string& spec) {
        const ModelFamily f = ValueOrThrow(ParseModelFamily(family));
        const std::string resolved =
            spec == "installed"
                ? "transformers==" + InstalledTransformers("convention='installed' reads the "
                                                           "installed transformers' release")
                : spec;
        return ValueOrThrow(ConventionPreset(f, ValueOrThrow(ResolveConvention(f, resolved))));
      },
      "family"_a, "spec"_a,
      "The preset of `family` under convention `spec` (a name, an alias, "
      "'transformers==5.23.0' or 'installed': the installed transformers' release), resolved "
      "by mrope/model/conventions.h; ValueError naming the releases verified for the family.");
  m.def(
      "conventions",
      [] {
        py::list out;
        for (const ConventionRelease& entry : ConventionReleases()) {
          const ModelFamilyInfo& row = FamilyInfo(entry.family);
          const auto preset = ConventionPreset(entry.family, entry.convention);
          py::dict d;
          d["family"] = std::string(row.name);
          d["name"] = std::string(ConventionReleaseName(entry.convention));
          d["aliases"] = std::vector<std::string>{
              std::string(ConventionName(entry.convention)), preset.ok() ? *preset : ""};
          d["reference"] = std::string(ConventionReference(entry.convention));
          d["first"] = entry.first.empty() ? py::object(py::none())
                                           : py::object(py::str(std::string(entry.first)));
          d["last"] = entry.last.empty() ? py::object(py::none())
                                         : py::object(py::str(std::string(entry.last)));
          d["verified"] = std::string(entry.verified);
          out.append(d);
        }
        return out;
      },
      "Every (family, convention) of mrope/model/conventions.h's table, in its order.");
  m.def(
      "preset_position_keys",
      [](const std::string& preset) { return ValueOrThrow(PresetPositionKeys(preset)); },
      "preset"_a,
      "The position keys Model.from_config(preset, overrides) takes: the family's token ids, "
      "merge and time scales (as a checkpoint's config.json names them), video_time_rounding "
      "where the family reads it (mrope/service/preset_overrides.h).");

  py::class_<Plan>(m, "Plan",
                   "The planned positions of a prompt: windows, decode steps and cos/sin of it "
                   "without planning again.")
      .def("positions", &Plan::Positions, "begin"_a = py::none(), "end"_a = py::none(),
           py::kw_only(), "cp_size"_a = py::none(), "cp_rank"_a = py::none(),
           "Positions [3, B, L] of the padded batch (padding slots as the model's convention "
           "has them; HunYuan-VL: one plane per mrope_section entry in place of 3, here and "
           "below), or, with begin and end, [3, B, end - begin] of token indices "
           "[begin, end) of every row's own tokens (padding removed). Indices at or beyond a "
           "row's length are decode steps: index + the row's delta on every axis (HunYuan-VL: "
           "the row's last token + 1 + k, axis by axis). With "
           "cp_size and cp_rank (context parallelism, no window): [3, B, L / cp_size], rank "
           "cp_rank's two chunks of every row of the padded batch as given, as Megatron-LM / "
           "TransformerEngine cut them (L a multiple of 2 * cp_size): each real token at its "
           "own position wherever the padding sits, decode steps after a row's last real "
           "token, get_rope_index's pad value in other padding slots; cp_slice gives their "
           "token indices.")
      .def("cp_slice", &Plan::ContextParallelSlice, "cp_size"_a, "cp_rank"_a, py::kw_only(),
           "packed"_a = false,
           "(positions, token_index, cu_seqlens) of context-parallel rank cp_rank: positions "
           "as positions(cp_size=, cp_rank=) gives them, or with packed=True [3, N] of every "
           "row's own tokens (each row's length a multiple of 2 * cp_size); token_index [N] "
           "int64, each token's index in the batch (padded: row * L + column, so "
           "input_ids.reshape(-1)[token_index] gathers it; packed: in the rows' own tokens "
           "back to back), what to gather q, k and labels by; cu_seqlens the rank's local "
           "{0, n0, n0 + n1, ...}.")
      .def("decode_positions", &Plan::DecodePositions, "steps"_a,
           "Positions [3, B, steps] of the next `steps` generated tokens, as generate() gives "
           "them.")
      .def("cos_sin", &Plan::CosSin, "begin"_a = py::none(), "end"_a = py::none(),
           py::kw_only(), "layout"_a = "pairs", "transformers"_a = py::none(),
           (std::string("(cos, sin) float32 of the tokens positions() gives for the same "
                        "arguments (W = L or end - begin). layout='pairs': each [B, W, "
                        "rotary_dim / 2], pair j's value on its axis. layout='hf': ") +
            kHfCosSinDoc)
               .c_str())
      .def_property_readonly("mrope_position_deltas", &Plan::Deltas,
                             "[B, 1]: get_rope_index's second return.")
      .def_property_readonly("rope_deltas", &Plan::RopeDeltas,
                             "[B, 1]: what generation adds to the cache position (Omni: the "
                             "deltas less each row's padding).")
      .def_property_readonly("batch_size", &Plan::batch_size)
      .def_property_readonly("seq_len", &Plan::seq_len)
      .def_property_readonly("row_lengths", &Plan::RowLengths,
                             "Each row's own token count (padding removed).")
      .def_property_readonly("vllm_defects", &Plan::VllmDefects,
                             "EVS requests: where vLLM computes otherwise, as (feature, rule, "
                             "what, reproduced) tuples (mrope/positions/vllm_evs.h).");

  py::class_<Model, std::shared_ptr<Model>>(m, "Model", "A model's position service.")
      .def_static("load", &Model::Load, "preset_or_path"_a,
                  "A preset name, an HF config.json, a checkpoint directory or a ModelParams "
                  "textproto (mrope/service/model_spec.h LoadModelSpec).")
      .def_static("from_config_file", &Model::FromConfigFile, "path"_a, "text"_a,
                  "Model.load of a config file already read (`path` picks the parser and "
                  "names the model).")
      .def_static("with_overrides", &Model::WithOverrides, "preset"_a, "overrides_json"_a,
                  "A preset with some of its values replaced: a JSON object of the golden "
                  "files' flat config keys (unknown keys raise ValueError listing the "
                  "preset's keys).")
      .def_static("case_model", &Model::CaseOverrides, "case_json"_a,
                  "(preset, overrides_json) of a golden case file's model (tests/golden): its "
                  "preset and its config without the provenance keys.")
      .def("plan", &Model::MakePlan, "input_ids"_a, "image_grid_thw"_a, "video_grid_thw"_a,
           "options"_a, (std::string("Plans a padded batch. ") + kPromptArgsDoc).c_str())
      .def("plan_vllm", &Model::MakeVllmPlan, "input_tokens"_a, "features"_a, "keep_masks"_a,
           "embed_dtype"_a, "video_pruning_rate"_a,
           "Plans vLLM's get_mrope_input_positions(input_tokens, mm_features) request "
           "(features as (modality, offset, length, (t, h, w), second_per_grid_ts) tuples; "
           "keep_masks not None: EVS-pruned videos).")
      .def("compare", &Model::Compare, "input_ids"_a, "image_grid_thw"_a, "video_grid_thw"_a,
           "options"_a, "conventions"_a,
           "(agree, report): the batch under each convention (mrope explain --compare).")
      .def("get_rope_index", &Model::GetRopeIndex, "input_ids"_a, "image_grid_thw"_a,
           "video_grid_thw"_a, "options"_a,
           (std::string("(position_ids [3, B, L], mrope_position_deltas [B, 1]). ") +
            kPromptArgsDoc)
               .c_str())
      .def("cos_sin", &Model::CosSin, "position_ids"_a, py::kw_only(),
           "transformers"_a = py::none(),
           (std::string("(cos, sin) float32 of position_ids ([3, B, T] or [B, T] integers) as "
                        "the family's text rotary module's forward(x, position_ids) returns "
                        "them (before its cast to x's dtype): ") +
            kHfCosSinDoc)
               .c_str())
      .def_property_readonly("name", [](const Model& model) { return model.spec().name; })
      .def_property_readonly(
          "family",
          [](const Model& model) {
            return std::string(model.spec().positions.rules->name);
          })
      .def_property_readonly("float_positions", &Model::float_positions,
                             "True when positions are float32 (Qwen3-Omni), else int64.")
      .def_property_readonly(
          "rope_index_arguments",
          [](const Model& model) {
            std::vector<std::string> names;
            for (const absl::string_view name :
                 RopeIndexArguments(FamilyOf(model.spec().positions).family,
                                    model.policy().convention)) {
              names.emplace_back(name);
            }
            return names;
          },
          "get_rope_index's arguments after input_ids in the positional order of the "
          "family's reference under the model's convention (model_family.h).")
      .def_property_readonly(
          "reads_second_per_grid_ts",
          [](const Model& model) { return ReadsSecondPerGridTs(model.policy()); })
      .def_property_readonly(
          "convention",
          [](const Model& model) {
            return std::string(ConventionRulesOf(model.policy().convention).name);
          })
      .def_property_readonly(
          "config_file",
          [](const Model& model) -> std::optional<std::pair<std::string, std::string>> {
            if (!model.config().has_value()) return std::nullopt;
            return std::make_pair(model.config()->path, model.config()->text);
          },
          "(path, contents) of the config file it was loaded from; None for a preset.")
      .def_property_readonly("has_rope",
                             [](const Model& model) { return model.spec().rope.has_value(); })
      .def("for_layer_type", &Model::ForLayerType, "layer_type"_a,
           "The model with the rotary of its attention layer type `layer_type` (models whose "
           "rotary is per layer type: Cohere Compass); has_rope is False for a NoPE type.")
      .def_property_readonly(
          "layer_types", [](const Model& model) { return model.spec().layer_types; },
          "Each layer's attention type, for a model whose rotary is per layer type; else "
          "empty.");
}

}  // namespace
}  // namespace python
}  // namespace mrope

PYBIND11_MODULE(_mrope, m) { mrope::python::DefineModule(m); }
