// HunYuan-VL's XD-RoPE (PositionScheme::kSequentialGrid, num_axes planes) through the service's
// windows, packed layout and context parallelism: on random batches of several images each,
// every such output equals its slice or concatenation of the whole padded result of the same
// service (its decode positions past a row's tokens), with the same deltas, for four and five
// axes and every output type; bad options are refused naming the field and value.

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/rotary/apply.h"
#include "mrope/rotary/rope_params.h"
#include "mrope/rotary/tensor_view.h"
#include "mrope/service/model_spec.h"
#include "mrope/service/position_service.h"
#include "mrope/service/proto_convert.h"
#include "proto/mrope.pb.h"
#include "tests/testing/service_testing.h"

namespace mrope {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

constexpr int64_t kImage = 120120;
constexpr int64_t kStart = 120118;
constexpr int64_t kEnd = 120119;

struct BatchShape {
  int rows = 3;
  int64_t row_multiple = 1;  // each row's own length a multiple of it (packed CP)
  int64_t seq_multiple = 1;  // L a multiple of it (padded CP)
};

// A random hunyuan_vl batch: each row text, then 1 to 3 images (bare grids or between begin and
// end tokens; h, w in {2, 4, 6}) with text between them and maybe after them, left-padded to L.
// Rows may end in a grid (decode continues each axis) and, with many rows, the batch's image
// ordinals pass a short row's length (a positive delta).
v1::PositionRequest RandomBatch(uint32_t seed, const BatchShape& shape) {
  std::mt19937 random(seed);
  const auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(random);
  };
  std::vector<std::vector<int64_t>> ids(shape.rows), types(shape.rows);
  v1::PositionRequest request;
  v1::PromptInputs& inputs = *request.mutable_inputs();
  for (int row = 0; row < shape.rows; ++row) {
    const auto text = [&](int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        ids[row].push_back(uniform(1, 1000));
        types[row].push_back(0);
      }
    };
    text(uniform(1, 4));
    for (int64_t image = uniform(1, 3); image > 0; --image) {
      v1::GridThw& grid = *inputs.add_image_grid_thw();
      grid.set_t(1);
      grid.set_h(2 * uniform(1, 3));
      grid.set_w(2 * uniform(1, 3));
      const bool marked = uniform(0, 1) == 1;
      if (marked) ids[row].push_back(kStart), types[row].push_back(0);
      for (int64_t k = 0; k < grid.h() / 2 * (grid.w() / 2 + 1); ++k) {
        ids[row].push_back(kImage);
        types[row].push_back(1);
      }
      if (marked) ids[row].push_back(kEnd), types[row].push_back(0);
      // A bare grid next to another would make one run; the last may end the row.
      text(image > 1 ? uniform(1, 3) : uniform(0, 2));
    }
    const int64_t n = static_cast<int64_t>(ids[row].size());
    text((shape.row_multiple - n % shape.row_multiple) % shape.row_multiple);
  }
  int64_t l = 0;
  for (const auto& row : ids) l = std::max<int64_t>(l, row.size());
  l += (shape.seq_multiple - l % shape.seq_multiple) % shape.seq_multiple;
  for (int row = 0; row < shape.rows; ++row) {
    const int64_t pad = l - static_cast<int64_t>(ids[row].size());
    v1::TokenRow& id_row = *inputs.add_input_ids();
    v1::TokenRow& mask = *inputs.add_attention_mask();
    v1::TokenRow& type_row = *inputs.add_mm_token_type_ids();
    for (int64_t c = 0; c < l; ++c) {
      id_row.add_ids(c < pad ? 0 : ids[row][c - pad]);
      mask.add_ids(c < pad ? 0 : 1);
      type_row.add_ids(c < pad ? 0 : types[row][c - pad]);
    }
  }
  return request;
}

// hunyuan_vl with `num_axes` axes (one mrope_section entry each).
PositionService Hunyuan(int32_t num_axes) {
  auto spec = PresetModelSpec("hunyuan_vl");
  EXPECT_TRUE(spec.ok()) << spec.status();
  spec->positions.num_axes = num_axes;
  if (num_axes == 5) spec->rope->mrope_section = {16, 16, 16, 8, 8};
  return MakeService(*spec);
}

