#ifndef MROPE_COMMON_STATUS_MACROS_H_
#define MROPE_COMMON_STATUS_MACROS_H_

// Early-return helpers for absl::Status / absl::StatusOr. No open-source Abseil release ships
// these, so mrope carries its own two.

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define MROPE_STATUS_CONCAT_INNER_(a, b) a##b
#define MROPE_STATUS_CONCAT_(a, b) MROPE_STATUS_CONCAT_INNER_(a, b)

// Evaluates `expr` (an absl::Status) and returns it from the caller if it is not OK.
#define MROPE_RETURN_IF_ERROR(expr)                  \
  do {                                               \
    ::absl::Status mrope_status_ = (expr);           \
    if (!mrope_status_.ok()) return mrope_status_;   \
  } while (false)

// `MROPE_ASSIGN_OR_RETURN(auto x, F());` declares x from an absl::StatusOr, or returns the error.
#define MROPE_ASSIGN_OR_RETURN(lhs, expr) \
  MROPE_ASSIGN_OR_RETURN_IMPL_(MROPE_STATUS_CONCAT_(mrope_statusor_, __LINE__), lhs, expr)

#define MROPE_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                 \
  if (!statusor.ok()) return statusor.status();           \
  lhs = std::move(statusor).value()

#endif  // MROPE_COMMON_STATUS_MACROS_H_
