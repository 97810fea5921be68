#include "capi/internal/kernels_where.h"

namespace mrope {
namespace capi {

const bool kKernelsOnHost = MROPE_C_KERNELS_ON_HOST;

}  // namespace capi
}  // namespace mrope
