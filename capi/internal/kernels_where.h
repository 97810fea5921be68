#ifndef MROPE_CAPI_INTERNAL_KERNELS_WHERE_H_
#define MROPE_CAPI_INTERNAL_KERNELS_WHERE_H_

namespace mrope {
namespace capi {

// True in the test build whose kernels run on the host execution harness
// (mrope_library_info::kernels_on_host); defined by the library variant's own target.
extern const bool kKernelsOnHost;

}  // namespace capi
}  // namespace mrope

#endif  // MROPE_CAPI_INTERNAL_KERNELS_WHERE_H_