// The whole padded result [A][B][L] with `decode_steps` decode positions, and the batch's mask.
struct Whole {
  PositionResult<int64_t> result;
  int64_t axes = 0, rows = 0, l = 0, steps = 0;
  std::vector<std::vector<int64_t>> columns;  // each row's real tokens' columns

  // Token i of row `row` on `axis`: its position, or past the row's tokens its decode step.
  int64_t At(int64_t axis, int64_t row, int64_t i) const {
    const int64_t n = static_cast<int64_t>(columns[row].size());
    if (i < n) return result.position_ids[(axis * rows + row) * l + columns[row][i]];
    EXPECT_LT(i - n, steps);
    return result.decode_position_ids[(axis * rows + row) * steps + i - n];
  }

  // [A][rows' own tokens back to back]: the packed layout of the whole.
  std::vector<int64_t> Packed() const {
    std::vector<int64_t> packed;
    for (int64_t axis = 0; axis < axes; ++axis) {
      for (int64_t row = 0; row < rows; ++row) {
        for (size_t i = 0; i < columns[row].size(); ++i) packed.push_back(At(axis, row, i));
      }
    }
    return packed;
  }
};

Whole WholeOf(const PositionService& service, const Prompt& prompt, int64_t steps) {
  OutputOptions options;
  options.decode_steps = steps;
  auto result = service.Compute<int64_t>(prompt, options);
  EXPECT_TRUE(result.ok()) << result.status();
  Whole whole;
  whole.result = *std::move(result);
  whole.axes = whole.result.shape[0];
  whole.rows = whole.result.shape[1];
  whole.l = whole.result.shape[2];
  whole.steps = steps;
  whole.columns.resize(whole.rows);
  for (int64_t row = 0; row < whole.rows; ++row) {
    const absl::Span<const int64_t> mask = prompt.batch.attention_mask;
    for (int64_t c = 0; c < whole.l; ++c) {
      if (mask.empty() || mask[row * whole.l + c] == 1) whole.columns[row].push_back(c);
    }
  }
  return whole;
}

Prompt PromptOf(const v1::PositionRequest& request) {
  auto prompt = PromptFromProto(request);
  EXPECT_TRUE(prompt.ok()) << prompt.status();
  return *std::move(prompt);
}

template <typename Out>
std::vector<int64_t> AsInt64(const PositionBuffer<Out>& values) {
  return std::vector<int64_t>(values.begin(), values.end());
}

