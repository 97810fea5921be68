"""mrope_c_shared_library: the C ABI linked into one shared library."""

load("@rules_cc//cc:defs.bzl", "cc_binary")

def mrope_c_shared_library(name, deps, testonly = False):
    """libmrope_c.so-style library: the ABI (:abi) + `deps` (the kernels' device code).

    Only the C ABI's functions are exported (mrope_c.lds); mrope's own C++ symbols stay
    local. Dependencies link as their targets provide them (README.md here).
    """
    cc_binary(
        name = name,
        linkshared = True,
        linkstatic = True,
        testonly = testonly,
        additional_linker_inputs = [":mrope_c.lds"],
        linkopts = [
            "-Wl,--version-script=$(location :mrope_c.lds)",
            "-Wl,-soname," + name,  # what consumers record (IMPORTED_SONAME in CMake)
            "-Wl,--no-undefined",
            "-Wl,--as-needed",  # only the system libraries the ABI actually calls
        ],
        deps = [":abi"] + deps,
    )
