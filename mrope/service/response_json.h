#ifndef MROPE_SERVICE_RESPONSE_JSON_H_
#define MROPE_SERVICE_RESPONSE_JSON_H_

// A PositionResponse as the JSON of the golden files' `outputs`: nested arrays of the
// response's shapes, integers for integer output and shortest float32 decimals for float
// output. Keys: position_ids, mrope_position_deltas, rope_deltas, then decode_position_ids,
// cu_seqlens, cos and sin when the response has them.

#include <string>

#include "proto/mrope.pb.h"

namespace mrope {

std::string PositionResponseToJson(const v1::PositionResponse& response);

}  // namespace mrope

#endif  // MROPE_SERVICE_RESPONSE_JSON_H_
