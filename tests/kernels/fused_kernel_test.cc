// The fused kernel (kernels/fused_kernel.h) against its CPU reference (kernels/fused_reference.h):
// every buffer it may write (q or q_out, k_out, both caches) compared byte for byte, on a GPU
// or on the host execution harness (kernels/host_harness). Skips without a GPU like
// mrope_kernel_test.cc.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/fused_kernel.h"
#include "kernels/fused_reference.h"
#include "kernels/gpu_util.h"
#include "kernels/internal/fused_launch_plan.h"
#include "kernels/internal/fused_params.h"
#include "mrope/common/json.h"
#include "mrope/rotary/attention_case.h"
#include "mrope/rotary/axis_map.h"
#include "mrope/rotary/cos_sin_table.h"
#include "mrope/rotary/dtype_storage.h"
#include "mrope/rotary/fp8_e4m3.h"
#include "mrope/rotary/half_float.h"
#include "tests/kernels/kernel_test_util.h"

namespace mrope {
namespace {

using gpu_util::DeviceBuffer;

enum class QOut { kInPlace, kSeparate, kFp8 };
enum class Cache { kNone, kSame, kFp8 };
enum class Source { kPlanar64, kPlanar32, kSequenceDelta, kTable };

struct FusedCase {
  std::string name;
  DType dtype = DType::kBFloat16;
  RotaryLayout layout = RotaryLayout::kNeox;
  int64_t num_tokens = 17;
  int hq = 4;
  int hk = 2;
  int head_dim = 128;
  int rotary_dim = 128;
  bool interleaved = true;
  int xd_axes = 0;  // > 0: XD-RoPE (HunYuan-VL), the pairs' sections split over this many axes
  QkNormForm q_norm = QkNormForm::kWeight;
  QkNormForm k_norm = QkNormForm::kWeight;
  QOut q_out = QOut::kInPlace;
  Cache cache = Cache::kSame;
  bool hnd = false;             // cache [blocks][H][block_size][D]
  bool per_head_scale = false;  // fp8 cache scales
  bool q_gate = false;          // q heads are [q | gate] in the qkv buffer (Qwen3.5)
  bool misalign = false;        // one element before the qkv buffer: scalar path
  Source source = Source::kPlanar64;
  bool k_out = false;  // also write the rotated k back in place
  int bad_slot_every = 0;   // every n-th token gets slot num_slots (error) when > 0
  int skip_slot_every = 3;  // every n-th token gets slot -1 when > 0
  SinCosMath sincos_math = SinCosMath::kFloat32;
  int64_t max_grid_x = 0;  // > 0: launched through the planner with a capped grid
  RotationDirection direction = RotationDirection::kForward;
};

constexpr int kBlockSize = 16;

// Host buffers of one case and the arguments that point into them (host memory).
struct HostCase {
  RotarySpec spec;
  std::vector<uint8_t> qkv, q_out, k_cache, v_cache, weights;
  std::vector<int64_t> positions, token_index, delta, slots;
  std::vector<int32_t> positions32;
  std::vector<float> scales, cos, sin;
  int error_flag = 0;
  int64_t max_grid_x = 0;
  FusedMropeArgs args;
};

int64_t NumBlocks(const FusedCase& c) { return (c.num_tokens + kBlockSize - 1) / kBlockSize + 1; }

HostCase MakeCase(const FusedCase& c) {
  std::mt19937 rng(static_cast<uint32_t>(c.num_tokens * 7919 + c.head_dim * 31 + c.hq));
  HostCase h;
  RotarySpec& spec = h.spec;
  spec.head_dim = c.head_dim;
  spec.rotary_dim = c.rotary_dim;
  spec.layout = c.layout;
  spec.sincos_math = c.sincos_math;
  const int pairs = c.rotary_dim / 2;
  const int s = 5 * pairs / 16;
  if (c.xd_axes > 0) {
    std::vector<int32_t> sections(c.xd_axes, pairs / c.xd_axes);
    sections[0] += pairs % c.xd_axes;
    spec.axis_map = XdAxisMap(sections, pairs).value();
  } else {
    spec.axis_map = c.interleaved ? InterleavedAxisMap({pairs - 2 * s, s, s}, pairs).value()
                                  : BlockedAxisMap({pairs - 2 * s, s, s}, pairs).value();
  }
  for (int j = 0; j < pairs; ++j) {
    spec.inv_freq.push_back(static_cast<float>(std::pow(5e6, -2.0 * j / c.rotary_dim)));
  }

  const int64_t t = c.num_tokens;
  const int64_t d = c.head_dim;
  const int q_width = c.q_gate ? 2 : 1;
  const int64_t token_stride = (c.hq * q_width + 2 * c.hk) * d;
  const int64_t size = ElementSize(c.dtype);
  const int64_t lead = c.misalign ? 1 : 0;
  h.qkv = RandomStorage(c.dtype, lead + t * token_stride, rng);
  char* base = reinterpret_cast<char*>(h.qkv.data()) + lead * size;
  FusedMropeArgs& a = h.args;
  a.q = {base, c.dtype, t, c.hq, c.head_dim, token_stride, q_width * d};
  a.k = {base + c.hq * q_width * d * size, c.dtype, t, c.hk, c.head_dim, token_stride, d};
  a.v = {base + (c.hq * q_width + c.hk) * d * size, c.dtype, t, c.hk, c.head_dim, token_stride, d};
  if (c.k_out) a.k_out = a.k;

  // Norm weights: q's then k's, both [D], in the input dtype; around 1 (or 0 for 1 + w).
  h.weights = RandomStorage(c.dtype, 2 * d, rng);
  const auto norm = [&](QkNormForm form, int which) {
    return QkNormArgs{form, h.weights.data() + which * d * size, c.dtype, 1e-6f};
  };
  a.q_norm = norm(c.q_norm, 0);
  a.k_norm = norm(c.k_norm, 1);

  if (c.q_out != QOut::kInPlace) {
    const DType dtype = c.q_out == QOut::kFp8 ? DType::kFloat8E4m3 : c.dtype;
    h.q_out.assign(t * c.hq * d * ElementSize(dtype), 0xA5);
    a.q_out = {h.q_out.data(), dtype, t, c.hq, c.head_dim, c.hq * d, d};
  }
  h.scales = {0.5f, 0.75f, 1.25f, 2.0f};  // q, then k and v (per tensor, or the first hk)
  h.scales.resize(2 + 2 * c.hk, 1.5f);
  a.q_scale = &h.scales[0];

  const std::vector<int64_t> video = AxisPositions(AxisCount(spec.axis_map), t, 60000, rng);
  switch (c.source) {
    case Source::kPlanar64:
    case Source::kTable:
      h.positions = video;
      a.positions = {h.positions.data(), true, t, t};
      break;
    case Source::kPlanar32:
      h.positions32.assign(video.begin(), video.end());
      a.positions = {h.positions32.data(), false, t, t};
      break;
    case Source::kSequenceDelta:
      for (int64_t i = 0; i < t; ++i) {
        h.token_index.push_back(static_cast<int64_t>(rng() % 5000));
        h.delta.push_back(static_cast<int64_t>(rng() % 3000));
      }
      a.sequence_delta = {h.token_index.data(), nullptr, h.delta.data(), t, t};
      break;
  }
  if (c.source == Source::kTable) {
    constexpr int64_t kTableRows = 70000;
    const CosSinTable table =
        CosSinTable::Create(spec.inv_freq, spec.attention_scaling, kTableRows).value();
    h.cos.assign(table.cos().begin(), table.cos().end());
    h.sin.assign(table.sin().begin(), table.sin().end());
    a.table = {h.cos.data(), h.sin.data(), kTableRows, pairs};
  }

  if (c.cache != Cache::kNone) {
    const int64_t blocks = NumBlocks(c);
    const DType dtype = c.cache == Cache::kFp8 ? DType::kFloat8E4m3 : c.dtype;
    const int64_t elements = blocks * kBlockSize * c.hk * d;
    h.k_cache.assign(elements * ElementSize(dtype), 0x5A);
    h.v_cache.assign(elements * ElementSize(dtype), 0x3C);
    // Slots: a shuffled set, some -1, some out of range.
    std::vector<int64_t> order(blocks * kBlockSize);
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
    std::shuffle(order.begin(), order.end(), rng);
    for (int64_t i = 0; i < t; ++i) {
      int64_t slot = order[i];
      if (c.skip_slot_every > 0 && i % c.skip_slot_every == 1) slot = -1;
      if (c.bad_slot_every > 0 && i % c.bad_slot_every == 2) slot = blocks * kBlockSize + i;
      h.slots.push_back(slot);
    }
    a.slot_mapping = h.slots.data();
    const int64_t hd = c.hk * d;
    a.cache = c.hnd ? PagedKvCache{h.k_cache.data(), h.v_cache.data(), dtype, blocks, kBlockSize,
                                   c.hk, c.head_dim, kBlockSize * hd, d, kBlockSize * d}
                    : PagedKvCache{h.k_cache.data(), h.v_cache.data(), dtype, blocks, kBlockSize,
                                   c.hk, c.head_dim, kBlockSize * hd, hd, d};
    a.cache.k_scale = &h.scales[2];
    a.cache.v_scale = &h.scales[2 + c.hk];
    a.cache.per_head_scale = c.per_head_scale;
  } else {
    a.k_out = a.k;
  }
  a.error_flag = &h.error_flag;
  a.direction = c.direction;
  h.max_grid_x = c.max_grid_x;
  return h;
}

// Uploads `bytes` and returns the device buffer (an empty one for no bytes).
DeviceBuffer Upload(const void* bytes, size_t size) {
  DeviceBuffer buffer(size == 0 ? 1 : size);
  if (size > 0) buffer.Upload(bytes, size);
  return buffer;
}

template <typename T>
DeviceBuffer Upload(const std::vector<T>& v) {
  return Upload(v.data(), v.size() * sizeof(T));
}

// Moves a host pointer that lies inside `host` to the same offset in `device`.
template <typename P>
P Rebase(P pointer, const void* host, const DeviceBuffer& device) {
  if (pointer == nullptr) return nullptr;
  const auto offset = reinterpret_cast<const char*>(pointer) - static_cast<const char*>(host);
  return reinterpret_cast<P>(static_cast<char*>(device.data()) + offset);
}

// Runs the kernel on a device copy of `h` and returns the buffers it may write: qkv, q_out,
// k_cache, v_cache and the error flag.
struct DeviceResult {
  std::vector<uint8_t> qkv, q_out, k_cache, v_cache;
  int error_flag = -1;
};

DeviceResult RunOnDevice(const HostCase& h) {
  const DeviceBuffer qkv = Upload(h.qkv);
  const DeviceBuffer q_out = Upload(h.q_out);
  const DeviceBuffer k_cache = Upload(h.k_cache);
  const DeviceBuffer v_cache = Upload(h.v_cache);
  const DeviceBuffer weights = Upload(h.weights);
  const DeviceBuffer positions = Upload(h.positions);
  const DeviceBuffer positions32 = Upload(h.positions32);
  const DeviceBuffer token_index = Upload(h.token_index);
  const DeviceBuffer delta = Upload(h.delta);
  const DeviceBuffer slots = Upload(h.slots);
  const DeviceBuffer scales = Upload(h.scales);
  const DeviceBuffer cos = Upload(h.cos);
  const DeviceBuffer sin = Upload(h.sin);
  DeviceBuffer flag(sizeof(int));
  flag.Zero();

  FusedMropeArgs a = h.args;
  for (HeadsView* view : {&a.q, &a.k, &a.v, &a.k_out}) {
    view->data = Rebase(view->data, h.qkv.data(), qkv);
  }
  a.q_out.data = Rebase(a.q_out.data, h.q_out.data(), q_out);
  a.q_norm.weight = Rebase(a.q_norm.weight, h.weights.data(), weights);
  a.k_norm.weight = Rebase(a.k_norm.weight, h.weights.data(), weights);
  a.q_scale = Rebase(a.q_scale, h.scales.data(), scales);
  a.cache.k_scale = Rebase(a.cache.k_scale, h.scales.data(), scales);
  a.cache.v_scale = Rebase(a.cache.v_scale, h.scales.data(), scales);
  a.cache.k = Rebase(a.cache.k, h.k_cache.data(), k_cache);
  a.cache.v = Rebase(a.cache.v, h.v_cache.data(), v_cache);
  a.slot_mapping = Rebase(a.slot_mapping, h.slots.data(), slots);
  if (!h.positions.empty()) a.positions.data = positions.data();
  if (!h.positions32.empty()) a.positions.data = positions32.data();
  a.sequence_delta.token_index = Rebase(a.sequence_delta.token_index, h.token_index.data(),
                                        token_index);
  a.sequence_delta.delta = Rebase(a.sequence_delta.delta, h.delta.data(), delta);
  a.table.cos = Rebase(a.table.cos, h.cos.data(), cos);
  a.table.sin = Rebase(a.table.sin, h.sin.data(), sin);
  a.error_flag = flag.As<int>();

  if (h.max_grid_x > 0) {
    // Each block then loops over several token groups.
    const auto plan = kernel_internal::PlanFusedLaunch(h.spec, a, {h.max_grid_x});
    EXPECT_TRUE(plan.ok()) << plan.status();
    if (plan.ok()) {
      EXPECT_EQ(plan->grid_x, static_cast<uint32_t>(h.max_grid_x));
      EXPECT_EQ(kernel_internal::EnqueueFusedKernel(*plan, nullptr).cuda_error, 0);
    }
  } else {
    const absl::Status status = LaunchFusedMropeKernel(h.spec, a, nullptr);
    EXPECT_TRUE(status.ok()) << status;
  }
  gpu_util::Synchronize();
  DeviceResult r;
  const auto download = [](const DeviceBuffer& device, size_t size) {
    std::vector<uint8_t> out(size);
    if (size > 0) device.Download(out.data(), size);
    return out;
  };
  r.qkv = download(qkv, h.qkv.size());
  r.q_out = download(q_out, h.q_out.size());
  r.k_cache = download(k_cache, h.k_cache.size());
  r.v_cache = download(v_cache, h.v_cache.size());
  r.error_flag = ReadFlag(flag);
  return r;
}

void ExpectSameBytes(const std::vector<uint8_t>& expected, const std::vector<uint8_t>& actual,
                     const char* what) {
  ASSERT_EQ(expected.size(), actual.size()) << what;
  int64_t differ = 0;
  int64_t first = -1;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] != actual[i]) {
      if (first < 0) first = static_cast<int64_t>(i);
      ++differ;
    }
  }
  EXPECT_EQ(differ, 0) << what << ": " << differ << " of " << expected.size()
                       << " bytes differ, first at byte " << first;
}

