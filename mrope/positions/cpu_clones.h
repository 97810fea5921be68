#ifndef MROPE_POSITIONS_CPU_CLONES_H_
#define MROPE_POSITIONS_CPU_CLONES_H_

// MROPE_CPU_CLONES on a function definition builds it for AVX-512, AVX2 and the default target
// (SSE2), and picks one once at load time by the CPU (GCC's target_clones). The default build is
// SSE2 only, whose 16-byte loads and stores run at about half the speed of AVX2's; the scan
// kernels' 64-byte AVX-512 blocks are 10-20% faster again than AVX2 on the large prompts.
//
// Not under sanitizers (MROPE_NO_IFUNC, set by .bazelrc's asan/tsan configs): the clones' IFUNC
// resolver runs during relocation, before a sanitizer runtime is initialised, and an
// instrumented resolver crashes there (seen with TSan).
//
// Each clone starts on a 64-byte boundary, so that where its loops fall relative to the
// instruction fetch blocks no longer depends on the code around it: an unrelated change that
// moved the int32 grid kernel from 48 to 16 bytes past a boundary made the int32 fills 15-25%
// slower.
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(MROPE_NO_IFUNC)
#define MROPE_CPU_CLONES \
  __attribute__((target_clones("avx512f", "avx2", "default"), aligned(64)))
#else
#define MROPE_CPU_CLONES
#endif

// MROPE_CLONE_INLINE on a helper that cloned functions call: it must be inlined into each clone,
// since an out-of-line copy is compiled for the default target only (and runs SSE2 code inside
// the AVX-512 clone).
#if defined(__GNUC__)
#define MROPE_CLONE_INLINE inline __attribute__((always_inline))
#else
#define MROPE_CLONE_INLINE inline
#endif

#endif  // MROPE_POSITIONS_CPU_CLONES_H_
