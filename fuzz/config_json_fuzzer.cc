// Fuzz target: a model's HF config.json (mrope/service/model_spec.h ModelSpecFromHfConfig) and
// the rotary keys in it (mrope/rotary/rope_config.h ParseRopeParameters).
//
// Input: a sequence-length choice (8 bytes, little-endian, taken modulo 2^31) and then JSON
// text. Properties checked:
//   * ParseJson agrees with rapidjson's DOM parser (fuzz/json_oracle.h);
//   * an accepted config gives a spec PositionService::Create accepts;
//   * accepted rotary parameters pass fuzz/rope_checks.h at that sequence length.

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "fuzz/fuzz_input.h"
#include "fuzz/json_oracle.h"
#include "fuzz/rope_checks.h"
#include "mrope/common/json.h"
#include "mrope/rotary/rope_config.h"
#include "mrope/service/model_spec.h"
#include "mrope/service/position_service.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ::mrope;
  fuzz::FuzzInput in(data, size);
  const int64_t seq_len = static_cast<int64_t>(in.U64() % (uint64_t{1} << 31));
  const absl::string_view text = in.Rest();
  auto doc = ParseJson(text);
  fuzz::CheckAgainstRapidjson(text, doc);
  if (!doc.ok()) return 0;
  if (auto rope = ParseRopeParameters(*doc); rope.ok()) fuzz::CheckValidRope(*rope, seq_len);
  auto spec = ModelSpecFromHfConfig(*doc);
  if (!spec.ok()) return 0;
  auto service = PositionService::Create(*spec);
  FUZZ_CHECK(service.ok(), absl::StrCat("accepted config, refused by the service: ",
                                        service.status().ToString()));
  if (spec->rope.has_value()) fuzz::CheckValidRope(*spec->rope, seq_len);
  return 0;
}