void PrintTo(const FusedCase& c, std::ostream* os) { *os << c.name; }

class FusedKernelTest : public ::testing::TestWithParam<FusedCase> {};

TEST_P(FusedKernelTest, MatchesCpuReferenceBitForBit) {
  MROPE_SKIP_WITHOUT_GPU();
  const FusedCase& c = GetParam();
  HostCase expected = MakeCase(c);
  const DeviceResult actual = RunOnDevice(expected);
  ASSERT_TRUE(ApplyFusedReference(expected.spec, expected.args).ok());
  ExpectSameBytes(expected.qkv, actual.qkv, "qkv (q in place, k_out, v untouched)");
  ExpectSameBytes(expected.q_out, actual.q_out, "q_out");
  ExpectSameBytes(expected.k_cache, actual.k_cache, "k cache");
  ExpectSameBytes(expected.v_cache, actual.v_cache, "v cache");
  EXPECT_EQ(actual.error_flag, expected.error_flag);
  EXPECT_EQ(expected.error_flag, c.bad_slot_every > 0 ? kMropeErrorSlotOutOfRange : 0);
}

std::vector<FusedCase> Cases() {
  std::vector<FusedCase> cases;
  const auto add = [&](std::string name, auto edit) {
    FusedCase c;
    c.name = std::move(name);
    edit(c);
    cases.push_back(c);
  };
  for (DType dtype : {DType::kBFloat16, DType::kFloat16, DType::kFloat32}) {
    const std::string t = DTypeName(dtype);
    add(t + "_Qwen3VL_Decode", [&](FusedCase& c) {
      c.dtype = dtype;
      c.num_tokens = 3;
      c.hq = 32;
      c.hk = 8;
    });
    add(t + "_Qwen35_GatePartialOnePlus_Fp8Cache", [&](FusedCase& c) {
      c.dtype = dtype;
      c.head_dim = 256;
      c.rotary_dim = 64;
      c.q_gate = true;
      c.q_norm = c.k_norm = QkNormForm::kOnePlusWeight;
      c.cache = Cache::kFp8;
      c.hq = 6;
      c.hk = 2;
    });
    add(t + "_NoNorm_Gptj_Blocked_HND_QOutSeparate", [&](FusedCase& c) {
      c.dtype = dtype;
      c.layout = RotaryLayout::kGptj;
      c.interleaved = false;
      c.q_norm = c.k_norm = QkNormForm::kNone;
      c.hnd = true;
      c.q_out = QOut::kSeparate;
    });
    add(t + "_Misaligned_ScalarPath_Fp8Q", [&](FusedCase& c) {
      c.dtype = dtype;
      c.misalign = true;
      c.q_out = QOut::kFp8;
      c.cache = Cache::kFp8;
      c.per_head_scale = true;
    });
  }
  add("bf16_Prefill1100_BlockPath_Table", [](FusedCase& c) {
    c.num_tokens = 1100;
    c.hq = 4;
    c.hk = 2;
    c.source = Source::kTable;
    c.k_out = true;
  });
  add("bf16_HeadDim80_OddChunks_Int32", [](FusedCase& c) {
    c.head_dim = 80;
    c.rotary_dim = 80;
    c.source = Source::kPlanar32;
    c.q_norm = QkNormForm::kOnePlusWeight;
  });
  add("fp32_HeadDim512_MaxChunks", [](FusedCase& c) {
    c.dtype = DType::kFloat32;
    c.head_dim = 512;
    c.rotary_dim = 256;
    c.hq = 3;
    c.hk = 1;
    c.num_tokens = 5;
  });
  add("bf16_SequenceDelta_Decode", [](FusedCase& c) {
    c.num_tokens = 6;
    c.source = Source::kSequenceDelta;
    c.cache = Cache::kFp8;
  });
  add("bf16_NoCache_KOutInPlace_DoubleSinCos", [](FusedCase& c) {
    c.cache = Cache::kNone;
    c.sincos_math = SinCosMath::kDouble;
  });
  // The rotary's backward out of place: gradients of q and k in, of their inputs out.
  add("fp32_Backward_OutOfPlace", [](FusedCase& c) {
    c.dtype = DType::kFloat32;
    c.direction = RotationDirection::kInverse;
    c.q_norm = c.k_norm = QkNormForm::kNone;
    c.q_out = QOut::kSeparate;
    c.cache = Cache::kNone;
  });
  add("bf16_BadSlotsSkipTokens", [](FusedCase& c) {
    c.num_tokens = 9;
    c.bad_slot_every = 4;
  });
  // 300 tokens: one chunk of all 16 heads, 8 slots of 32 lanes: two passes per block (the
  // stage's double buffer and the pass loop).
  add("bf16_HeadDim256_TwoPassesPerBlock", [](FusedCase& c) {
    c.num_tokens = 300;
    c.hq = 12;
    c.hk = 4;
    c.head_dim = 256;
    c.rotary_dim = 64;
    c.q_norm = c.k_norm = QkNormForm::kOnePlusWeight;
  });
  // 17 heads in 5 passes of 4 slots (32 lanes, 2 chunks each): the first kPassesInFlight
  // passes from the loads issued ahead of the staging, the fifth loaded in its pass; 5 blocks
  // loop over the token groups.
  add("bf16_HeadDim512_FivePassesInFlight", [](FusedCase& c) {
    c.num_tokens = 264;
    c.hq = 15;
    c.hk = 2;
    c.head_dim = 512;
    c.rotary_dim = 128;
    c.max_grid_x = 5;
  });
  add("fp32_BlocksLoopOverTokenGroups", [](FusedCase& c) {
    c.dtype = DType::kFloat32;
    c.num_tokens = 1030;
    c.hq = 6;
    c.hk = 2;
    c.head_dim = 64;
    c.rotary_dim = 64;
    c.max_grid_x = 3;
    c.cache = Cache::kFp8;
  });
  // HunYuan-VL: XD-RoPE over four axes and the norm of the rotated head, in every dtype, on the
  // vector path with the passes in flight (prefill), one pass (decode), the scalar path, and
  // the sequence-delta and table sources; eight axes (fewer tokens per block); the norm of the
  // rotated head alone on three axes, and XD-RoPE with a norm before the rotary.
  for (DType dtype : {DType::kBFloat16, DType::kFloat16, DType::kFloat32}) {
    const std::string t = DTypeName(dtype);
    const auto hunyuan = [dtype](FusedCase& c) {
      c.dtype = dtype;
      c.xd_axes = 4;
      c.q_norm = c.k_norm = QkNormForm::kWeightAfterRotary;
      c.hq = 16;
      c.hk = 8;
    };
    add(t + "_HunYuanVL_Prefill1100", [&](FusedCase& c) {
      hunyuan(c);
      c.num_tokens = 1100;
      c.hq = 4;
      c.hk = 2;
      c.max_grid_x = 7;  // blocks loop over token groups: two barriers a pass, each group
    });
    add(t + "_HunYuanVL_Decode_SequenceDelta", [&](FusedCase& c) {
      hunyuan(c);
      c.num_tokens = 3;
      c.source = Source::kSequenceDelta;
    });
    add(t + "_HunYuanVL_Misaligned_ScalarPath_Int32", [&](FusedCase& c) {
      hunyuan(c);
      c.misalign = true;
      c.source = Source::kPlanar32;
      c.cache = Cache::kFp8;
      c.bad_slot_every = 4;
    });
  }
  add("bf16_HunYuanVL_Table_KOut", [](FusedCase& c) {
    c.xd_axes = 4;
    c.q_norm = c.k_norm = QkNormForm::kWeightAfterRotary;
    c.num_tokens = 40;
    c.source = Source::kTable;
    c.k_out = true;
  });
  add("bf16_XdEightAxes_NormBefore_TwoPasses", [](FusedCase& c) {
    c.xd_axes = 8;
    c.num_tokens = 300;
    c.hq = 12;
    c.hk = 4;
    c.head_dim = 256;
    c.rotary_dim = 128;
  });
  add("fp32_NormAfterRotary_ThreeAxes_PartialRotary_QOnly", [](FusedCase& c) {
    c.dtype = DType::kFloat32;
    c.rotary_dim = 64;
    c.q_norm = QkNormForm::kWeightAfterRotary;
    c.k_norm = QkNormForm::kNone;
    c.num_tokens = 21;
  });
  add("fp16_HeadDim64_ManyHeads", [](FusedCase& c) {
    c.dtype = DType::kFloat16;
    c.head_dim = 64;
    c.rotary_dim = 64;
    c.hq = 28;
    c.hk = 4;
    c.num_tokens = 2;
  });
  return cases;
}

