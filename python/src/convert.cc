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

// `object` as a numpy array of numbers (`kinds`: numpy dtype kinds accepted), read through
// numpy.asarray or DLPack; strings, objects and ragged lists are refused. An empty array
// passes whatever its dtype ([] is float64).
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
  // numpy reads a DLPack-only object (GPU array libraries' host arrays) as one Python object.
  // A numpy array of objects is what it is: refused below, never passed to DLPack.
  if (array.dtype().kind() == 'O' && !py::isinstance<py::array>(object) &&
      py::hasattr(object, "__dlpack__")) {
    try {
      array = py::array::ensure(py::module_::import("numpy").attr("from_dlpack")(object));
    } catch (const py::error_already_set& error) {
      throw py::value_error(absl::StrCat(name, ": cannot read it through DLPack (",
                                         error.what(), ")"));
    }
  }
  const char kind = array.dtype().kind();
  if (array.size() != 0 && std::string(kinds).find(kind) == std::string::npos) {
    throw py::value_error(absl::StrCat(name, ": expected ",
                                       std::string(kinds) == "biu" ? "integers" : "numbers",
                                       ", got dtype ", std::string(py::str(array.dtype()))));
  }
  return array;
}

// `object` as a C-contiguous array of T: itself when it is one (checked first: the common case
// costs no conversion), else a converted copy of a numeric array of `kinds`.
template <typename T>
py::array_t<T> ReadArray(py::handle object, const char* name, const char* kinds) {
  if (py::isinstance<py::array_t<T, py::array::c_style>>(object)) {
    return py::reinterpret_borrow<py::array_t<T>>(object);
  }
  return py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(
      AsNumericArray(object, name, kinds));
}

}  // namespace

void ThrowIfError(const absl::Status& status) {
  if (!status.ok()) throw py::value_error(std::string(status.message()));
}

py::array_t<int64_t> ReadInt64Array(py::handle object, const char* name) {
  return ReadArray<int64_t>(object, name, "biu");
}

std::vector<Grid> ReadGrids(py::handle object, const char* name) {
  std::vector<Grid> grids;
  if (object.is_none()) return grids;
  const py::array_t<int64_t> array = ReadInt64Array(object, name);
  if (array.size() == 0) return grids;
  if (array.ndim() != 2 || array.shape(1) != 3) {
    throw py::value_error(absl::StrCat(name, ": expected [N, 3] (t, h, w) rows, got shape ",
                                       ShapeString(array)));
  }
  const int64_t* flat = array.data();
  grids.reserve(array.shape(0));
  for (py::ssize_t i = 0; i < array.size(); i += 3) {
    grids.push_back({flat[i], flat[i + 1], flat[i + 2]});
  }
  return grids;
}

std::vector<double> ReadSeconds(py::handle object, const char* name) {
  if (object.is_none()) return {};
  const py::array_t<double> array = ReadArray<double>(object, name, "biuf");
  if (array.ndim() > 1) {
    throw py::value_error(
        absl::StrCat(name, ": expected a flat list, got shape ", ShapeString(array)));
  }
  return std::vector<double>(array.data(), array.data() + array.size());
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
