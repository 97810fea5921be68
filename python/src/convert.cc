#include "python/src/convert.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace mrope {
namespace python {

namespace py = pybind11;

namespace {

std::string ShapeString(const py::array& array) {
  std::vector<py::ssize_t> dims(array.shape(), array.shape() + array.ndim());
  return absl::StrCat("(", absl::StrJoin(dims, ", "), ")");
}

// `object` as a numpy array of numbers (`kinds`: numpy dtype kinds accepted); strings, objects
// and ragged lists are refused. An empty array passes whatever its dtype ([] is float64).
py::array AsNumericArray(py::handle object, const char* name, const char* kinds) {
  py::array array;
  try {
    array = py::array::ensure(object);
  } catch (const py::error_already_set&) {
    array = py::array();
  }
  if (!array) {
    PyErr_Clear();
    throw py::value_error(absl::StrCat(name, ": expected an array of numbers, got ",
                                       std::string(py::str(py::type::handle_of(object)))));
  }
  const char kind = array.dtype().kind();
  if (array.size() != 0 && std::string(kinds).find(kind) == std::string::npos) {
    throw py::value_error(absl::StrCat(name, ": expected ",
                                       std::string(kinds) == "biu" ? "integers" : "numbers",
                                       ", got dtype ", std::string(py::str(array.dtype()))));
  }
  return array;
}

// `array` as a C-contiguous array of T: itself when it is one, else a converted copy.
template <typename T>
py::array_t<T> Contiguous(const py::array& array) {
  return py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(array);
}

template <typename T>
std::vector<T> Values(const py::array& array) {
  const py::array_t<T> cast = Contiguous<T>(array);
  return std::vector<T>(cast.data(), cast.data() + cast.size());
}

}  // namespace

void ThrowIfError(const absl::Status& status) {
  if (!status.ok()) throw py::value_error(std::string(status.message()));
}

py::array_t<int64_t> ReadInt64Array(py::handle object, const char* name) {
  return Contiguous<int64_t>(AsNumericArray(object, name, "biu"));
}

std::vector<Grid> ReadGrids(py::handle object, const char* name) {
  std::vector<Grid> grids;
  if (object.is_none()) return grids;
  const py::array array = AsNumericArray(object, name, "biu");
  if (array.size() == 0) return grids;
  if (array.ndim() != 2 || array.shape(1) != 3) {
    throw py::value_error(absl::StrCat(name, ": expected [N, 3] (t, h, w) rows, got shape ",
                                       ShapeString(array)));
  }
  const std::vector<int64_t> flat = Values<int64_t>(array);
  for (size_t i = 0; i < flat.size(); i += 3) grids.push_back({flat[i], flat[i + 1], flat[i + 2]});
  return grids;
}

std::vector<float> ReadFloats(py::handle object, const char* name) {
  if (object.is_none()) return {};
  const py::array array = AsNumericArray(object, name, "biuf");
  if (array.ndim() > 1) {
    throw py::value_error(
        absl::StrCat(name, ": expected a flat list, got shape ", ShapeString(array)));
  }
  return Values<float>(array);
}

std::vector<int64_t> ReadInt64s(py::handle object, const char* name) {
  if (object.is_none()) return {};
  const py::array_t<int64_t> array = ReadInt64Array(object, name);
  if (array.ndim() > 1) {
    throw py::value_error(absl::StrCat(name, ": expected a flat list, got ", array.ndim(),
                                       " dimensions"));
  }
  return std::vector<int64_t>(array.data(), array.data() + array.size());
}

}  // namespace python
}  // namespace mrope