// HF's attention-input cases (tests/golden/attn_*, every third): real norm weights, magnitudes
// and positions through the kernel, q out of place, k to a cache in the case's dtype (NHD) and
// back in place, Qwen3.5's [q | gate] heads with a NaN gate.
HostCase FromAttentionCase(const AttentionCase& c) {
  HostCase h;
  h.spec = c.spec;
  const int64_t d = c.spec.head_dim;
  const int64_t token_stride = (2 * c.q_heads + 2 * c.k_heads) * d;
  std::vector<float> qkv(c.tokens * token_stride, std::nanf(""));
  for (int64_t t = 0; t < c.tokens; ++t) {
    for (int64_t head = 0; head < c.q_heads; ++head) {
      std::copy_n(&c.q_pre[(t * c.q_heads + head) * d], d, &qkv[t * token_stride + 2 * head * d]);
    }
    for (int64_t head = 0; head < c.k_heads; ++head) {
      const float* k = &c.k_pre[(t * c.k_heads + head) * d];
      float* row = &qkv[t * token_stride + (2 * c.q_heads + head) * d];
      std::copy_n(k, d, row);
      std::copy_n(k, d, row + c.k_heads * d);  // v: k's values
    }
  }
  h.qkv = StoreAllAs(c.dtype, qkv);
  std::vector<float> weights = c.q_norm_weight;
  weights.insert(weights.end(), c.k_norm_weight.begin(), c.k_norm_weight.end());
  h.weights = StoreAllAs(c.dtype, weights);
  const int64_t size = ElementSize(c.dtype);
  char* base = reinterpret_cast<char*>(h.qkv.data());
  FusedMropeArgs& a = h.args;
  const int32_t dim = static_cast<int32_t>(d);
  a.q = {base, c.dtype, c.tokens, c.q_heads, dim, token_stride, 2 * d};
  a.k = {base + 2 * c.q_heads * d * size, c.dtype, c.tokens, c.k_heads, dim, token_stride, d};
  a.v = {base + (2 * c.q_heads + c.k_heads) * d * size, c.dtype, c.tokens, c.k_heads, dim,
         token_stride, d};
  a.k_out = a.k;
  h.q_out.assign(c.tokens * c.q_heads * d * size, 0);
  a.q_out = {h.q_out.data(), c.dtype, c.tokens, c.q_heads, dim, c.q_heads * d, d};
  a.q_norm = {c.norm, h.weights.data(), c.dtype, c.eps};
  a.k_norm = {c.norm, h.weights.data() + d * size, c.dtype, c.eps};
  h.positions = c.positions;
  a.positions = {h.positions.data(), true, c.tokens, c.tokens};
  const int64_t blocks = c.tokens / kBlockSize + 1;
  h.k_cache.assign(blocks * kBlockSize * c.k_heads * d * size, 0x5A);
  h.v_cache = h.k_cache;
  for (int64_t t = 0; t < c.tokens; ++t) h.slots.push_back(blocks * kBlockSize - 1 - t);
  a.slot_mapping = h.slots.data();
  a.cache = {h.k_cache.data(), h.v_cache.data(), c.dtype, blocks, kBlockSize, c.k_heads, dim,
             kBlockSize * c.k_heads * d, c.k_heads * d, d};
  a.error_flag = &h.error_flag;
  return h;
}