// A window [a, b) of every row's own tokens is [A][B][b - a] of the whole result (decode steps
// past a row's tokens), [A][B * (b - a)] packed; the deltas and decode positions are the
// whole's, in every output type.
TEST(SequentialGridServiceTest, WindowsAreSlicesOfTheWhole) {
  int positive_deltas = 0, axes_apart = 0;  // the cases the random batches must reach
  for (const int32_t axes : {4, 5}) {
    const PositionService service = Hunyuan(axes);
    for (uint32_t seed = 0; seed < 8; ++seed) {
      SCOPED_TRACE(::testing::Message() << axes << " axes, seed " << seed);
      const Prompt prompt = PromptOf(RandomBatch(seed, {seed % 2 == 0 ? 3 : 8}));
      const int64_t l = prompt.batch.seq_len;
      const Whole whole = WholeOf(service, prompt, l + 6);
      for (int64_t row = 0; row < whole.rows; ++row) {
        positive_deltas += whole.result.mrope_position_deltas[row] > 0;
        // A row ending in a grid decodes each axis from its own last value.
        axes_apart += whole.At(0, row, l) != whole.At(axes - 1, row, l);
      }
      for (const TokenWindow window : {TokenWindow{0, l}, TokenWindow{1, l - 1},
                                       TokenWindow{l / 2, l + 5}, TokenWindow{l + 2, l + 3}}) {
        SCOPED_TRACE(::testing::Message() << "window [" << window.begin << ", " << window.end
                                          << ")");
        const int64_t w = window.end - window.begin;
        std::vector<int64_t> expected;
        for (int64_t axis = 0; axis < axes; ++axis) {
          for (int64_t row = 0; row < whole.rows; ++row) {
            for (int64_t i = window.begin; i < window.end; ++i) {
              expected.push_back(whole.At(axis, row, i));
            }
          }
        }
        for (const OutputLayout layout : {OutputLayout::kPadded, OutputLayout::kPacked}) {
          OutputOptions options;
          options.window = window;
          options.layout = layout;
          options.decode_steps = 3;
          auto part = service.Compute<int64_t>(prompt, options);
          ASSERT_TRUE(part.ok()) << part.status();
          EXPECT_EQ(AsInt64(part->position_ids), expected);
          if (layout == OutputLayout::kPadded) {
            EXPECT_THAT(part->shape, ElementsAre(axes, whole.rows, w));
            EXPECT_TRUE(part->cu_seqlens.empty());
          } else {
            EXPECT_THAT(part->shape, ElementsAre(axes, whole.rows * w));
            std::vector<int64_t> cu_seqlens;
            for (int64_t row = 0; row <= whole.rows; ++row) cu_seqlens.push_back(row * w);
            EXPECT_EQ(part->cu_seqlens, cu_seqlens);
          }
          EXPECT_EQ(part->mrope_position_deltas, whole.result.mrope_position_deltas);
          EXPECT_EQ(part->rope_deltas, whole.result.rope_deltas);
          for (int64_t axis = 0; axis < axes; ++axis) {
            for (int64_t row = 0; row < whole.rows; ++row) {
              for (int64_t k = 0; k < 3; ++k) {
                EXPECT_EQ(part->decode_position_ids[(axis * whole.rows + row) * 3 + k],
                          whole.result.decode_position_ids[(axis * whole.rows + row) *
                                                               whole.steps + k]);
              }
            }
          }
        }
        OutputOptions options;
        options.window = window;
        auto as_int32 = service.Compute<int32_t>(prompt, options);
        auto as_float = service.Compute<float>(prompt, options);
        ASSERT_TRUE(as_int32.ok() && as_float.ok()) << as_int32.status() << as_float.status();
        EXPECT_EQ(AsInt64(as_int32->position_ids), expected);
        EXPECT_EQ(AsInt64(as_float->position_ids), expected);
      }
    }
  }
  EXPECT_GT(positive_deltas, 0);
  EXPECT_GT(axes_apart, 0);
}

// Packed: every row's own tokens back to back ([A][total], cu_seqlens at the row boundaries),
// the whole's deltas and decode positions.
TEST(SequentialGridServiceTest, PackedIsTheRowsOwnTokens) {
  for (const int32_t axes : {4, 5}) {
    const PositionService service = Hunyuan(axes);
    for (uint32_t seed = 0; seed < 6; ++seed) {
      SCOPED_TRACE(::testing::Message() << axes << " axes, seed " << seed);
      const Prompt prompt = PromptOf(RandomBatch(seed, {}));
      const Whole whole = WholeOf(service, prompt, 4);
      std::vector<int64_t> cu_seqlens = {0};
      for (const auto& columns : whole.columns) {
        cu_seqlens.push_back(cu_seqlens.back() + static_cast<int64_t>(columns.size()));
      }
      const std::vector<int64_t> expected = whole.Packed();
      OutputOptions options;
      options.layout = OutputLayout::kPacked;
      options.decode_steps = 4;
      auto packed = service.Compute<int64_t>(prompt, options);
      ASSERT_TRUE(packed.ok()) << packed.status();
      EXPECT_THAT(packed->shape, ElementsAre(axes, cu_seqlens.back()));
      EXPECT_LT(cu_seqlens.back(), whole.rows * whole.l);  // left padding dropped
      EXPECT_EQ(packed->cu_seqlens, cu_seqlens);
      EXPECT_EQ(AsInt64(packed->position_ids), expected);
      EXPECT_EQ(packed->mrope_position_deltas, whole.result.mrope_position_deltas);
      EXPECT_EQ(packed->rope_deltas, whole.result.rope_deltas);
      EXPECT_EQ(AsInt64(packed->decode_position_ids), AsInt64(whole.result.decode_position_ids));
      auto as_int32 = service.Compute<int32_t>(prompt, options);
      ASSERT_TRUE(as_int32.ok()) << as_int32.status();
      EXPECT_EQ(AsInt64(as_int32->position_ids), expected);
    }
  }
}

