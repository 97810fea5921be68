#ifndef MROPE_TESTS_TESTING_GOLDEN_CASES_H_
#define MROPE_TESTS_TESTING_GOLDEN_CASES_H_

// The position cases of tests/golden (tests/golden/README.md) as test inputs: which model keys
// have cases, their files, and a case read the way `mrope positions --golden` reads it (the
// model of mrope/service/case_model.h, the file as a PositionRequest).

#include <cstdint>
#include <string>
#include <vector>

#include "google/protobuf/struct.pb.h"
#include "mrope/service/model_spec.h"
#include "mrope/service/position_service.h"
#include "proto/mrope.pb.h"

namespace mrope::testing {

// The folders of tests/golden holding position cases (every folder but rotary_*), sorted.
std::vector<std::string> GoldenPositionKeys();

// Every case file name of tests/golden/<key>, sorted.
std::vector<std::string> GoldenCaseFiles(const std::string& key);

struct GoldenCase {
  std::string path;
  ModelSpec model;          // the case's preset with its `config` values
  v1::PositionRequest request;  // the case file read as a request (its `inputs`)
  Prompt prompt;            // the request's prompt (prompt.batch), for the C++ API
  google::protobuf::Value outputs;
};

// Reads tests/golden/<key>/<file>; fails the current test on errors.
GoldenCase ReadGoldenCase(const std::string& key, const std::string& file);

// The field of `outputs` holding what generate() stored, which a response's rope_deltas
// reports: rope_deltas (the 5.x folders), rope_deltas_thinker (the v4 Omni folders), else
// mrope_position_deltas (v4.57.6 stores get_rope_index's deltas).
std::string StoredDeltasKey(const google::protobuf::Value& outputs);

// A field of `outputs`, flattened, with its shape.
std::vector<double> OutputValues(const google::protobuf::Value& outputs, const std::string& key,
                                 std::vector<int64_t>* shape);

// The values of `array` as doubles, whichever of its value fields is used.
std::vector<double> ArrayValues(const v1::PositionArray& array);

}  // namespace mrope::testing

#endif  // MROPE_TESTS_TESTING_GOLDEN_CASES_H_