std::vector<std::string> AttentionCaseFiles() {
  std::vector<std::string> files;
  for (const char* dir : {"tests/golden/attn_qwen3_vl", "tests/golden/attn_qwen3_5"}) {
    if (!std::filesystem::is_directory(dir)) continue;
    std::vector<std::string> in_dir;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() == ".json") in_dir.push_back(entry.path().string());
    }
    std::sort(in_dir.begin(), in_dir.end());
    for (size_t i = 0; i < in_dir.size(); i += 3) files.push_back(in_dir[i]);
  }
  return files;
}

class FusedKernelGoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FusedKernelGoldenTest, MatchesCpuReferenceBitForBit) {
  MROPE_SKIP_WITHOUT_GPU();
  const auto doc = ReadJsonFile(GetParam());
  ASSERT_TRUE(doc.ok()) << doc.status();
  const auto c = ParseAttentionCase(*doc);
  ASSERT_TRUE(c.ok()) << c.status();
  HostCase expected = FromAttentionCase(*c);
  const DeviceResult actual = RunOnDevice(expected);
  ASSERT_TRUE(ApplyFusedReference(expected.spec, expected.args).ok());
  ExpectSameBytes(expected.qkv, actual.qkv, "qkv (k in place)");
  ExpectSameBytes(expected.q_out, actual.q_out, "q_out");
  ExpectSameBytes(expected.k_cache, actual.k_cache, "k cache");
  ExpectSameBytes(expected.v_cache, actual.v_cache, "v cache");
  EXPECT_EQ(actual.error_flag, 0);
}

