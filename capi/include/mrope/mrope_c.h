/*
 * mrope's stable C ABI: M-RoPE positions, cos/sin and the CUDA kernels from any language or
 * build system (libmrope_c.so; CMake: find_package(mrope CONFIG), target mrope::mrope_c).
 *
 * Conventions:
 *  - Every function returning int returns an mrope_status code (0 = MROPE_OK) and, when
 *    `message` is not NULL and message_size > 0, writes a NUL-terminated message into it
 *    (truncated to fit; empty on success). Messages name the field and the value at fault.
 *  - Every struct passed by pointer at the top level starts with `struct_size`: set it to
 *    sizeof(the struct) and zero every field you do not set (e.g. `= {sizeof(args)}` or
 *    memset). A library newer than this header reads an older (smaller) struct with the new
 *    fields at zero; a library older than this header accepts a larger struct only when the
 *    fields it does not know are zero (else MROPE_UNIMPLEMENTED). The nested structs
 *    (mrope_heads_view, ...) never change; new fields go at the end of the top-level structs.
 *  - Handles (mrope_model, mrope_rotary) are immutable after creation and may be used from
 *    any number of threads at once; free each exactly once.
 *  - Kernel launches take device pointers and a CUDA stream (a cudaStream_t; NULL is the legacy
 *    default stream); they validate on the host, enqueue and return without synchronising,
 *    allocating or querying the device, so they can be captured in CUDA graphs. Problems only
 *    the device can see (a position outside the rotary table, a bad slot) skip the token and
 *    set MROPE_ERROR_* bits in the caller's device int `error_flag`.
 *  - Strides are in elements; the last (head_dim) dimension is contiguous.
 *
 * The C++ API behind it: mrope/service/position_service.h, kernels/mrope_kernel.h and
 * kernels/fused_kernel.h (same semantics, field by field).
 */
#ifndef MROPE_MROPE_C_H_
#define MROPE_MROPE_C_H_

#include <stddef.h>
#include <stdint.h>

#define MROPE_C_API_VERSION 1

/* The library's exports (its version script keeps everything else local). */
#if defined(__GNUC__)
#define MROPE_C_API __attribute__((visibility("default")))
#else
#define MROPE_C_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes: the canonical (absl / gRPC) status codes. */
typedef enum mrope_status {
  MROPE_OK = 0,
  MROPE_INVALID_ARGUMENT = 3,
  MROPE_NOT_FOUND = 5,
  MROPE_RESOURCE_EXHAUSTED = 8,
  MROPE_FAILED_PRECONDITION = 9,
  MROPE_OUT_OF_RANGE = 11,
  MROPE_UNIMPLEMENTED = 12,
  MROPE_INTERNAL = 13, /* e.g. a CUDA launch failed */
} mrope_status;

/* Bits the kernels OR into *error_flag (kernels/mrope_kernel_args.h, fused_kernel_args.h). */
#define MROPE_ERROR_POSITION_OUT_OF_RANGE 1
#define MROPE_ERROR_SEQUENCE_OUT_OF_RANGE 2
#define MROPE_ERROR_SLOT_OUT_OF_RANGE 4

/* Element types (int32_t fields below). MROPE_FLOAT8_E4M3: fused-kernel outputs only. */
typedef enum mrope_dtype {
  MROPE_FLOAT32 = 0,
  MROPE_BFLOAT16 = 1,
  MROPE_FLOAT16 = 2,
  MROPE_FLOAT8_E4M3 = 3,
} mrope_dtype;

/* Which way the kernels rotate (int32_t `direction` fields below). The inverse rotates by
 * -angle: applied to the gradients of the rotated q and k it gives the gradients of q and k
 * (M-RoPE's backward), and it undoes a forward rotation within rounding. */
typedef enum mrope_direction {
  MROPE_FORWARD = 0,
  MROPE_INVERSE = 1,
} mrope_direction;

/* Output types of positions. */
typedef enum mrope_position_type {
  MROPE_POSITIONS_INT64 = 0,
  MROPE_POSITIONS_INT32 = 1,   /* refuses values that do not fit */
  MROPE_POSITIONS_FLOAT32 = 2, /* Qwen3-Omni's fractional positions */
} mrope_position_type;

/* A cudaStream_t, declared as <driver_types.h> does (no CUDA header needed). */
struct CUstream_st;
typedef struct CUstream_st* mrope_stream;

