#ifndef MROPE_SERVICE_TEXTPROTO_H_
#define MROPE_SERVICE_TEXTPROTO_H_

// Text-format protos (requests, ModelParams) with parse errors as absl::Status.

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace mrope {

// Parses `text` into `message` (cleared first). Errors are InvalidArgument
// "<source>:<line>:<column>: <parser message>".
absl::Status ParseTextproto(absl::string_view text, absl::string_view source,
                            google::protobuf::Message& message);

// The text format of `message`.
std::string ToTextproto(const google::protobuf::Message& message);

// True for the text-format file extensions .textproto, .txtpb and .pbtxt.
bool IsTextprotoPath(absl::string_view path);

}  // namespace mrope

#endif  // MROPE_SERVICE_TEXTPROTO_H_
