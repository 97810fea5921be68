#ifndef MROPE_CAPI_INTERNAL_HANDLES_H_
#define MROPE_CAPI_INTERNAL_HANDLES_H_

// What the C ABI's opaque handles hold.

#include <string>

#include "mrope/rotary/rotary_spec.h"
#include "mrope/service/position_service.h"

struct mrope_model {
  mrope::PositionService service;
  std::string family;  // NUL-terminated for mrope_model_info
};

struct mrope_rotary {
  mrope::RotarySpec spec;
};

#endif  // MROPE_CAPI_INTERNAL_HANDLES_H_
