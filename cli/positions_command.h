#ifndef MROPE_CLI_POSITIONS_COMMAND_H_
#define MROPE_CLI_POSITIONS_COMMAND_H_

#include <ostream>

#include "absl/status/status.h"
#include "cli/cli_options.h"

namespace mrope {

// `mrope positions`:
//   --golden=CASE.json                 a golden case (its `outputs` may be absent) -> the
//                                      golden `outputs` JSON: position_ids [3][B][L],
//                                      mrope_position_deltas [B], (Omni) rope_deltas_thinker,
//                                      decode_position_ids [3][B][3]
//   --config=X --request=R             a request -> the response as --format:
//                                      json (default, golden layout), textproto, or int32 /
//                                      int64: the raw position_ids in native byte order, which
//                                      need --output
//   --cp_size=N --cp_rank=R            only rank R's context-parallel slice (the request's
//                                      options.cp_size / cp_rank; proto/mrope.proto)
// The result goes to --output, or to `out`.
absl::Status RunPositions(const CliOptions& options, std::ostream& out);

}  // namespace mrope

#endif  // MROPE_CLI_POSITIONS_COMMAND_H_