/* MROPE_C_API_VERSION of the loaded library. */
MROPE_C_API uint32_t mrope_c_api_version(void);

/* ------------------------------------------------------------------ library */

typedef struct mrope_library_info {
  uint32_t struct_size;
  uint32_t api_version;
  /* 1: the kernels run on the CPU (the test build over the host execution harness: "device"
   * pointers are host pointers, launches finish before returning). 0: CUDA. */
  int32_t kernels_on_host;
} mrope_library_info;

MROPE_C_API int mrope_library_get_info(mrope_library_info* info, char* message,
                                       size_t message_size);

/* ------------------------------------------------------------------ models */

typedef struct mrope_model mrope_model;

/* A preset name (e.g. "qwen2_5_vl"), an HF config.json, a checkpoint directory or a
 * ModelParams textproto (C++: LoadModelSpec). */
MROPE_C_API int mrope_model_load(const char* preset_or_path, mrope_model** model, char* message,
                                 size_t message_size);

/* A config file's contents already read: `path` picks the parser (.textproto/.txtpb/.pbtxt
 * or JSON) and names the model; nothing is read from disk. */
MROPE_C_API int mrope_model_from_config_text(const char* path, const char* text, size_t text_size,
                                             mrope_model** model, char* message,
                                             size_t message_size);

/* A preset with some values replaced: `overrides_json` is a JSON object of the golden files'
 * flat config keys (e.g. {"spatial_merge_size": 2, "rope_theta": 10000}; C++:
 * PresetModelSpecWithOverrides, mrope/service/preset_overrides.h, lists them). An unknown key,
 * a key without effect on the resulting model, a document that is not an object, a wrong type
 * or an invalid value is MROPE_INVALID_ARGUMENT naming the key (an unknown or ineffective one:
 * listing the preset's keys). */
MROPE_C_API int mrope_model_with_overrides(const char* preset, const char* overrides_json,
                                           mrope_model** model, char* message, size_t message_size);

MROPE_C_API void mrope_model_free(mrope_model* model); /* NULL is fine */

/* A model whose rotary is per attention layer type (Cohere Compass: config.json's layer_types
 * and rope_parameters keyed by type): a new model with the same positions and the rotary of
 * `layer_type` (has_rope 0 for a NoPE type), for mrope_rotary_create. A model with one rotary,
 * or no layer of that type, is MROPE_INVALID_ARGUMENT (naming its types). */
MROPE_C_API int mrope_model_for_layer_type(const mrope_model* model, const char* layer_type,
                                           mrope_model** out, char* message, size_t message_size);

typedef struct mrope_model_info {
  uint32_t struct_size;
  int32_t float_positions; /* 1: positions are float32 (Qwen3-Omni) */
  int32_t has_rope;        /* 0: positions only (no cos/sin, no kernels) */
  int32_t qk_norm;         /* mrope_qk_norm_form of the family's attention (its row's) */
  const char* name;   /* owned by the model */
  const char* family; /* e.g. "qwen2_5_vl"; owned by the model */
  /* Second version: */
  int32_t num_axes; /* planes of position_ids: 3, or len(mrope_section) (HunYuan-VL) */
} mrope_model_info;

MROPE_C_API int mrope_model_get_info(const mrope_model* model, mrope_model_info* info,
                                     char* message, size_t message_size);

/* ------------------------------------------------------------------ positions */

/* A padded batch as HF processors give it (C++: PromptBatch). Host memory, read during the
 * call only. Optional arrays are NULL with a zero count. */
typedef struct mrope_batch {
  uint32_t struct_size;
  int32_t use_audio_in_video; /* Omni */
  int64_t batch_size;
  int64_t seq_len;
  const int64_t* input_ids;      /* [batch_size][seq_len] */
  const int64_t* attention_mask; /* [batch_size][seq_len] of 0/1, or NULL */
  const int64_t* image_grid_thw; /* [num_images][3] (t, h, w), the whole batch, row 0 first */
  int64_t num_images;
  const int64_t* video_grid_thw; /* [num_videos][3] */
  int64_t num_videos;
  const float* second_per_grid_ts; /* Qwen2.5-VL: one per video, or NULL */
  int64_t num_second_per_grid_ts;
  const float* video_second_per_grid; /* Omni: one per video, or NULL */
  int64_t num_video_second_per_grid;
  const int64_t* audio_feature_lengths; /* Omni: mel frames per clip, or NULL */
  int64_t num_audio_feature_lengths;
  /* Since the second version (an older struct_size reads as NULL): [batch_size][seq_len] of
   * 0 text, 1 image, 2 video, or NULL; blocks are its runs (required with grids by the hf_v5
   * presets and HunYuan-VL). */
  const int64_t* mm_token_type_ids;
} mrope_batch;

