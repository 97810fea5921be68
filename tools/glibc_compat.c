/* What bookworm's gcc 12 (its libstdc++.a, and headers inlining code into mrope, Abseil and
   protobuf) references but glibc 2.28, the floor of the shipped libraries (manylinux_2_28),
   does not export. Linked into the shipped libraries only, last (tools/glibc_stubs.sh,
   tools/static_bazel.sh): hidden, so each library uses its own copy and exports none of it.
   A symbol that glibc 2.28 lacks and this file does not define fails the link of
   libmrope_c.so (--no-undefined) and python/tests/wheel_checks.py's symbol test. */
#define _GNU_SOURCE
#include <sys/stat.h>

/* glibc 2.32: nonzero while the process has a single thread, when libstdc++'s reference counts
   (shared_ptr, locale, ...) skip their atomic operations. 0 claims nothing: always atomic,
   correct with any number of threads. */
char __libc_single_threaded = 0;

/* glibc 2.33 made stat and fstat64 functions; before, its headers inlined them as calls of
   __xstat and __fxstat64 with version 1 (_STAT_VER on x86-64), which glibc still exports. */
extern int __xstat(int version, const char* path, struct stat* buf);
extern int __fxstat64(int version, int fd, struct stat64* buf);

int stat(const char* path, struct stat* buf) { return __xstat(1, path, buf); }

int fstat64(int fd, struct stat64* buf) { return __fxstat64(1, fd, buf); }
