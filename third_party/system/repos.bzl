"""Offline wrappers for Debian system libraries and the CUDA toolkit (Bazel 4.2.3, WORKSPACE).

Each repository gets the *upstream* name and upstream-style labels
(@com_google_absl//absl/status:statusor, @com_google_googletest//:gtest_main,
@com_google_protobuf//:protobuf), so BUILD files stay the same when MODULE.bazel
(bzlmod, with repo_name = "com_google_...") is used instead on a machine with internet.
"""

def _fail_missing(rctx, path):
    fail("%s: %s not found. Install the Debian packages: apt-get install -y %s" %
         (rctx.name, path, rctx.attr.apt_hint))

# ---------------------------------------------------------------------------
# Generic: symlink some system paths into a repo and add a BUILD file.
# ---------------------------------------------------------------------------
def _system_repo_impl(rctx):
    for dst, src in rctx.attr.symlinks.items():
        if not rctx.path(src).exists:
            _fail_missing(rctx, src)
        rctx.symlink(src, dst)
    rctx.file("WORKSPACE", 'workspace(name = "%s")\n' % rctx.name)
    rctx.symlink(rctx.attr.build_file, "BUILD.bazel")
    for label, dst in rctx.attr.files.items():
        rctx.symlink(label, dst)

system_repo = repository_rule(
    implementation = _system_repo_impl,
    local = True,
    attrs = {
        "symlinks": attr.string_dict(doc = "repo path -> absolute system path"),
        "build_file": attr.label(allow_single_file = True, mandatory = True),
        "files": attr.label_keyed_string_dict(allow_files = True, doc = "extra files: label -> repo path"),
        "apt_hint": attr.string(),
    },
)

# ---------------------------------------------------------------------------
# Abseil (Debian libabsl-dev 20220623): upstream labels, link flags from pkg-config.
# Add a line here when the project needs another absl target.
# ---------------------------------------------------------------------------
_ABSL_TARGETS = {
    # "upstream package:target": "pkg-config module (Debian /usr/lib/<arch>/pkgconfig)"
    "absl/algorithm:algorithm": "absl_algorithm",
    "absl/algorithm:container": "absl_algorithm_container",
    "absl/base:base": "absl_base",
    "absl/base:core_headers": "absl_core_headers",
    "absl/cleanup:cleanup": "absl_cleanup",
    "absl/container:btree": "absl_btree",
    "absl/container:fixed_array": "absl_fixed_array",
    "absl/container:flat_hash_map": "absl_flat_hash_map",
    "absl/container:flat_hash_set": "absl_flat_hash_set",
    "absl/container:inlined_vector": "absl_inlined_vector",
    "absl/container:node_hash_map": "absl_node_hash_map",
    "absl/container:node_hash_set": "absl_node_hash_set",
    "absl/debugging:failure_signal_handler": "absl_failure_signal_handler",
    "absl/debugging:leak_check": "absl_leak_check",
    "absl/debugging:stacktrace": "absl_stacktrace",
    "absl/debugging:symbolize": "absl_symbolize",
    "absl/flags:config": "absl_flags_config",
    "absl/flags:flag": "absl_flags",
    "absl/flags:marshalling": "absl_flags_marshalling",
    "absl/flags:parse": "absl_flags_parse",
    "absl/flags:reflection": "absl_flags_reflection",
    "absl/flags:usage": "absl_flags_usage",
    "absl/functional:any_invocable": "absl_any_invocable",
    "absl/functional:bind_front": "absl_bind_front",
    "absl/functional:function_ref": "absl_function_ref",
    "absl/hash:hash": "absl_hash",
    "absl/memory:memory": "absl_memory",
    "absl/meta:type_traits": "absl_type_traits",
    "absl/numeric:bits": "absl_bits",
    "absl/numeric:int128": "absl_int128",
    "absl/random:bit_gen_ref": "absl_random_bit_gen_ref",
    "absl/random:distributions": "absl_random_distributions",
    "absl/random:random": "absl_random_random",
    "absl/random:seed_sequences": "absl_random_seed_sequences",
    "absl/status:status": "absl_status",
    "absl/status:statusor": "absl_statusor",
    "absl/strings:cord": "absl_cord",
    "absl/strings:str_format": "absl_str_format",
    "absl/strings:strings": "absl_strings",
    "absl/synchronization:synchronization": "absl_synchronization",
    "absl/time:time": "absl_time",
    "absl/types:any": "absl_any",
    "absl/types:compare": "absl_compare",
    "absl/types:optional": "absl_optional",
    "absl/types:span": "absl_span",
    "absl/types:variant": "absl_variant",
    "absl/utility:utility": "absl_utility",
}

