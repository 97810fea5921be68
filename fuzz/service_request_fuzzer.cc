// Fuzz target: mrope.v1.PositionRequest in all three encodings (JSON with the golden layout,
// textproto, binary proto) through PositionService::Handle, for every preset model.
//
// Input: preset byte (% the number of presets, in PresetNames() order), encoding byte (% 3:
// JSON, textproto, binary), then the request. Properties checked on every handled request:
//   * each returned array's shape matches its value count, in the resolved output type;
//   * decode positions are [3][B][decode_steps] and cos/sin cover every returned position;
//   * a context-parallel response has one cp_token_index per returned token;
//   * handling the same request again gives the same response, byte for byte (no state is kept
//     between calls).

#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fuzz/fuzz_input.h"
#include "mrope/positions/limits.h"
#include "mrope/model/model_family.h"
#include "mrope/service/model_spec.h"
#include "mrope/service/position_service.h"
#include "mrope/service/request_io.h"
#include "proto/mrope.pb.h"

namespace mrope {
namespace fuzz {
namespace {

int64_t Product(const v1::PositionArray& array) {
  return std::accumulate(array.shape().begin(), array.shape().end(), int64_t{1},
                         std::multiplies<int64_t>());
}

int64_t Count(const v1::PositionArray& array, v1::PositionOptions::OutputType type) {
  switch (type) {
    case v1::PositionOptions::INT64:
      return array.int64_values_size();
    case v1::PositionOptions::INT32:
      return array.int32_values_size();
    default:
      return array.float_values_size();
  }
}

void CheckArray(const v1::PositionArray& array, v1::PositionOptions::OutputType type,
                const char* name) {
  FUZZ_CHECK(Product(array) == Count(array, type),
             absl::StrCat(name, ": shape product ", Product(array), " for ", Count(array, type),
                          " values"));
}

void CheckResponse(const v1::PositionRequest& request, const v1::PositionResponse& response) {
  const v1::PositionOptions::OutputType type = response.output_type();
  FUZZ_CHECK(type == v1::PositionOptions::INT64 || type == v1::PositionOptions::INT32 ||
                 type == v1::PositionOptions::FLOAT32,
             "unresolved output type");
  CheckArray(response.position_ids(), type, "position_ids");
  CheckArray(response.mrope_position_deltas(), type, "mrope_position_deltas");
  CheckArray(response.rope_deltas(), type, "rope_deltas");
  const int64_t rows = Count(response.mrope_position_deltas(), type);
  const int64_t steps = request.options().decode_steps();
  if (steps > 0) {
    CheckArray(response.decode_position_ids(), type, "decode_position_ids");
    FUZZ_CHECK(Count(response.decode_position_ids(), type) == 3 * rows * steps,
               "decode_position_ids is not [3][B][decode_steps]");
  }
  if (request.options().cp_size() != 0) {
    FUZZ_CHECK(response.cp_token_index_size() == Product(response.position_ids()) / 3 &&
                   response.cu_seqlens_size() == rows + 1,
               "a context-parallel response needs one cp_token_index per token and cu_seqlens "
               "[B + 1]");
  }
  if (request.options().cos_sin()) {
    const int64_t tokens = Product(response.position_ids()) / 3;
    const int64_t pairs = response.cos().shape_size() > 0
                              ? response.cos().shape(response.cos().shape_size() - 1)
                              : 0;
    FUZZ_CHECK(response.cos().float_values_size() == tokens * pairs &&
                   response.sin().float_values_size() == tokens * pairs,
               absl::StrCat("cos/sin of ", response.cos().float_values_size(), " values for ",
                            tokens, " tokens of ", pairs, " pairs"));
  }
}

// The library's default limits let a 150-byte request (two spans of 2^20 text tokens with
// cos_sin) build 2^27 cos/sin entries, over 2 GB under ASan with the response: within mrope's
// bounds, but past libFuzzer's -rss_limit_mb=2048 (an out-of-memory "finding";
// tests/regression/crashers/service_request_fuzzer/cos_sin_past_rss_limit), and 300k tokens
// with cos_sin already take 13 s of the 20 s -timeout. The services here get 2^16 tokens per
// row and per batch, so each execution stays small and the refusals stay reachable.
PositionLimits FuzzLimits() {
  PositionLimits limits;
  limits.max_tokens_per_row = int64_t{1} << 16;
  limits.max_total_tokens = int64_t{1} << 16;
  return limits;
}

absl::StatusOr<v1::PositionRequest> Decode(uint8_t encoding, absl::string_view bytes) {
  switch (encoding % 3) {
    case 0:
      return PositionRequestFromJson(bytes, FuzzLimits());
    case 1:
      return PositionRequestFromTextproto(bytes);
    default: {
      v1::PositionRequest request;
      if (!request.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
        return absl::InvalidArgumentError("not a binary PositionRequest");
      }
      return request;
    }
  }
}

}  // namespace
}  // namespace fuzz
}  // namespace mrope

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ::mrope;
  using namespace ::mrope::fuzz;
  // One service per preset, created once: PositionService is immutable and shared by design.
  static const auto* const services = [] {
    auto* all = new std::vector<PositionService>();
    for (const std::string& name : PresetNames()) {
      auto spec = PresetModelSpec(name);
      FUZZ_CHECK(spec.ok(), spec.status().ToString());
      auto service = PositionService::Create(*spec, FuzzLimits());
      FUZZ_CHECK(service.ok(), service.status().ToString());
      all->push_back(*std::move(service));
    }
    return all;
  }();
  FuzzInput in(data, size);
  const PositionService& service = (*services)[in.Byte() % services->size()];
  const uint8_t encoding = in.Byte();
  auto request = Decode(encoding, in.Rest());
  if (!request.ok()) return 0;
  auto response = service.Handle(*request);
  if (!response.ok()) {
    FUZZ_CHECK(!response.status().message().empty(), "error without a message");
    return 0;
  }
  CheckResponse(*request, *response);
  auto again = service.Handle(*request);
  FUZZ_CHECK(again.ok() && again->SerializeAsString() == response->SerializeAsString(),
             "the same request gave a different response");
  return 0;
}
