// One BatchPlan shared by 8 threads that fill different windows of it at once (a runtime doing
// chunked prefill of several requests), for every preset: each window equals the one filled
// sequentially. Run under --config=tsan to check for races; PositionService's own concurrency
// test (tests/service/position_service_test.cc) covers Handle() on mixed requests.

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "mrope/positions/batch.h"
#include "mrope/positions/model_config.h"
#include "mrope/model/model_family.h"
#include "mrope/positions/sequence_positions.h"
#include "mrope/positions/span.h"

namespace mrope {
namespace {

constexpr int kThreads = 8;
constexpr int64_t kWindow = 37;

// Three sequences with every block kind the family has (video t a multiple of the temporal
// merge; images in the videos' place where the convention takes images only).
std::vector<std::vector<Span>> Sequences(const ModelConfig& config) {
  const PositionPolicy policy = PolicyFor(config);
  const bool omni = policy.has_audio;
  const bool frames = policy.video_frames_as_blocks;
  const int64_t merge = config.temporal_merge_size;
  const auto video = [&](int64_t t, int64_t h, int64_t w, float seconds) {
    return policy.images_only ? Span::Image({1, h, w})
                              : Span::Video({frames ? 1 : t * merge, h, w}, seconds);
  };
  std::vector<std::vector<Span>> sequences = {
      {Span::Text(11), Span::Image({1, 8, 12}), Span::Text(5), video(4, 6, 4, 0.5f),
       Span::Text(3)},
      {Span::Image({1, 4, 4}), Span::Text(40)},
      {Span::Text(2), video(3, 2, 8, 2.0f), Span::Text(7)},
  };
  if (omni) {
    sequences[1].push_back(Span::Audio(25));
    sequences[2].push_back(Span::AudioInVideo({3, 4, 4}, 2.0f, 60));
    sequences[2].push_back(Span::Text(1));
  }
  return sequences;
}

template <typename Out>
std::vector<Out> FillWindow(const SequencePositions& seq, int64_t begin) {
  std::vector<Out> out(3 * kWindow);
  const auto status =
      seq.Fill<Out>(begin, begin + kWindow, {out.data(), out.data() + kWindow,
                                             out.data() + 2 * kWindow});
  EXPECT_TRUE(status.ok()) << status;
  return out;
}

template <typename Out>
void CheckConcurrentWindows(const BatchPlan& plan) {
  // Every window start of every row, prompt and decode, sequentially first.
  struct Job {
    int64_t row;
    int64_t begin;
  };
  std::vector<Job> jobs;
  std::vector<std::vector<Out>> expected;
  for (int64_t row = 0; row < plan.batch_size; ++row) {
    for (int64_t begin = 0; begin < plan.rows[row].num_tokens() + 8; begin += 5) {
      jobs.push_back({row, begin});
      expected.push_back(FillWindow<Out>(plan.rows[row], begin));
    }
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (size_t k = 0; k < jobs.size(); ++k) {
        const size_t i = (k * 7 + t * 13) % jobs.size();
        if (FillWindow<Out>(plan.rows[jobs[i].row], jobs[i].begin) != expected[i]) ++mismatches;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_GT(jobs.size(), 20u);
}

TEST(SharedPlanConcurrencyTest, WindowsFilledFromEightThreadsMatchSequentialOnes) {
  for (const std::string& preset : PresetNames()) {
    SCOPED_TRACE(preset);
    auto config = PresetConfig(preset);
    ASSERT_TRUE(config.ok()) << config.status();
    auto plan = PlanSequences(*config, Sequences(*config));
    ASSERT_TRUE(plan.ok()) << plan.status();
    if (plan->float_positions) {
      CheckConcurrentWindows<float>(*plan);
    } else {
      CheckConcurrentWindows<int64_t>(*plan);
    }
  }
}

}  // namespace
}  // namespace mrope
