#ifndef MROPE_SERVICE_REQUEST_IO_H_
#define MROPE_SERVICE_REQUEST_IO_H_

// Reading mrope.PositionRequest from JSON or text format, as files or strings.
//
// JSON is proto3 JSON (protobuf's parser) with field names as in proto/mrope.proto, plus the
// golden files' layout where it differs, so the `inputs` of a golden case or an HF processor
// output dumped with json.dumps can be used as they are:
//   "input_ids": [[1, 2, 3], [4, 5, 6]]     for [{"ids": [1, 2, 3]}, {"ids": [4, 5, 6]}]
//   "attention_mask": [[0, 1, 1], ...]      likewise
//   "image_grid_thw": [[1, 28, 40], ...]    for [{"t": 1, "h": 28, "w": 40}, ...]
//   "grid": [1, 28, 40] (in sequences)      for {"t": 1, "h": 28, "w": 40}
//   null                                    for an absent field
// A golden case file is itself a valid request: its metadata keys (format, kind, model, case,
// tags, layout, batch_size, seq_len, source, config, inputs_from, outputs) are ignored. Any
// other unknown field is an error.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/mrope.pb.h"

namespace mrope {

absl::StatusOr<PositionRequest> PositionRequestFromJson(absl::string_view json);
absl::StatusOr<PositionRequest> PositionRequestFromTextproto(absl::string_view text);

// Reads `path` ("-" is stdin): .json is JSON; .textproto, .txtpb and .pbtxt are text format;
// anything else is JSON if its first non-blank character is '{', else text format.
absl::StatusOr<PositionRequest> ReadPositionRequest(const std::string& path);

}  // namespace mrope

#endif  // MROPE_SERVICE_REQUEST_IO_H_