def _pkg_config_libs(rctx, module):
    res = rctx.execute(["pkg-config", "--libs", module])
    if res.return_code != 0:
        fail("pkg-config --libs %s failed (%s). apt-get install -y %s pkg-config" %
             (module, res.stderr.strip(), rctx.attr.apt_hint))
    return res.stdout.strip().split(" ")

# $MROPE_STATIC_DEPS: the prefix of tools/build_static_deps.sh (headers, and libabsl.a and
# libprotobuf.a built with -fPIC and hidden visibility). Set (tools/build_wheel.sh, in an output
# base of its own), @com_google_absl and @com_google_protobuf link those archives instead of
# Debian's shared libraries; the normal build, the sanitizers' included, never sets it.
_STATIC_DEPS = "MROPE_STATIC_DEPS"

def _static_deps_prefix(rctx):
    prefix = rctx.os.environ.get(_STATIC_DEPS, "")
    if not prefix:
        return None
    for f in ["include/absl/base/config.h", "lib/libabsl.a", "lib/libprotobuf.a"]:
        if not rctx.path(prefix + "/" + f).exists:
            fail("%s=%s: no %s there (make it with tools/build_static_deps.sh)" % (_STATIC_DEPS, prefix, f))
    return prefix

def _system_absl_impl(rctx):
    static = _static_deps_prefix(rctx)
    inc = (static + "/include" if static else rctx.attr.include_dir) + "/absl"
    if not rctx.path(inc + "/base/config.h").exists:
        _fail_missing(rctx, inc)

    # Headers live under include/ (not a package), so every target can declare all of them.
    rctx.symlink(inc, "include/absl")
    rctx.file("WORKSPACE", 'workspace(name = "%s")\n' % rctx.name)
    all_libs = []
    packages = {}
    for label, module in _ABSL_TARGETS.items():
        pkg, name = label.split(":")
        libs = [] if static else [f for f in _pkg_config_libs(rctx, module) if f]
        for f in libs:
            if f not in all_libs:
                all_libs.append(f)
        packages.setdefault(pkg, []).append(
            'cc_library(\n    name = "%s",\n    linkopts = %s,\n    deps = ["//:headers"],\n)\n' % (name, repr(libs)),
        )
    for pkg, rules in packages.items():
        rctx.file(
            pkg + "/BUILD.bazel",
            'package(default_visibility = ["//visibility:public"])\n\n' + "\n".join(rules),
        )
    if static:
        # One archive of what mrope links (status, strings, str_format and their deps); every
        # target depends on it through //:headers, and the linker takes only what is used.
        rctx.symlink(static + "/lib/libabsl.a", "lib/libabsl.a")
        headers_deps = '\n    srcs = ["lib/libabsl.a"],\n    linkopts = ["-pthread"],\n    linkstatic = True,'
    else:
        headers_deps = ""
    rctx.file("BUILD.bazel", """package(default_visibility = ["//visibility:public"])

# All absl headers of the system install (Debian libabsl-dev), or of the static build.
cc_library(
    name = "headers",
    hdrs = glob(["include/absl/**/*.h", "include/absl/**/*.inc"]),
    includes = ["include"],%s
)

# Everything at once (not an upstream label; for quick experiments).
cc_library(
    name = "absl",
    linkopts = %s,
    deps = [":headers"],
)
""" % (headers_deps, repr(all_libs)))

system_absl = repository_rule(
    implementation = _system_absl_impl,
    local = True,
    environ = ["PKG_CONFIG_PATH", _STATIC_DEPS],
    attrs = {
        "include_dir": attr.string(default = "/usr/include"),
        "apt_hint": attr.string(default = "libabsl-dev"),
    },
)

# ---------------------------------------------------------------------------
# protobuf (Debian libprotobuf-dev + protobuf-compiler 3.21.12, or the static build of the same
# version: $MROPE_STATIC_DEPS above). protoc is always the system's.
# ---------------------------------------------------------------------------
def _system_protobuf_impl(rctx):
    static = _static_deps_prefix(rctx)
    include = (static + "/include" if static else "/usr/include") + "/google/protobuf"
    for path in [include + "/message.h", "/usr/bin/protoc"]:
        if not rctx.path(path).exists:
            _fail_missing(rctx, path)
    rctx.symlink(include, "include/google/protobuf")
    rctx.symlink("/usr/bin/protoc", "bin/protoc")
    if static:
        rctx.symlink(static + "/lib/libprotobuf.a", "lib/libprotobuf.a")
    rctx.file("link.bzl", "\n".join([
        '"""How @com_google_protobuf//:protobuf links (third_party/system/repos.bzl)."""',
        "PROTOBUF_SRCS = %s" % repr(["lib/libprotobuf.a"] if static else []),
        "PROTOBUF_LINKOPTS = %s" % repr(["-pthread"] if static else ["-lprotobuf", "-pthread"]),
        "PROTOBUF_LITE_LINKOPTS = %s" % repr(["-pthread"] if static else ["-lprotobuf-lite", "-pthread"]),
        "",
    ]))
    rctx.file("WORKSPACE", 'workspace(name = "%s")\n' % rctx.name)
    rctx.symlink(rctx.attr.build_file, "BUILD.bazel")
    for label, dst in rctx.attr.files.items():
        rctx.symlink(label, dst)

