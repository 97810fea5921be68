// Regression tests for findings in mrope/service (see fuzz/FUZZING.md). The crashing inputs are
// kept under tests/regression/crashers/service_request_fuzzer/ and replayed by
// //fuzz:service_request_fuzzer_replay_test.

#include <cstdint>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/service/model_spec.h"
#include "mrope/service/position_service.h"
#include "proto/mrope.pb.h"

namespace mrope {
namespace {

using ::testing::HasSubstr;

// crashers/service_request_fuzzer/ragged_rows_reserve_32gb: one row of 65536 ids and 65535
// empty rows (196 KB on the wire) made the proto conversion reserve 65536 x 65536 int64 before
// it compared the row lengths (ASan: allocator out of memory for 32 GB).
TEST(ServiceRegressionTest, RaggedRowsAreRefusedBeforeReserving) {
  auto spec = PresetModelSpec("qwen2_vl");
  ASSERT_TRUE(spec.ok()) << spec.status();
  auto service = PositionService::Create(*spec);
  ASSERT_TRUE(service.ok()) << service.status();
  v1::PositionRequest request;
  v1::TokenRow* first = request.mutable_inputs()->add_input_ids();
  for (int i = 0; i < 65536; ++i) first->add_ids(1);
  for (int i = 1; i < 65536; ++i) request.mutable_inputs()->add_input_ids();
  auto response = service->Handle(request);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(response.status().message(),
              HasSubstr("inputs.input_ids[1] has 0 entries, expected 65536"));
}

}  // namespace
}  // namespace mrope
