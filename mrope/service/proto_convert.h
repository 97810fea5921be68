#ifndef MROPE_SERVICE_PROTO_CONVERT_H_
#define MROPE_SERVICE_PROTO_CONVERT_H_

// mrope.v1.PositionRequest / mrope.v1.PositionResponse <-> the C++ types of PositionService. Errors
// name the proto field path (e.g. "inputs.input_ids[1]").

#include "absl/status/statusor.h"
#include "mrope/service/position_service.h"
#include "proto/mrope.pb.h"

namespace mrope {

// The request's prompt: `inputs` (its input_ids rows must all have one length) or `sequences`,
// exactly one of them.
absl::StatusOr<Prompt> PromptFromProto(const v1::PositionRequest& request);

// window_begin and window_end must be given together.
absl::StatusOr<OutputOptions> OutputOptionsFromProto(const v1::PositionOptions& options);

// `type` is the resolved output type (INT64, INT32 or FLOAT32) matching Out.
template <typename Out>
v1::PositionResponse ResponseFromResult(const PositionResult<Out>& result,
                                        v1::PositionOptions::OutputType type);

extern template v1::PositionResponse ResponseFromResult<int64_t>(const PositionResult<int64_t>&,
                                                                 v1::PositionOptions::OutputType);
extern template v1::PositionResponse ResponseFromResult<int32_t>(const PositionResult<int32_t>&,
                                                                 v1::PositionOptions::OutputType);
extern template v1::PositionResponse ResponseFromResult<float>(const PositionResult<float>&,
                                                               v1::PositionOptions::OutputType);

}  // namespace mrope

#endif  // MROPE_SERVICE_PROTO_CONVERT_H_