/* Where positions go: planar position_ids [num_axes][batch_size][seq_len] (num_axes of
 * mrope_model_info: 3 but for HunYuan-VL; padding slots as the
 * model's convention has them) and mrope_position_deltas [batch_size] (get_rope_index's
 * second return), both of `position_type`, in caller-owned host memory of the given
 * capacities (elements). */
typedef struct mrope_positions_out {
  uint32_t struct_size;
  int32_t position_type; /* mrope_position_type */
  void* position_ids;
  int64_t position_ids_capacity;
  void* mrope_position_deltas;
  int64_t mrope_position_deltas_capacity;
} mrope_positions_out;

MROPE_C_API int mrope_compute_positions(const mrope_model* model, const mrope_batch* batch,
                                        mrope_positions_out* out, char* message,
                                        size_t message_size);

/* ------------------------------------------------------------------ rotary */

/* What the kernels and cos/sin need for one model at one sequence length (inv_freq with the
 * model's scaling; only dynamic NTK and LongRoPE depend on seq_len). */
typedef struct mrope_rotary mrope_rotary;

typedef enum mrope_sincos_math {
  MROPE_SINCOS_DOUBLE = 0,  /* double sincos rounded to fp32: HF's values (default) */
  MROPE_SINCOS_FLOAT32 = 1, /* fp32 only: faster on GPUs with slow fp64 */
} mrope_sincos_math;

MROPE_C_API int mrope_rotary_create(const mrope_model* model, int64_t seq_len, int32_t sincos_math,
                                    mrope_rotary** rotary, char* message, size_t message_size);

MROPE_C_API void mrope_rotary_free(mrope_rotary* rotary); /* NULL is fine */

typedef struct mrope_rotary_info {
  uint32_t struct_size;
  int32_t head_dim;
  int32_t rotary_dim; /* dims [rotary_dim, head_dim) pass through */
  int32_t num_pairs;  /* rotary_dim / 2 */
  int32_t layout;     /* 0: NeoX halves, 1: GPT-J adjacent pairs */
  float attention_scaling;
  /* Since the second version (an older struct_size gets neither): */
  int32_t num_axes;     /* rows of the kernels' planar positions: 3, or more (XD-RoPE) */
  int32_t split_halves; /* 1: XD-RoPE, a pair's two elements take their own axes' cos/sin
                         * (mrope_rotary_cos_sin, one cos/sin per pair, refuses it) */
} mrope_rotary_info;

MROPE_C_API int mrope_rotary_get_info(const mrope_rotary* rotary, mrope_rotary_info* info,
                                      char* message, size_t message_size);

/* Planar positions [num_axes][num_tokens] (mrope_rotary_info.num_axes: 3, more for XD-RoPE):
 * element (axis, i) at data + axis * axis_stride + i; axis_stride 0 gives every axis one row. */
typedef struct mrope_positions_view {
  const void* data;
  int32_t is_int64; /* 1: int64, 0: int32 */
  int32_t reserved;
  int64_t num_tokens;
  int64_t axis_stride;
} mrope_positions_view;

/* cos and sin [num_tokens][num_pairs] fp32 (axis map and attention scaling applied) of host
 * positions, into caller-owned host arrays of `capacity` elements each. */
MROPE_C_API int mrope_rotary_cos_sin(const mrope_rotary* rotary,
                                     const mrope_positions_view* positions, float* cos, float* sin,
                                     int64_t capacity, char* message, size_t message_size);

/* ------------------------------------------------------------------ kernels */

/* [num_tokens][num_heads][head_dim] at data + t * token_stride + h * head_stride + d. */
typedef struct mrope_heads_view {
  void* data;
  int32_t dtype; /* mrope_dtype */
  int32_t num_heads;
  int32_t head_dim;
  int32_t reserved;
  int64_t num_tokens;
  int64_t token_stride;
  int64_t head_stride;
} mrope_heads_view;

