#ifndef MROPE_SERVICE_REQUEST_IO_H_
#define MROPE_SERVICE_REQUEST_IO_H_

// Reading mrope.v1.PositionRequest from JSON or text format, as files or strings.
//
// JSON is read by mrope's JSON reader (mrope/common/json_reader.h: bounded depth, counts checked
// while reading, errors naming the path and the value). Its form is proto3 JSON with field names
// as in proto/mrope.proto (or their lowerCamelCase JSON names; enums by name or number; integers
// may be quoted), plus the golden files' layout where it differs, so the `inputs` of a golden
// case or an HF processor output dumped with json.dumps can be used as they are:
//   "input_ids": [[1, 2, 3], [4, 5, 6]]     for [{"ids": [1, 2, 3]}, {"ids": [4, 5, 6]}]
//   "attention_mask": [[0, 1, 1], ...]      likewise
//   "image_grid_thw": [[1, 28, 40], ...]    for [{"t": 1, "h": 28, "w": 40}, ...]
//   "grid": [1, 28, 40] (in sequences)      for {"t": 1, "h": 28, "w": 40}
//   null                                    for an absent field
// A golden case file is itself a valid request: its metadata keys (format, kind, model, case,
// tags, layout, batch_size, seq_len, source, config, inputs_from, outputs) are ignored.
// The bare processor output is a request too: an object whose top-level keys are the `inputs`
// names (input_ids, attention_mask, image_grid_thw, ...) is read as {"inputs": {...}}. Inputs
// may also use the Omni processors' feature_attention_mask ([num_audios][max_frames], each
// row ones then zeros) instead of audio_feature_lengths (its row sums; giving both is an
// error), and may carry the processors' pixel_values, pixel_values_videos, input_features and
// mm_token_type_ids, which are skipped without being stored.
// Any other key is an error that names it and lists the accepted ones.
//
// Checked while reading: token ids are integers in [0, 2^62] and mask values 0 or 1; rows,
// tokens per row and tokens in all stay within `limits` (refused at the first token over);
// grids are integers and seconds finite numbers.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "mrope/positions/limits.h"
#include "proto/mrope.pb.h"

namespace mrope {

absl::StatusOr<v1::PositionRequest> PositionRequestFromJson(absl::string_view json,
                                                            const PositionLimits& limits = {});
absl::StatusOr<v1::PositionRequest> PositionRequestFromTextproto(absl::string_view text);

// Reads `path` ("-" is stdin): .json is JSON; .textproto, .txtpb and .pbtxt are text format;
// anything else is JSON if its first non-blank character is '{', else text format.
absl::StatusOr<v1::PositionRequest> ReadPositionRequest(const std::string& path,
                                                        const PositionLimits& limits = {});

}  // namespace mrope

#endif  // MROPE_SERVICE_REQUEST_IO_H_