// Every rank of cp_size against `whole`, [A][total] row-major (what cp_token_index indexes):
// the rank's [A][n] positions are whole's at its token indices, and the ranks hold each once.
void ExpectRanksSliceTheWhole(const PositionService& service, const Prompt& prompt,
                              OutputOptions options, const std::vector<int64_t>& whole,
                              int64_t axes, int64_t rows, int cp_size) {
  SCOPED_TRACE(::testing::Message() << "cp_size " << cp_size);
  const int64_t total = static_cast<int64_t>(whole.size()) / axes;
  std::vector<int> held(total, 0);
  for (int rank = 0; rank < cp_size; ++rank) {
    options.context_parallel = ContextParallel{cp_size, rank};
    auto part = service.Compute<int64_t>(prompt, options);
    ASSERT_TRUE(part.ok()) << part.status();
    const int64_t n = static_cast<int64_t>(part->position_ids.size()) / axes;
    ASSERT_EQ(n * cp_size, total) << "rank " << rank;
    ASSERT_EQ(static_cast<int64_t>(part->cp_token_index.size()), n);
    ASSERT_EQ(static_cast<int64_t>(part->cu_seqlens.size()), rows + 1);
    EXPECT_EQ(part->cu_seqlens.back(), n);
    if (options.layout == OutputLayout::kPadded) {
      EXPECT_THAT(part->shape, ElementsAre(axes, rows, n / rows));
    } else {
      EXPECT_THAT(part->shape, ElementsAre(axes, n));
    }
    for (int64_t j = 0; j < n; ++j) {
      const int64_t index = part->cp_token_index[j];
      ASSERT_TRUE(index >= 0 && index < total) << index;
      ++held[index];
      for (int64_t axis = 0; axis < axes; ++axis) {
        ASSERT_EQ(part->position_ids[axis * n + j], whole[axis * total + index])
            << "rank " << rank << " token " << j << " axis " << axis;
      }
    }
    EXPECT_EQ(part->mrope_position_deltas.size(), static_cast<size_t>(rows));
  }
  for (int64_t i = 0; i < total; ++i) EXPECT_EQ(held[i], 1) << "token " << i;
}

// Padded: the left-padded batch as given, L a multiple of 12; the ranks slice the whole
// [A][B][L] (get_rope_index's, padding slots 0).
TEST(SequentialGridServiceTest, PaddedRanksSliceTheWhole) {
  for (const int32_t axes : {4, 5}) {
    const PositionService service = Hunyuan(axes);
    for (uint32_t seed = 0; seed < 4; ++seed) {
      SCOPED_TRACE(::testing::Message() << axes << " axes, seed " << seed);
      const Prompt prompt = PromptOf(RandomBatch(seed, {3, 1, 12}));
      const Whole whole = WholeOf(service, prompt, 1);
      const std::vector<int64_t> all = AsInt64(whole.result.position_ids);
      for (const int cp_size : {1, 2, 3, 6}) {
        ExpectRanksSliceTheWhole(service, prompt, {}, all, axes, whole.rows, cp_size);
      }
    }
  }
}

// Packed: each row's own tokens (lengths multiples of 12); the ranks slice the packed whole.
TEST(SequentialGridServiceTest, PackedRanksSliceThePackedWhole) {
  for (const int32_t axes : {4, 5}) {
    const PositionService service = Hunyuan(axes);
    for (uint32_t seed = 0; seed < 4; ++seed) {
      SCOPED_TRACE(::testing::Message() << axes << " axes, seed " << seed);
      const Prompt prompt = PromptOf(RandomBatch(seed, {3, 12, 1}));
      const Whole whole = WholeOf(service, prompt, 1);
      const std::vector<int64_t> packed = whole.Packed();
      OutputOptions options;
      options.layout = OutputLayout::kPacked;
      for (const int cp_size : {1, 2, 3, 6}) {
        ExpectRanksSliceTheWhole(service, prompt, options, packed, axes, whole.rows, cp_size);
      }
    }
  }
}