INSTANTIATE_TEST_SUITE_P(AttentionCases, FusedKernelGoldenTest,
                         ::testing::ValuesIn(AttentionCaseFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           const std::filesystem::path path(info.param);
                           return path.parent_path().filename().string() + "_" +
                                  path.stem().string();
                         });

INSTANTIATE_TEST_SUITE_P(Paths, FusedKernelTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<FusedCase>& info) {
                           return info.param.name;
                         });

// A captured graph replays the fused launch twice (in place: the second replay rotates the
// rotated q and k again, as the reference run twice does).
TEST(FusedKernelGraphTest, CapturesAndReplays) {
  MROPE_SKIP_WITHOUT_GPU();
  FusedCase c;
  c.cache = Cache::kNone;
  c.q_norm = c.k_norm = QkNormForm::kNone;
  HostCase h = MakeCase(c);
  const DeviceBuffer qkv = Upload(h.qkv);
  const DeviceBuffer weights = Upload(h.weights);
  const DeviceBuffer positions = Upload(h.positions);
  DeviceBuffer flag(sizeof(int));
  flag.Zero();
  FusedMropeArgs a = h.args;
  a.q.data = Rebase(a.q.data, h.qkv.data(), qkv);
  a.k.data = Rebase(a.k.data, h.qkv.data(), qkv);
  a.v.data = Rebase(a.v.data, h.qkv.data(), qkv);
  a.k_out.data = Rebase(a.k_out.data, h.qkv.data(), qkv);
  a.positions.data = positions.data();
  a.error_flag = flag.As<int>();
  const std::string error = gpu_util::CaptureAndReplay(
      [&](GpuStream stream) { EXPECT_TRUE(LaunchFusedMropeKernel(h.spec, a, stream).ok()); },
      /*replays=*/2);
  ASSERT_EQ(error, "");
  ASSERT_TRUE(ApplyFusedReference(h.spec, h.args).ok());
  ASSERT_TRUE(ApplyFusedReference(h.spec, h.args).ok());
  std::vector<uint8_t> actual(h.qkv.size());
  qkv.Download(actual.data(), actual.size());
  ExpectSameBytes(h.qkv, actual, "qkv after two replays");
  EXPECT_EQ(ReadFlag(flag), 0);
}