system_protobuf = repository_rule(
    implementation = _system_protobuf_impl,
    local = True,
    environ = [_STATIC_DEPS],
    attrs = {
        "build_file": attr.label(allow_single_file = True, mandatory = True),
        "files": attr.label_keyed_string_dict(allow_files = True, doc = "extra files: label -> repo path"),
        "apt_hint": attr.string(default = "libprotobuf-dev protobuf-compiler"),
    },
)

# ---------------------------------------------------------------------------
# CUDA toolkit (not a Debian package here: /usr/local/cuda, or $CUDA_PATH).
# ---------------------------------------------------------------------------
def _local_cuda_impl(rctx):
    root = rctx.os.environ.get("CUDA_PATH", rctx.attr.default_path)
    nvcc = rctx.path(root + "/bin/nvcc")
    rctx.file("WORKSPACE", 'workspace(name = "%s")\n' % rctx.name)
    if not nvcc.exists:
        # No toolkit: cuda_library targets (and all that depend on them) become incompatible
        # and are skipped by `bazel build/test //...` instead of failing the whole build.
        print("local_cuda: %s not found (set CUDA_PATH); CUDA targets will be skipped" % nvcc)
        rctx.file("defs.bzl", 'CUDA_AVAILABLE = False\nCUDA_PATH = ""\nNVCC = "false"\nNVCC_VERSION = ""\n')
        rctx.file("BUILD.bazel", """package(default_visibility = ["//visibility:public"])
exports_files(["defs.bzl"])
constraint_setting(name = "cuda")
constraint_value(name = "cuda_missing", constraint_setting = ":cuda")
cc_library(name = "cuda_headers", target_compatible_with = [":cuda_missing"])
cc_library(name = "cudart_static", target_compatible_with = [":cuda_missing"])
cc_library(name = "cudart", target_compatible_with = [":cuda_missing"])
""")
        return
    res = rctx.execute([str(nvcc), "--version"])
    version = res.stdout.strip().split("\n")[-1]
    rctx.symlink(root + "/include", "include")
    rctx.symlink(root + "/lib64", "lib64")
    rctx.file("defs.bzl", 'CUDA_AVAILABLE = True\nCUDA_PATH = "%s"\nNVCC = "%s"\nNVCC_VERSION = "%s"\n' % (root, nvcc, version))
    rctx.symlink(rctx.attr.build_file, "BUILD.bazel")

local_cuda = repository_rule(
    implementation = _local_cuda_impl,
    local = True,
    environ = ["CUDA_PATH"],
    attrs = {
        "default_path": attr.string(default = "/usr/local/cuda"),
        "build_file": attr.label(allow_single_file = True, mandatory = True),
    },
)

# ---------------------------------------------------------------------------
# pybind11 (Debian pybind11-dev) + the headers of the system Python (python3-dev), as
# @pybind11//:pybind11. The interpreter is $MROPE_PYTHON or /usr/bin/python3 (Debian's, whose
# python3-numpy and python3-pytest the tests use); its include dir comes from its sysconfig.
# $MROPE_PYTHON_INCLUDE and $MROPE_PYBIND11_INCLUDE name other ones (tools/build_wheel.sh
# --python X.Y: the headers of another Debian suite's CPython and pybind11, in a chroot).
# ---------------------------------------------------------------------------
def _system_pybind11_impl(rctx):
    include = rctx.os.environ.get("MROPE_PYTHON_INCLUDE", "")
    if not include:
        python = rctx.os.environ.get("MROPE_PYTHON", rctx.attr.default_python)
        if not rctx.path(python).exists:
            _fail_missing(rctx, python)
        res = rctx.execute([python, "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"])
        if res.return_code != 0:
            fail("%s: %s failed: %s" % (rctx.name, python, res.stderr))
        include = res.stdout.strip()
    pybind11_include = rctx.os.environ.get("MROPE_PYBIND11_INCLUDE", rctx.attr.pybind11_include)
    for path in [include + "/Python.h", pybind11_include + "/pybind11/pybind11.h"]:
        if not rctx.path(path).exists:
            _fail_missing(rctx, path)
    rctx.symlink(include, "include/python")
    rctx.symlink(pybind11_include + "/pybind11", "include/pybind11")

    # Debian's pyconfig.h includes <x86_64-linux-gnu/pythonX.Y/pyconfig.h> from beside the
    # include dir: found in /usr/include for this machine's Python, not for a chroot's.
    parent = include.rpartition("/")[0]
    for line in rctx.read(include + "/pyconfig.h").splitlines():
        line = line.strip()
        if line.startswith("#") and line.endswith("/pyconfig.h>") and "include <" in line:
            multiarch = line[line.find("<") + 1:-len("/pyconfig.h>")]
            if rctx.path(parent + "/" + multiarch).exists:
                rctx.symlink(parent + "/" + multiarch, "include/python_multiarch/" + multiarch)
    rctx.file("WORKSPACE", 'workspace(name = "%s")\n' % rctx.name)
    rctx.symlink(rctx.attr.build_file, "BUILD.bazel")

