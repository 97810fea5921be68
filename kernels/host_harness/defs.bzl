"""Builds kernel tests for the host execution harness in one sanitizer variant.

host_harness_variant(name, copts, linkopts) defines, for that variant:
  <name>_kernel     kernels/mrope_kernel.cu and fused_kernel.cu compiled as C++ with the prelude,
                    + LaunchMropeKernel and LaunchFusedMropeKernel (kernel_visibility: who
                    else may link it, e.g. the C ABI's host-harness test library)
  <name>_test_lib   tests/kernels/mrope_kernel_test.cc against the harness (the unmodified GPU tests)
  <name>_planted    planted_bugs_test.cc: the harness must report each planted bug
Tests are declared by the caller (BUILD.bazel) so that each chooses its arguments.
"""

load("@rules_cc//cc:defs.bzl", "cc_library", "cc_test")
load("//tests/kernels:kernel_test.bzl", "KERNEL_TEST_DATA", "KERNEL_TEST_DEPS", "KERNEL_TEST_SRCS")

# Every variant checks the alignment of every typed access (16-byte vectors included), and
# keeps the CPU reference's no-contraction rule.
BASE_COPTS = [
    "-ffp-contract=off",
    "-fsanitize=alignment",
    "-fno-sanitize-recover=alignment",
    "-Wno-unknown-pragmas",  # #pragma unroll
]
BASE_LINKOPTS = ["-fsanitize=alignment"]

PRELUDE = ["-include", "kernels/host_harness/cuda_host_prelude.h"]

def host_harness_variant(name, copts = [], linkopts = [], tags = [], kernel_visibility = None):
    cc_library(
        name = name + "_kernel",
        visibility = kernel_visibility,
        srcs = [
            ":fused_kernel_host_cc",
            ":mrope_kernel_host_cc",
        ],
        copts = BASE_COPTS + PRELUDE + copts,
        linkopts = BASE_LINKOPTS + linkopts,
        tags = tags,
        deps = [
            ":host_runtime",
            "//kernels:kernel_device_headers",
            "//kernels:fused_kernel_launcher",
            "//kernels:mrope_kernel_args",
            "//kernels:mrope_kernel_launcher",
            "//mrope/rotary:rope_math",
        ],
        alwayslink = True,
    )
    cc_library(
        name = name + "_test_lib",
        testonly = True,
        srcs = KERNEL_TEST_SRCS,
        copts = BASE_COPTS + copts,
        linkopts = BASE_LINKOPTS + linkopts,
        tags = tags,
        data = KERNEL_TEST_DATA,
        deps = KERNEL_TEST_DEPS + [
            ":host_gpu_util",
            ":" + name + "_kernel",
            "@com_google_googletest//:gtest",
        ],
        alwayslink = True,
    )
    cc_test(
        name = name + "_planted_bugs_test",
        size = "medium",
        srcs = ["planted_bugs_test.cc"],
        copts = BASE_COPTS + PRELUDE + copts,
        linkopts = BASE_LINKOPTS + linkopts,
        args = ["--gtest_death_test_style=threadsafe"],
        tags = tags,
        deps = [
            ":host_runtime",
            "//kernels:kernel_device_headers",
            "@com_google_googletest//:gtest_main",
        ],
    )
