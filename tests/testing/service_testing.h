#ifndef MROPE_TESTS_TESTING_SERVICE_TESTING_H_
#define MROPE_TESTS_TESTING_SERVICE_TESTING_H_

// PositionService in tests: services of specs and presets, and Handle expecting success.

#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "mrope/positions/limits.h"
#include "mrope/service/model_spec.h"
#include "mrope/service/position_service.h"
#include "proto/mrope.pb.h"

namespace mrope {

inline PositionService MakeService(const ModelSpec& spec, PositionLimits limits = {}) {
  auto service = PositionService::Create(spec, limits);
  EXPECT_TRUE(service.ok()) << service.status();
  return *std::move(service);
}

inline PositionService PresetService(const std::string& name) {
  auto spec = PresetModelSpec(name);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return MakeService(*spec);
}

// The response, or an empty one after a failed expectation.
inline v1::PositionResponse Handle(const PositionService& service,
                                   const v1::PositionRequest& request) {
  auto response = service.Handle(request);
  EXPECT_TRUE(response.ok()) << response.status();
  return response.ok() ? *response : v1::PositionResponse();
}

}  // namespace mrope

#endif  // MROPE_TESTS_TESTING_SERVICE_TESTING_H_
