// Applying M-RoPE to q and k: positions from the service, the rotary spec from the model's rope
// parameters, and the CPU reference rotation (mrope/rotary/apply.h). On a GPU,
// LaunchMropeKernel (kernels/mrope_kernel.h) takes the same RotarySpec with device buffers and
// gives the same numbers.
//
//   bazel run //examples:apply_mrope
//
// Rotary pair j (dims j and j + 64 of a 128-dim head) turns by inv_freq[j] * position[axis(j)],
// where the axis is t, h or w per mrope_section ([16, 24, 24] for Qwen2.5-VL: pairs 0-15 t,
// 16-39 h, 40-63 w). A text token has equal t, h and w, so it gets plain 1-D RoPE; an image
// token's h and w pairs turn by its row and column instead.

#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "mrope/rotary/apply.h"
#include "mrope/rotary/rope_params.h"
#include "mrope/service/position_service.h"

namespace {

constexpr int kHeadDim = 128;
constexpr int kQueryHeads = 4;
constexpr int kKeyHeads = 2;

// Deterministic values in [-1, 1).
std::vector<float> Pseudorandom(size_t n, uint32_t seed) {
  std::vector<float> out(n);
  for (float& x : out) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / static_cast<float>(1 << 23) - 1.0f;
  }
  return out;
}

mrope::HeadsView Heads(std::vector<float>& data, int64_t tokens, int heads) {
  mrope::HeadsView view;
  view.data = data.data();
  view.dtype = mrope::DType::kFloat32;
  view.num_tokens = tokens;
  view.num_heads = heads;
  view.head_dim = kHeadDim;
  view.token_stride = static_cast<int64_t>(heads) * kHeadDim;
  view.head_stride = kHeadDim;
  return view;
}

absl::Status Run() {
  auto model = mrope::PresetModelSpec("qwen2_5_vl");
  if (!model.ok()) return model.status();
  auto service = mrope::PositionService::Create(*model);
  if (!service.ok()) return service.status();

  // 4 text tokens, an image of 1 x 4 x 6 patches (2 x 3 = 6 tokens between its markers), 3 more.
  mrope::Prompt prompt;
  prompt.sequences = {
      {mrope::Span::Text(4), mrope::Span::Image({1, 4, 6}), mrope::Span::Text(3)}};
  auto positions = service->Compute<int64_t>(prompt, mrope::OutputOptions());
  if (!positions.ok()) return positions.status();
  const int64_t tokens = positions->shape[2];

  auto spec = mrope::BuildRotarySpec(*model->rope, mrope::RotaryLayout::kNeox, tokens);
  if (!spec.ok()) return spec.status();

  std::vector<float> q = Pseudorandom(tokens * kQueryHeads * kHeadDim, 1);
  std::vector<float> k = Pseudorandom(tokens * kKeyHeads * kHeadDim, 2);
  const std::vector<float> q_before = q;
  mrope::PositionsView view;
  view.data = positions->position_ids.data();
  view.is_int64 = true;
  view.num_tokens = tokens;
  view.axis_stride = tokens;
  absl::Status applied = mrope::ApplyMropeReference(*spec, view, Heads(q, tokens, kQueryHeads),
                                                    Heads(k, tokens, kKeyHeads));
  if (!applied.ok()) return applied;

  // A rotation keeps every pair's length.
  const int pairs = spec->rotary_dim / 2;
  double worst = 0;
  for (int64_t row = 0; row < tokens * kQueryHeads; ++row) {
    for (int j = 0; j < pairs; ++j) {
      const float* a = q_before.data() + row * kHeadDim;
      const float* b = q.data() + row * kHeadDim;
      const double before = std::hypot(a[j], a[j + pairs]);
      const double after = std::hypot(b[j], b[j + pairs]);
      worst = std::max(worst, std::abs(after - before) / std::max(before, 1e-6));
    }
  }

  std::cout << "token  (t, h, w)      angle of pair 0 (t)  pair 16 (h)  pair 40 (w)  q[head 0][0]\n";
  for (int64_t i = 0; i < tokens; ++i) {
    const int64_t* p = positions->position_ids.data();
    const int64_t t = p[i], h = p[tokens + i], w = p[2 * tokens + i];
    std::cout << absl::StrFormat("%-6d (%2d, %2d, %2d)    %-20.6f %-12.6f %-12.6f %+.6f\n", i, t, h,
                                 w, spec->inv_freq[0] * t, spec->inv_freq[16] * h,
                                 spec->inv_freq[40] * w, q[i * kQueryHeads * kHeadDim]);
  }
  std::cout << absl::StrFormat(
      "\nq and k rotated: %d tokens x (%d + %d) heads x %d dims; largest relative change of a "
      "pair's length: %.2g\n",
      tokens, kQueryHeads, kKeyHeads, kHeadDim, worst);
  if (worst > 1e-5) return absl::InternalError("a rotation changed a pair's length");
  return absl::OkStatus();
}

}  // namespace

int main() {
  const absl::Status status = Run();
  if (!status.ok()) {
    std::cerr << "apply_mrope: " << status.message() << "\n";
    return 1;
  }
  return 0;
}