// Every bf16 value through v into an fp8 cache with scale 1: the device's conversion (the
// hardware instruction on sm_89+) equals FloatToFp8E4m3 bit for bit.
TEST(FusedKernelFp8Test, EveryBf16ValueConvertsLikeTheHost) {
  MROPE_SKIP_WITHOUT_GPU();
  FusedCase c;
  c.num_tokens = 512;  // 512 tokens x 1 head x 128 dims = 65536 values
  c.hq = 1;
  c.hk = 1;
  c.cache = Cache::kFp8;
  c.skip_slot_every = 0;
  HostCase h = MakeCase(c);
  h.scales.assign(h.scales.size(), 1.0f);
  for (int64_t t = 0; t < c.num_tokens; ++t) {
    for (int d = 0; d < c.head_dim; ++d) {
      const uint16_t bits = static_cast<uint16_t>(t * c.head_dim + d);
      std::memcpy(static_cast<char*>(h.args.v.data) + (t * h.args.v.token_stride + d) * 2, &bits,
                  2);
    }
  }
  const DeviceResult actual = RunOnDevice(h);
  const int64_t blocks = NumBlocks(c);
  int64_t mismatches = 0;
  for (int64_t t = 0; t < c.num_tokens; ++t) {
    const int64_t slot = h.slots[t];
    for (int d = 0; d < c.head_dim; ++d) {
      const uint16_t bits = static_cast<uint16_t>(t * c.head_dim + d);
      const uint8_t expected = FloatToFp8E4m3(BFloat16ToFloat(bits));
      const int64_t offset =
          (slot / kBlockSize) * h.args.cache.block_stride + (slot % kBlockSize) * h.args.cache.slot_stride + d;
      if (actual.v_cache[offset] != expected) ++mismatches;
    }
  }
  EXPECT_EQ(mismatches, 0) << "of 65536 bf16 values (" << blocks << " cache blocks)";
}

}  // namespace
}  // namespace mrope
