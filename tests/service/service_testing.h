#ifndef MROPE_TESTS_SERVICE_SERVICE_TESTING_H_
#define MROPE_TESTS_SERVICE_SERVICE_TESTING_H_

// Golden cases as service inputs, for the service tests.

#include <cstdint>
#include <string>
#include <vector>

#include "google/protobuf/struct.pb.h"
#include "mrope/service/model_spec.h"
#include "proto/mrope.pb.h"

namespace mrope::testing {

struct GoldenServiceCase {
  std::string path;
  ModelSpec model;          // the preset of the case's model key with its `config` values
  PositionRequest request;  // the case file read as a request (its `inputs`)
  google::protobuf::Value outputs;
};

// Reads tests/golden/<model>/<file>; fails the current test on errors.
GoldenServiceCase ReadGoldenCase(const std::string& model, const std::string& file);

// Every case file of tests/golden/<model>, sorted.
std::vector<std::string> GoldenCaseFiles(const std::string& model);

// A field of `outputs`, flattened, with its shape.
std::vector<double> OutputValues(const google::protobuf::Value& outputs, const std::string& key,
                                 std::vector<int64_t>* shape);

// The values of `array` as doubles, whichever of its value fields is used.
std::vector<double> ArrayValues(const PositionArray& array);

}  // namespace mrope::testing

#endif  // MROPE_TESTS_SERVICE_SERVICE_TESTING_H_
