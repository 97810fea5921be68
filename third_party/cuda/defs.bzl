"""CUDA for Bazel 4.2.3 offline: nvcc from the local toolkit (@local_cuda), no GPU needed to build.

cuda_library: the rule `cuda_objects` runs nvcc once per .cu file and returns CcInfo; nvcc
sees the headers, include dirs and defines of `deps`.

It emits SASS for sm_80 + sm_90 and PTX for compute_90, build -fPIC objects, and link cudart
statically by default. Host code should include plain C++ headers, not <cuda_runtime.h>.
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")
load("@local_cuda//:defs.bzl", "CUDA_AVAILABLE", "NVCC")
load("@rules_cc//cc:defs.bzl", "cc_library")

# Without a CUDA toolkit, CUDA targets and everything depending on them are skipped.
_COMPAT = [] if CUDA_AVAILABLE else ["@local_cuda//:cuda_missing"]

# Real SASS for A100 (sm_80) and H100 (sm_90) + PTX for newer GPUs (JIT-compiled by the driver).
DEFAULT_GPU_ARCHS = ["80", "90"]
DEFAULT_PTX_ARCH = "90"

def _nvcc_flags(gpu_archs, ptx_arch, debug):
    flags = ["-std=c++17", "-Xcompiler=-fPIC"]  # PIC: linked into PIE binaries and test .so's
    flags += ["-g", "-O0"] if debug else ["-O3"]
    flags += ["-gencode=arch=compute_%s,code=sm_%s" % (a, a) for a in gpu_archs]
    if ptx_arch:
        flags.append("-gencode=arch=compute_%s,code=compute_%s" % (ptx_arch, ptx_arch))
    return flags

def _cuda_objects_impl(ctx):
    cc_toolchain = find_cpp_toolchain(ctx)
    feature_configuration = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )
    dep_cc = cc_common.merge_cc_infos(cc_infos = [d[CcInfo] for d in ctx.attr.deps])
    comp = dep_cc.compilation_context

    # --define=mrope_cuda_archs=80,89,... and --define=mrope_ptx_arch=N replace every target's
    # archs (tools/build_wheel.sh: the wheel's GPUs).
    archs = ctx.var.get("mrope_cuda_archs", "")
    args = _nvcc_flags(
        archs.split(",") if archs else ctx.attr.gpu_archs,
        ctx.var.get("mrope_ptx_arch", ctx.attr.ptx_arch),
        ctx.var["COMPILATION_MODE"] == "dbg",
    )
    # The root of the repository holding the target ("external/mrope" when another workspace
    # depends on mrope), source and generated: "kernels/..." includes resolve there.
    root = ctx.label.workspace_root
    args += ["-I" + (root or "."), "-I" + ctx.bin_dir.path + ("/" + root if root else "")]
    args += ["-I" + d for d in comp.quote_includes.to_list() + comp.includes.to_list()]
    for d in comp.system_includes.to_list():
        args += ["-isystem", d]
    args += ["-D" + d for d in comp.defines.to_list()]
    args += ctx.attr.nvcc_opts

    inputs = depset(ctx.files.srcs + ctx.files.hdrs, transitive = [comp.headers])
    objs = []
    for src in ctx.files.srcs:
        if not src.path.endswith(".cu"):
            continue
        obj = ctx.actions.declare_file("_cuda_objs/%s/%s.o" % (ctx.label.name, src.basename[:-3]))
        ctx.actions.run(
            executable = NVCC,  # absolute path: not a declared input (the sandbox still sees it)
            arguments = args + ["-c", src.path, "-o", obj.path],
            inputs = inputs,
            outputs = [obj],
            mnemonic = "NvccCompile",
            progress_message = "nvcc %s" % src.short_path,
            use_default_shell_env = True,
        )
        objs.append(obj)

    archive = ctx.actions.declare_file("lib%s.pic.a" % ctx.label.name)
    ctx.actions.run(
        executable = cc_toolchain.ar_executable,
        arguments = ["rcs", archive.path] + [o.path for o in objs],
        inputs = objs,
        outputs = [archive],
        mnemonic = "NvccArchive",
    )
    lib = cc_common.create_library_to_link(
        actions = ctx.actions,
        feature_configuration = feature_configuration,
        cc_toolchain = cc_toolchain,
        pic_static_library = archive,
        alwayslink = ctx.attr.alwayslink,
    )
    linking_context = cc_common.create_linking_context(
        linker_inputs = depset([cc_common.create_linker_input(owner = ctx.label, libraries = depset([lib]))]),
    )
    return [
        DefaultInfo(files = depset([archive])),
        cc_common.merge_cc_infos(cc_infos = [CcInfo(linking_context = linking_context), dep_cc]),
    ]

cuda_objects = rule(
    implementation = _cuda_objects_impl,
    attrs = {
        "srcs": attr.label_list(allow_files = [".cu", ".cuh", ".h"]),
        "hdrs": attr.label_list(allow_files = [".cuh", ".h"]),
        "deps": attr.label_list(providers = [CcInfo]),
        "gpu_archs": attr.string_list(default = DEFAULT_GPU_ARCHS),
        "ptx_arch": attr.string(default = DEFAULT_PTX_ARCH),
        "nvcc_opts": attr.string_list(),
        "alwayslink": attr.bool(default = False),
        "_cc_toolchain": attr.label(default = "@bazel_tools//tools/cpp:current_cc_toolchain"),
    },
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
    fragments = ["cpp"],
)

# nvcc's resource usage (registers, shared memory, spills) per kernel and SASS arch, compiled
# with the flags cuda_objects uses. One line per arch and kernel (tab-separated): arch,
# registers, smem bytes, spill store bytes, spill load bytes, stack bytes, mangled kernel name.
_PTXAS_AWK = """
/Compiling entry function/ { split($0, q, "'"); kernel = q[2]; arch = q[4]; smem = 0; st = 0; ld = 0; stack = 0 }
/Function properties for/ { props = $NF }
/bytes stack frame/ && props == kernel { stack = $1; st = $5; ld = $9 }
/Used [0-9]+ registers/ && kernel != "" {
  for (i = 1; i <= NF; ++i) { if ($i == "registers,") regs = $(i - 1); if ($i ~ /^smem,?$/) smem = $(i - 2) }
  printf "%s\\t%s\\t%s\\t%s\\t%s\\t%s\\t%s\\n", arch, regs, smem, st, ld, stack, kernel
  kernel = ""
}
"""

def _cuda_resource_usage_impl(ctx):
    comp = cc_common.merge_cc_infos(cc_infos = [d[CcInfo] for d in ctx.attr.deps]).compilation_context
    args = ["-std=c++17", "-O3", "--resource-usage", "-I.", "-I" + ctx.bin_dir.path]
    args += ["-I" + d for d in comp.quote_includes.to_list() + comp.includes.to_list()]
    for d in comp.system_includes.to_list():
        args += ["-isystem", d]
    args += ["-D" + d for d in comp.defines.to_list()] + ctx.attr.nvcc_opts
    out = ctx.outputs.out
    src = ctx.file.src
    cmd = ["set -eo pipefail", ": > %s" % out.path]
    for arch in ctx.attr.gpu_archs:
        cmd.append(
            "%s %s -gencode=arch=compute_%s,code=sm_%s -c %s -o %s.o 2>&1 | awk '%s' >> %s" %
            (NVCC, " ".join(args), arch, arch, src.path, out.path, _PTXAS_AWK.replace("'", "'\\''"), out.path),
        )
    cmd.append("rm -f %s.o" % out.path)
    ctx.actions.run_shell(
        command = "\n".join(cmd),
        inputs = depset([src] + ctx.files.hdrs, transitive = [comp.headers]),
        outputs = [out],
        mnemonic = "NvccResourceUsage",
        progress_message = "nvcc --resource-usage %s" % src.short_path,
        use_default_shell_env = True,
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

cuda_resource_usage = rule(
    implementation = _cuda_resource_usage_impl,
    attrs = {
        "src": attr.label(allow_single_file = [".cu"]),
        "hdrs": attr.label_list(allow_files = [".cuh", ".h"]),
        "deps": attr.label_list(providers = [CcInfo]),
        "gpu_archs": attr.string_list(default = ["80", "90", "100"]),
        "nvcc_opts": attr.string_list(),
        "out": attr.output(mandatory = True),
    },
)

def cuda_library(
        name,
        srcs,
        hdrs = [],
        deps = [],
        cudart = "@local_cuda//:cudart_static",
        gpu_archs = DEFAULT_GPU_ARCHS,
        ptx_arch = DEFAULT_PTX_ARCH,
        nvcc_opts = [],
        **kwargs):
    """A cc_library whose code comes from .cu files.

    Args:
      name: target name; depend on it like on any cc_library.
      srcs: .cu files (and private .cuh/.h headers).
      hdrs: public plain-C++ headers.
      deps: cc_library deps; their headers are visible to nvcc.
      cudart: "@local_cuda//:cudart_static" (default) or "@local_cuda//:cudart" (shared).
      gpu_archs: SM versions for SASS.
      ptx_arch: compute capability for the embedded PTX ("" for none).
      nvcc_opts: extra nvcc flags.
      **kwargs: passed to the cc_library (visibility, tags, testonly, ...).
    """
    cuda_objects(
        name = name + "_cu",
        srcs = srcs,
        hdrs = hdrs,
        deps = deps,
        gpu_archs = gpu_archs,
        ptx_arch = ptx_arch,
        nvcc_opts = nvcc_opts,
        alwayslink = kwargs.get("alwayslink", False),
        tags = kwargs.get("tags", []),
        testonly = kwargs.get("testonly", False),
        visibility = ["//visibility:private"],
        target_compatible_with = _COMPAT,
    )
    cc_library(
        name = name,
        hdrs = hdrs,
        deps = deps + [":" + name + "_cu", cudart],
        target_compatible_with = _COMPAT,
        **kwargs
    )
