#ifndef MROPE_PYTHON_SRC_CONVERT_H_
#define MROPE_PYTHON_SRC_CONVERT_H_

// Conversions between numpy and mrope's C++ types for the extension module: inputs are read
// from anything numpy.asarray takes (numpy arrays, lists, CPU tensors with __array__); token
// ids and masks are read in place when they are C-contiguous int64, the small media lists are
// copied into mrope's vectors; outputs are moved into a heap object that a capsule owns, so the
// returned numpy arrays alias mrope's own buffers (no copy). Bad input throws ValueError naming
// the argument.

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mrope/positions/span.h"
#include "pybind11/numpy.h"
#include "pybind11/pybind11.h"

namespace mrope {
namespace python {

// Throws pybind11::value_error carrying the status message when `status` is not OK.
void ThrowIfError(const absl::Status& status);

template <typename T>
T ValueOrThrow(absl::StatusOr<T> value) {
  ThrowIfError(value.status());
  return *std::move(value);
}

// An integer (or bool) array as a C-contiguous int64 numpy array: `object` itself when it is
// one (no copy), else a converted copy. Views of it stay valid while the returned array lives.
pybind11::array_t<int64_t> ReadInt64Array(pybind11::handle object, const char* name);

// None or an empty list: no grids; otherwise an [N, 3] integer array of (t, h, w).
std::vector<Grid> ReadGrids(pybind11::handle object, const char* name);

// None: empty; otherwise a flat array of numbers as doubles: a float32 array's values widened
// exactly, a float64 array's or a Python list's as they are (HF truncates seconds per grid in
// the type it was given; mrope/positions/scanner.h, MediaInputs).
std::vector<double> ReadSeconds(pybind11::handle object, const char* name);

// None: empty; otherwise a flat integer array.
std::vector<int64_t> ReadInt64s(pybind11::handle object, const char* name);

// A numpy array of `shape` that owns `values` (moved to the heap, freed with the array).
template <typename Vector>
pybind11::array MoveToNumpy(Vector&& values, std::vector<pybind11::ssize_t> shape) {
  using T = typename std::decay_t<Vector>::value_type;
  auto* owned = new std::decay_t<Vector>(std::forward<Vector>(values));
  pybind11::capsule owner(owned, [](void* p) { delete static_cast<std::decay_t<Vector>*>(p); });
  return pybind11::array_t<T>(std::move(shape), owned->data(), owner);
}

}  // namespace python
}  // namespace mrope

#endif  // MROPE_PYTHON_SRC_CONVERT_H_