system_pybind11 = repository_rule(
    implementation = _system_pybind11_impl,
    local = True,
    environ = ["MROPE_PYTHON", "MROPE_PYTHON_INCLUDE", "MROPE_PYBIND11_INCLUDE"],
    attrs = {
        "default_python": attr.string(default = "/usr/bin/python3"),
        "pybind11_include": attr.string(default = "/usr/include"),
        "build_file": attr.label(allow_single_file = True, mandatory = True),
        "apt_hint": attr.string(default = "pybind11-dev python3-dev"),
    },
)

# ---------------------------------------------------------------------------
# A directory of mrope's checkout as a repository, found from mrope's own root (a
# local_repository path would be relative to the workspace that calls offline_dependencies()).
# ---------------------------------------------------------------------------
def _mrope_directory_repo_impl(rctx):
    root = rctx.path(rctx.attr._mrope_workspace).dirname
    source = rctx.path("%s/%s" % (root, rctx.attr.path))  # get_child: one component in 4.2.3
    if not source.exists:
        fail("%s: %s does not exist" % (rctx.name, source))
    for entry in source.readdir():
        rctx.symlink(entry, entry.basename)

mrope_directory_repo = repository_rule(
    implementation = _mrope_directory_repo_impl,
    local = True,
    attrs = {
        "path": attr.string(mandatory = True, doc = "directory, relative to mrope's root"),
        "_mrope_workspace": attr.label(default = Label("//:WORKSPACE")),
    },
)

# ---------------------------------------------------------------------------
# Everything the WORKSPACE needs, in one call. It works from mrope's own WORKSPACE and from a
# project that has mrope as @mrope: every file it names is a Label(), so it resolves in mrope.
# ---------------------------------------------------------------------------
def offline_dependencies():
    # Bazel 4.2.3's built-in @bazel_tools load these; the real ones are http_archives
    # (would need the network). Tiny stand-ins live in third_party/bazel4/.
    for name in ["rules_cc", "rules_java", "rules_proto", "remote_coverage_tools"]:
        mrope_directory_repo(name = name, path = "third_party/bazel4/" + name)

    system_absl(name = "com_google_absl")

    system_repo(
        name = "com_google_googletest",
        build_file = Label("//third_party/system:googletest.BUILD"),
        symlinks = {
            "include/gtest": "/usr/include/gtest",
            "include/gmock": "/usr/include/gmock",
        },
        apt_hint = "libgtest-dev libgmock-dev",
    )

    system_protobuf(
        name = "com_google_protobuf",
        build_file = Label("//third_party/system:protobuf.BUILD"),
        files = {
            Label("//third_party/system:protobuf_bazel_cc_proto_library.bzl"): "bazel/cc_proto_library.bzl",
            Label("//third_party/system:protobuf_bazel_proto_library.bzl"): "bazel/proto_library.bzl",
            Label("//third_party/system:protobuf_bazel_BUILD"): "bazel/BUILD.bazel",
        },
    )

    system_repo(
        name = "com_github_google_benchmark",
        build_file = Label("//third_party/system:benchmark.BUILD"),
        symlinks = {"include/benchmark": "/usr/include/benchmark"},
        apt_hint = "libbenchmark-dev",
    )

    system_repo(
        name = "rapidjson",
        build_file = Label("//third_party/system:rapidjson.BUILD"),
        symlinks = {"include/rapidjson": "/usr/include/rapidjson"},
        apt_hint = "rapidjson-dev",
    )

    system_pybind11(
        name = "pybind11",
        build_file = Label("//third_party/system:python.BUILD"),
    )

    local_cuda(
        name = "local_cuda",
        build_file = Label("//third_party/system:cuda.BUILD"),
    )
