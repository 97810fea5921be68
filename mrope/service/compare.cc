#include "mrope/service/compare.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "mrope/common/status_macros.h"
#include "mrope/model/model_family.h"

namespace mrope {
namespace {

// One convention's outputs: packed positions [3][total], per-row deltas and first decode steps.
struct Outcome {
  Convention convention;
  std::vector<double> positions;
  std::vector<int64_t> cu_seqlens;
  std::vector<double> deltas;
  std::vector<double> decode;  // [3][B]
};

template <typename Out>
absl::StatusOr<Outcome> Run(const PositionService& service, const Prompt& prompt) {
  MROPE_ASSIGN_OR_RETURN(const BatchPlan plan, service.Plan(prompt));
  OutputOptions options;
  options.layout = OutputLayout::kPacked;
  options.decode_steps = 1;
  MROPE_ASSIGN_OR_RETURN(const PositionResult<Out> r, service.Fill<Out>(plan, options));
  Outcome out;
  out.positions.assign(r.position_ids.begin(), r.position_ids.end());
  out.cu_seqlens = r.cu_seqlens;
  out.deltas.assign(r.mrope_position_deltas.begin(), r.mrope_position_deltas.end());
  out.decode.assign(r.decode_position_ids.begin(), r.decode_position_ids.end());
  return out;
}

std::string Triple(const std::vector<double>& planar, int64_t stride, int64_t at) {
  return absl::StrCat("(", planar[at], ", ", planar[stride + at], ", ", planar[2 * stride + at],
                      ")");
}

// The prompt as every convention can plan it: a vLLM request becomes its one-row batch (its
// grids in offset order, its seconds per grid), and a batch without mm_token_type_ids gets them
// from the ids (1 on image tokens, 2 on video tokens, as the processors' create_mm_token_type_ids)
// for the conventions that read them. The vectors hold what prompt.batch views.
struct ComparedPrompt {
  Prompt prompt;
  std::vector<int64_t> ids;
  std::vector<int64_t> types;
};

absl::StatusOr<ComparedPrompt> ForComparison(const ModelConfig& config, const Prompt& prompt) {
  if (prompt.vllm_evs.has_value()) {
    return absl::InvalidArgumentError(
        "--compare: an EVS-pruned request has one convention, vLLM's (see explain)");
  }
  if (!prompt.sequences.empty()) {
    return absl::InvalidArgumentError(
        "--compare takes token ids (a batch or a vLLM request), not explicit sequences");
  }
  ComparedPrompt out;
  out.prompt = prompt;
  PromptBatch& batch = out.prompt.batch;
  if (prompt.vllm.has_value()) {
    MROPE_ASSIGN_OR_RETURN(const std::vector<const MultiModalFeature*> sorted,
                           SortedFeatures(config, *prompt.vllm, PositionLimits()));
    out.prompt.vllm.reset();
    out.ids.assign(prompt.vllm->input_tokens.begin(), prompt.vllm->input_tokens.end());
    batch = PromptBatch();
    batch.batch_size = 1;
    batch.seq_len = static_cast<int64_t>(out.ids.size());
    for (const MultiModalFeature* f : sorted) {
      if (f->modality == Modality::kImage) {
        batch.media.image_grid_thw.push_back(f->grid);
      } else {
        batch.media.video_grid_thw.push_back(f->grid);
        batch.media.second_per_grid_ts.push_back(f->second_per_grid);
      }
    }
    if (PolicyFor(config).seconds_list != SecondsList::kSecondPerGridTs) {
      batch.media.second_per_grid_ts.clear();
    }
  } else {
    out.ids.assign(batch.input_ids.begin(), batch.input_ids.end());
  }
  batch.input_ids = out.ids;
  if (batch.mm_token_type_ids.empty()) {
    for (const int64_t id : out.ids) {
      out.types.push_back(id == config.tokens.image ? 1 : id == config.tokens.video ? 2 : 0);
    }
    batch.mm_token_type_ids = out.types;
  }
  return out;
}

// What a divergence shows: a different time index (t alone differs), a different cursor (text or
// the whole block moves), or the same prompt positions with other deltas or decode positions.
enum class Divergence { kTime, kCursor, kTail };

// A rule of ConventionRules in words, for the rules that make conventions differ.
struct RuleText {
  Divergence shows;
  const char* what;
  std::function<std::string(const ConventionRules&)> value;
};

// The rules that can differ for a family: all conventions' batch rules, plus Qwen2.5-VL's
// image and video time where the family has them.
std::vector<RuleText> Rules(const PositionPolicy& family) {
  std::vector<RuleText> rules = {
      {Divergence::kCursor, "text after a vision block resumes at",
       [](const ConventionRules& r) {
         return std::string(r.block_end == BlockEnd::kMaxPlusOne ? "the block's max + 1"
                                                                 : "its start + max(h, w)/merge");
       }},
      {Divergence::kTail, "decode continues",
       [](const ConventionRules& r) {
         return std::string(r.decode == DecodeRule::kCachePlusDelta
                                ? "at cache position + delta on all axes"
                                : "per axis from the prompt's last column + 1");
       }},
      {Divergence::kTail, "get_rope_index's delta is against",
       [](const ConventionRules& r) {
         return std::string(r.delta_against_unpadded ? "the unpadded length" : "the padded length");
       }},
      {Divergence::kTail, "text-only batches",
       [](const ConventionRules& r) {
         return std::string(r.text_only == TextOnlyBatch::kRowsNumbered
                                ? "number each row's tokens like any row"
                                : "take cumsum(mask) - 1");
       }},
      {Divergence::kTail, "padding slots come from",
       [](const ConventionRules& r) {
         switch (r.pads) {
           case PadSource::kFamilyV5_2Code:
             return std::string("the family's 5.2 get_rope_index");
           case PadSource::kZero:
             return std::string("0");
           case PadSource::kPolicy:
             break;
         }
         return std::string("the v4 policy");
       }},
  };
  if (family.image_time == TimeIndex::kZero) {
    rules.push_back({Divergence::kTime, "images step t", [](const ConventionRules& r) {
                       return std::string(r.images_step_time ? "by 1 per temporal grid"
                                                             : "by 0 (interval 0)");
                     }});
  }
  if (family.seconds_list == SecondsList::kSecondPerGridTs) {
    rules.push_back({Divergence::kTime, "video time is", [](const ConventionRules& r) {
                       return std::string(
                           r.reference_video_time == VideoTimeRounding::kTruncateIntervalFirst
                               ? "k * trunc(seconds per grid) * tokens_per_second"
                               : "trunc(k * seconds per grid * tokens_per_second)");
                     }});
  }
  return rules;
}

}  // namespace

absl::StatusOr<std::vector<Convention>> ParseConventionList(absl::string_view list) {
  std::vector<Convention> out;
  for (absl::string_view name : absl::StrSplit(list, ',')) {
    MROPE_ASSIGN_OR_RETURN(const Convention c, ParseConvention(name));
    out.push_back(c);
  }
  return out;
}

absl::StatusOr<ConventionComparison> CompareConventions(const ModelSpec& spec,
                                                        const Prompt& prompt,
                                                        absl::Span<const Convention> conventions) {
  if (conventions.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--compare needs at least two conventions, got ", conventions.size()));
  }
  const PositionPolicy family = PolicyFor(spec.positions);
  const bool reads_seconds = family.seconds_list == SecondsList::kSecondPerGridTs;
  MROPE_ASSIGN_OR_RETURN(const ComparedPrompt compared, ForComparison(spec.positions, prompt));
  std::vector<Outcome> outcomes;
  for (const Convention convention : conventions) {
    ModelSpec variant = spec;
    variant.positions.convention = convention;
    if (reads_seconds) {
      variant.positions.video_time_rounding = ConventionRulesOf(convention).reference_video_time;
    }
    auto service = PositionService::Create(variant);
    if (!service.ok()) {
      return absl::Status(service.status().code(),
                          absl::StrCat(ConventionName(convention), ": ",
                                       service.status().message()));
    }
    absl::StatusOr<Outcome> outcome = service->float_positions()
                                          ? Run<float>(*service, compared.prompt)
                                          : Run<int64_t>(*service, compared.prompt);
    if (!outcome.ok()) {
      return absl::Status(outcome.status().code(),
                          absl::StrCat(ConventionName(convention), ": ",
                                       outcome.status().message()));
    }
    outcome->convention = convention;
    outcomes.push_back(*std::move(outcome));
  }
  ConventionComparison out;
  std::vector<std::string> names;
  for (const Outcome& o : outcomes) names.push_back(std::string(ConventionName(o.convention)));
  out.report = absl::StrCat(spec.positions.rules->name, " under ", absl::StrJoin(names, ", "),
                            "\n");
  const Outcome& first = outcomes[0];
  std::optional<Divergence> shown;  // what the first divergence shows
  const int64_t rows = static_cast<int64_t>(first.deltas.size());
  const int64_t total = first.cu_seqlens.back();
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t begin = first.cu_seqlens[row], end = first.cu_seqlens[row + 1];
    absl::StrAppend(&out.report, "row ", row, " (", end - begin, " tokens):\n");
    for (const Outcome& o : outcomes) {
      absl::StrAppend(&out.report, "  ", ConventionName(o.convention), ": delta ", o.deltas[row],
                      ", first decode position ", Triple(o.decode, rows, row), "\n");
    }
    int64_t diverges = -1;
    for (int64_t i = begin; i < end && diverges < 0; ++i) {
      for (const Outcome& o : outcomes) {
        for (int axis = 0; axis < 3; ++axis) {
          if (o.positions[axis * total + i] != first.positions[axis * total + i]) diverges = i;
        }
      }
    }
    bool tail_differs = false;
    for (const Outcome& o : outcomes) {
      tail_differs |= o.deltas[row] != first.deltas[row] ||
                      Triple(o.decode, rows, row) != Triple(first.decode, rows, row);
    }
    if (diverges >= 0 && !shown.has_value()) {
      bool t_only = true;
      for (const Outcome& o : outcomes) {
        for (int axis = 1; axis < 3; ++axis) {
          t_only &= o.positions[axis * total + diverges] ==
                    first.positions[axis * total + diverges];
        }
      }
      shown = t_only ? Divergence::kTime : Divergence::kCursor;
    } else if (tail_differs && !shown.has_value()) {
      shown = Divergence::kTail;
    }
    if (diverges >= 0) {
      absl::StrAppend(&out.report, "  first divergence: token ", diverges - begin, ":");
      for (const Outcome& o : outcomes) {
        absl::StrAppend(&out.report, " ", ConventionName(o.convention), " ",
                        Triple(o.positions, total, diverges));
      }
      out.report += "\n";
    } else if (tail_differs) {
      out.report += "  prompt positions agree; the deltas or decode positions differ\n";
    } else {
      out.report += "  all agree\n";
    }
    out.agree &= diverges < 0 && !tail_differs;
  }
  if (!out.agree) {
    // The rules of the kind the first divergence shows, then the others that differ.
    std::vector<std::string> because, others;
    for (const RuleText& rule : Rules(family)) {
      std::vector<std::pair<std::string, std::vector<std::string>>> values;
      for (const Outcome& o : outcomes) {
        const std::string value = rule.value(ConventionRulesOf(o.convention));
        auto it = std::find_if(values.begin(), values.end(),
                               [&](const auto& v) { return v.first == value; });
        if (it == values.end()) it = values.insert(values.end(), {value, {}});
        it->second.push_back(std::string(ConventionName(o.convention)));
      }
      if (values.size() < 2) continue;
      std::vector<std::string> parts;
      for (const auto& [value, who] : values) {
        parts.push_back(absl::StrCat(value, " (", absl::StrJoin(who, ", "), ")"));
      }
      (rule.shows == *shown ? because : others)
          .push_back(absl::StrCat("  ", rule.what, ": ", absl::StrJoin(parts, "; "), "\n"));
    }
    if (!because.empty()) {
      absl::StrAppend(&out.report, "diverging by the rule", because.size() > 1 ? "s" : "", ":\n",
                      absl::StrJoin(because, ""));
    }
    if (!others.empty()) {
      absl::StrAppend(&out.report, because.empty() ? "rules that differ:\n"
                                                   : "other rules that differ:\n",
                      absl::StrJoin(others, ""));
    }
  }
  absl::StrAppend(&out.report, out.agree ? "conventions agree\n" : "conventions disagree\n");
  return out;
}

}  // namespace mrope