// The errors of the other families, naming the field and its value.
// cos_sin: XD-RoPE's pairs take two axes, so the service gives a cos/sin per element, element d
// at column d, the rotary layer's ComputeElementCosSin of the returned positions (HF's cos),
// whole and packed; its proto carries [tokens...][rotary_dim].
TEST(SequentialGridServiceTest, CosSinPerElementOfTheReturnedPositions) {
  const PositionService service = Hunyuan(4);
  const Prompt prompt = PromptOf(RandomBatch(3, {}));
  for (const OutputLayout layout : {OutputLayout::kPadded, OutputLayout::kPacked}) {
    OutputOptions options;
    options.layout = layout;
    options.cos_sin = true;
    auto result = service.Compute<int64_t>(prompt, options);
    ASSERT_TRUE(result.ok()) << result.status();
    ASSERT_TRUE(result->per_element);
    const int64_t tokens = static_cast<int64_t>(result->position_ids.size()) / 4;
    auto spec = BuildRotarySpec(*service.spec().rope, RotaryLayoutOf(service.spec()),
                                *std::max_element(result->position_ids.begin(),
                                                  result->position_ids.end()) + 1);
    ASSERT_TRUE(spec.ok()) << spec.status();
    ASSERT_EQ(result->cos_sin_columns(), spec->rotary_dim);
    auto expected = ComputeElementCosSin(
        *spec, PositionsView{result->position_ids.data(), true, tokens, tokens});
    ASSERT_TRUE(expected.ok()) << expected.status();
    ASSERT_EQ(result->cos.size(), expected->size());
    int64_t differ = 0;
    for (size_t i = 0; i < expected->size(); ++i) {
      differ += result->cos[i] != (*expected)[i].cos || result->sin[i] != (*expected)[i].sin;
    }
    EXPECT_EQ(differ, 0);
    // Columns of one pair differ on a grid token (its halves' axes), not on text.
    bool halves_apart = false;
    const int half = spec->rotary_dim / 2;
    for (int64_t t = 0; t < tokens && !halves_apart; ++t) {
      for (int j = 0; j < half; ++j) {
        halves_apart |= result->cos[t * 2 * half + j] != result->cos[t * 2 * half + half + j];
      }
    }
    EXPECT_TRUE(halves_apart);
    const v1::PositionResponse response = ResponseFromResult(*result, v1::PositionOptions::INT64);
    EXPECT_EQ(response.cos().shape(response.cos().shape_size() - 1), spec->rotary_dim);
  }
}

TEST(SequentialGridServiceTest, ErrorsNameTheFieldsAndValues) {
  const PositionService service = Hunyuan(4);
  const Prompt prompt = PromptOf(RandomBatch(1, {2, 1, 1}));
  const int64_t l = prompt.batch.seq_len;
  const auto message = [&](const OutputOptions& options) {
    auto result = service.Compute<int64_t>(prompt, options);
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << result.status();
    return std::string(result.status().message());
  };
  OutputOptions options;
  options.window = TokenWindow{3, 2};
  EXPECT_THAT(message(options), HasSubstr("window [3, 2) must have 0 <= begin < end"));
  options.window = TokenWindow{-1, 2};
  EXPECT_THAT(message(options), HasSubstr("window [-1, 2) must have 0 <= begin < end"));
  options.window = TokenWindow{0, 0};
  EXPECT_THAT(message(options), HasSubstr("window [0, 0) must have 0 <= begin < end"));
  options.window = TokenWindow{0, int64_t{1} << 40};
  EXPECT_THAT(message(options), HasSubstr("exceeds max_tokens_per_row"));
  options.window = TokenWindow{int64_t{1} << 40, (int64_t{1} << 40) + 1};
  EXPECT_THAT(message(options), HasSubstr("is more than max_decode_steps"));
  options.window = TokenWindow{0, 2};
  options.context_parallel = ContextParallel{1, 0};
  EXPECT_THAT(message(options), HasSubstr("cp_size: context parallelism does not take a window"));
  options.window.reset();
  options.context_parallel = ContextParallel{2, 2};
  EXPECT_THAT(message(options), HasSubstr("cp_rank=2 must be in [0, cp_size=2)"));
  options.context_parallel = ContextParallel{0, 0};
  EXPECT_THAT(message(options), HasSubstr("cp_size=0 must be at least 1"));
  options.context_parallel = ContextParallel{static_cast<int>(l), 0};
  EXPECT_THAT(message(options), HasSubstr(absl::StrCat("padded length ", l,
                                                       " must be a multiple of 2 * cp_size = ",
                                                       2 * l)));
  options.layout = OutputLayout::kPacked;
  EXPECT_THAT(message(options), HasSubstr("sequence 0: padded length"));
}

}  // namespace
}  // namespace mrope