/* Decode: every axis of token i gets token_index[i] + delta[seq_id[i]] (seq_id NULL: i). */
typedef struct mrope_sequence_delta {
  const int64_t* token_index; /* [num_tokens] */
  const int32_t* seq_id;      /* [num_tokens] or NULL */
  const int64_t* delta;       /* [num_seqs] */
  int64_t num_tokens;
  int64_t num_seqs;
} mrope_sequence_delta;

/* A device fp32 cos/sin table: pair j at position p is cos[p * row_stride + j]. */
typedef struct mrope_cos_sin_table {
  const float* cos;
  const float* sin;
  int64_t max_position;
  int64_t row_stride;
} mrope_cos_sin_table;

/* In-place M-RoPE of q and k in one launch (C++: MropeKernelArgs). Exactly one position source
 * (positions.data or sequence_delta.token_index); cos/sin from the rotary's inv_freq unless
 * table.cos is set. error_flag: required device int. */
typedef struct mrope_kernel_args {
  uint32_t struct_size;
  uint32_t reserved;
  mrope_heads_view q;
  mrope_heads_view k;
  mrope_positions_view positions;
  mrope_sequence_delta sequence_delta;
  mrope_cos_sin_table table;
  int* error_flag;
  /* Since the first version (an older struct_size reads as MROPE_FORWARD): */
  int32_t direction; /* mrope_direction */
  int32_t reserved2;
} mrope_kernel_args;

MROPE_C_API int mrope_launch_kernel(const mrope_rotary* rotary, const mrope_kernel_args* args,
                                    mrope_stream stream, char* message, size_t message_size);

/* Per-head RMSNorm before the rotary (C++: QkNormArgs). */
typedef enum mrope_qk_norm_form {
  MROPE_QK_NORM_NONE = 0,
  MROPE_QK_NORM_WEIGHT = 1,          /* x * r * w: Qwen3, Qwen3-VL */
  MROPE_QK_NORM_ONE_PLUS_WEIGHT = 2, /* x * r * (1 + w): Qwen3-Next, Qwen3.5 */
  MROPE_QK_NORM_WEIGHT_AFTER_ROTARY = 3, /* y * r * w of the rotated head y: HunYuan-VL */
} mrope_qk_norm_form;

typedef struct mrope_qk_norm {
  int32_t form;         /* mrope_qk_norm_form */
  int32_t weight_dtype; /* fp32, bf16 or fp16 */
  const void* weight;   /* [head_dim] */
  float eps;
  int32_t reserved;
} mrope_qk_norm;

/* A paged KV cache (C++: PagedKvCache): element d of head h of slot
 * s = block * block_size + offset at k + block * block_stride + offset * slot_stride +
 * h * head_stride + d. */
typedef struct mrope_paged_kv_cache {
  void* k;
  void* v;
  int32_t dtype; /* the input dtype or MROPE_FLOAT8_E4M3 */
  int32_t block_size;
  int32_t num_heads;
  int32_t head_dim;
  int64_t num_blocks;
  int64_t block_stride;
  int64_t slot_stride;
  int64_t head_stride;
  const float* k_scale; /* fp8 only: device fp32, one or (per_head_scale) one per head */
  const float* v_scale;
  int32_t per_head_scale;
  int32_t reserved;
} mrope_paged_kv_cache;

/* QK-RMSNorm + M-RoPE + q out + paged K/V append in one launch (C++: FusedMropeArgs). */
typedef struct mrope_fused_args {
  uint32_t struct_size;
  uint32_t reserved;
  mrope_heads_view q;
  mrope_heads_view k;
  mrope_heads_view v;
  mrope_heads_view q_out; /* data NULL: q in place */
  const float* q_scale;   /* q_out fp8 only */
  mrope_heads_view k_out; /* data NULL: no k view written */
  mrope_qk_norm q_norm;
  mrope_qk_norm k_norm;
  mrope_positions_view positions;
  mrope_sequence_delta sequence_delta;
  mrope_cos_sin_table table;
  const int64_t* slot_mapping; /* [num_tokens], -1 skips; NULL: no cache write */
  mrope_paged_kv_cache cache;
  int* error_flag;
  /* Since the first version (an older struct_size reads as MROPE_FORWARD): */
  int32_t direction; /* mrope_direction; MROPE_INVERSE needs both norms NONE */
  int32_t reserved2;
} mrope_fused_args;

MROPE_C_API int mrope_launch_fused_kernel(const mrope_rotary* rotary, const mrope_fused_args* args,
                                          mrope_stream stream, char* message, size_t message_size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MROPE_MROPE_C_H_ */
