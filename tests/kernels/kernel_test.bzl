"""What tests/kernels/mrope_kernel_test.cc needs besides its backend (the GPU build in
tests/kernels/BUILD.bazel, or the host execution harness in kernels/host_harness/defs.bzl)."""

# Sources of the kernel test binary (both backends).
KERNEL_TEST_SRCS = [
    "//tests/kernels:bf16_exact_test.cc",
    "//tests/kernels:fused_kernel_test.cc",
    "//tests/kernels:kernel_test_util.cc",
    "//tests/kernels:kernel_test_util.h",
    "//tests/kernels:mrope_kernel_test.cc",
    "//tests/kernels:packed_kernel_test.cc",
]

KERNEL_TEST_DEPS = [
    "//kernels:fused_kernel_launcher",
    "//kernels:fused_reference",
    "//kernels:mrope_kernel_args",
    "//kernels:mrope_kernel_launcher",
    "//mrope/common:json",
    "//mrope/model:family_rotary",
    "//mrope/positions",
    "//mrope/positions:context_parallel",
    "//mrope/rotary:attention_case",
    "//mrope/rotary:apply",
    "//mrope/rotary:axis_map",
    "//mrope/rotary:cos_sin_table",
    "//mrope/rotary:dtype_storage",
    "//mrope/rotary:half_float",
    "//mrope/rotary:rope_math",
    "//mrope/rotary:rope_params",
    "//mrope/rotary:rotary_case",
    "//tests/testing:positions_testing",
    "//tests/testing:preset_rope",
    "//tests/testing:rotary_testing",
    "@com_google_absl//absl/status",
    "@com_google_absl//absl/status:statusor",
    "@com_google_absl//absl/strings",
    "@com_google_protobuf//:protobuf",
]

KERNEL_TEST_DATA = [
    "//tests/golden:attention_cases",
    "//tests/golden:rotary_cases",
]
