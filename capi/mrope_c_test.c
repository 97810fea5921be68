/* The C ABI from plain C (C11): every entry point, its error codes and messages, and the
 * kernels' results against the ABI's own cos/sin. Run against libmrope_c_host.so in CI (the
 * kernels on the host execution harness: "device" pointers are host pointers) and against
 * libmrope_c.so by the GPU bundle (tools/gpu_bundle), which passes --device.
 *
 * Writes one JUnit <testcase> per check group to $XML_OUTPUT_FILE (Bazel), so the test
 * summary counts them. */
#include "mrope/mrope_c.h"

#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef MROPE_C_TEST_CUDA
#include <cuda_runtime.h>
#endif

enum { kVisionStart = 151652, kVisionEnd = 151653, kImage = 151655 };
enum { kTokens = 11, kHeadDim = 128, kQHeads = 2, kKHeads = 1, kPairs = kHeadDim / 2 };

static int failures_in_case;
static char message[512];

static void Check(int ok, const char* what, ...) {
  if (ok) return;
  va_list args;
  va_start(args, what);
  fprintf(stderr, "  FAILED: ");
  vfprintf(stderr, what, args);
  fprintf(stderr, "\n");
  va_end(args);
  ++failures_in_case;
}

static void CheckStatus(int got, int want, const char* call, const char* message_part) {
  Check(got == want, "%s returned %d, expected %d (message: %s)", call, got, want, message);
  if (message_part != NULL) {
    Check(strstr(message, message_part) != NULL, "%s: message '%s' lacks '%s'", call, message,
          message_part);
  }
}

/* Device memory: plain host memory on the host build; cudaMalloc'd with --device. */
static int on_device;

static void* DeviceCopy(const void* host, size_t bytes) {
#ifdef MROPE_C_TEST_CUDA
  if (on_device) {
    void* p = NULL;
    if (cudaMalloc(&p, bytes) != cudaSuccess) abort();
    cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice);
    return p;
  }
#endif
  void* p = malloc(bytes);
  memcpy(p, host, bytes);
  return p;
}

static void HostCopy(void* host, const void* device, size_t bytes) {
#ifdef MROPE_C_TEST_CUDA
  if (on_device) {
    cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost);
    return;
  }
#endif
  memcpy(host, device, bytes);
}

static void DeviceFree(void* p) {
#ifdef MROPE_C_TEST_CUDA
  if (on_device) {
    cudaFree(p);
    return;
  }
#endif
  free(p);
}

static void Synchronize(void) {
#ifdef MROPE_C_TEST_CUDA
  if (on_device) cudaDeviceSynchronize();
#endif
}

/* T3 I1x4x4 T2 (Qwen token ids) and its HF positions. */
static const int64_t kIds[kTokens] = {11,     12,     13,         kVisionStart, kImage, kImage,
                                      kImage, kImage, kVisionEnd, 14,           15};
static const int64_t kGrid[3] = {1, 4, 4};
static const int64_t kExpected[3][kTokens] = {{0, 1, 2, 3, 4, 4, 4, 4, 6, 7, 8},
                                              {0, 1, 2, 3, 4, 4, 5, 5, 6, 7, 8},
                                              {0, 1, 2, 3, 4, 5, 4, 5, 6, 7, 8}};

static mrope_model* LoadPreset(const char* name) {
  mrope_model* model = NULL;
  CheckStatus(mrope_model_load(name, &model, message, sizeof(message)), MROPE_OK,
              "mrope_model_load", NULL);
  return model;
}

static mrope_batch ImageBatch(void) {
  mrope_batch batch;
  memset(&batch, 0, sizeof(batch));
  batch.struct_size = sizeof(batch);
  batch.batch_size = 1;
  batch.seq_len = kTokens;
  batch.input_ids = kIds;
  batch.image_grid_thw = kGrid;
  batch.num_images = 1;
  return batch;
}

static void TestLibrary(void) {
  Check(mrope_c_api_version() == MROPE_C_API_VERSION, "api version %u", mrope_c_api_version());
  mrope_library_info info;
  memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  CheckStatus(mrope_library_get_info(&info, message, sizeof(message)), MROPE_OK,
              "mrope_library_get_info", NULL);
  Check(info.api_version == MROPE_C_API_VERSION, "info.api_version %u", info.api_version);
  Check(info.kernels_on_host == !on_device, "kernels_on_host %d", info.kernels_on_host);
  info.struct_size = 4;
  CheckStatus(mrope_library_get_info(&info, message, sizeof(message)), MROPE_INVALID_ARGUMENT,
              "mrope_library_get_info(struct_size 4)", "info->struct_size is 4");
  /* A message buffer too small is truncated, still NUL-terminated; NULL is fine. */
  char tiny[5];
  Check(mrope_library_get_info(NULL, tiny, sizeof(tiny)) == MROPE_INVALID_ARGUMENT &&
            strcmp(tiny, "info") == 0,
        "truncated message '%s'", tiny);
  Check(mrope_library_get_info(NULL, NULL, 0) == MROPE_INVALID_ARGUMENT, "NULL message");
}

static void TestModels(void) {
  mrope_model* model = LoadPreset("qwen2_vl");
  mrope_model_info info;
  memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  CheckStatus(mrope_model_get_info(model, &info, message, sizeof(message)), MROPE_OK,
              "mrope_model_get_info", NULL);
  Check(strcmp(info.family, "qwen2_vl") == 0, "family %s", info.family);
  Check(strcmp(info.name, "qwen2_vl") == 0, "name %s", info.name);
  Check(info.has_rope == 1 && info.float_positions == 0 && info.num_axes == 3,
        "has_rope %d float_positions %d num_axes %d", info.has_rope, info.float_positions,
        info.num_axes);
  mrope_model_free(model);

  mrope_model* bad = (mrope_model*)1;
  CheckStatus(mrope_model_load("no_such_model", &bad, message, sizeof(message)),
              MROPE_INVALID_ARGUMENT, "mrope_model_load(no_such_model)",
              "neither a config file nor a preset");
  Check(bad == NULL, "a failed load leaves *model NULL");
  CheckStatus(mrope_model_load(NULL, &bad, message, sizeof(message)), MROPE_INVALID_ARGUMENT,
              "mrope_model_load(NULL)", "preset_or_path is NULL");

  CheckStatus(mrope_model_with_overrides("qwen2_5_vl", "{\"spatial_merge_size\": 1}", &model,
                                         message, sizeof(message)),
              MROPE_OK, "mrope_model_with_overrides", NULL);
  mrope_model_free(model);
  CheckStatus(mrope_model_with_overrides("qwen2_5_vl", "{\"spatial_merge_size\": \"x\"}", &model,
                                         message, sizeof(message)),
              MROPE_INVALID_ARGUMENT, "mrope_model_with_overrides(bad value)",
              "spatial_merge_size");

  static const char kConfig[] =
      "{\"model_type\": \"qwen2_vl\", \"image_token_id\": 151655, \"video_token_id\": 151656,"
      " \"vision_start_token_id\": 151652, \"vision_end_token_id\": 151653,"
      " \"rope_theta\": 1000000.0,"
      " \"hidden_size\": 256, \"num_attention_heads\": 2,"
      " \"rope_scaling\": {\"type\": \"mrope\", \"mrope_section\": [16, 24, 24]}}";
  CheckStatus(mrope_model_from_config_text("my/config.json", kConfig, strlen(kConfig), &model,
                                           message, sizeof(message)),
              MROPE_OK, "mrope_model_from_config_text", NULL);
  if (model != NULL) {
    CheckStatus(mrope_model_get_info(model, &info, message, sizeof(message)), MROPE_OK,
                "mrope_model_get_info", NULL);
    Check(strcmp(info.name, "my/config.json") == 0, "name %s", info.name);
  }
  mrope_model_free(model);
  CheckStatus(
      mrope_model_from_config_text("my/config.json", "{", 1, &model, message, sizeof(message)),
      MROPE_INVALID_ARGUMENT, "mrope_model_from_config_text({)", NULL);
  mrope_model_free(NULL);

  /* Cohere Compass's preset: a rotary per layer type, picked per type (full_attention: NoPE). */
  mrope_model* compass = LoadPreset("cohere_compass");
  mrope_model* sliding = NULL;
  mrope_rotary* rotary = NULL;
  CheckStatus(mrope_rotary_create(compass, 1, MROPE_SINCOS_DOUBLE, &rotary, message,
                                  sizeof(message)),
              MROPE_FAILED_PRECONDITION, "mrope_rotary_create(cohere_compass)",
              "rotary per layer type (sliding_attention, full_attention)");
  CheckStatus(mrope_model_for_layer_type(compass, "sliding_attention", &sliding, message,
                                         sizeof(message)),
              MROPE_OK, "mrope_model_for_layer_type(sliding_attention)", NULL);
  CheckStatus(mrope_rotary_create(sliding, 1, MROPE_SINCOS_DOUBLE, &rotary, message,
                                  sizeof(message)),
              MROPE_OK, "mrope_rotary_create(sliding_attention)", NULL);
  mrope_rotary_free(rotary);
  mrope_model_free(sliding);
  CheckStatus(mrope_model_for_layer_type(compass, "full_attention", &sliding, message,
                                         sizeof(message)),
              MROPE_OK, "mrope_model_for_layer_type(full_attention)", NULL);
  CheckStatus(mrope_model_get_info(sliding, &info, message, sizeof(message)), MROPE_OK,
              "mrope_model_get_info(full_attention)", NULL);
  Check(info.has_rope == 0, "full_attention (NoPE) has_rope %d", info.has_rope);
  mrope_model_free(sliding);
  CheckStatus(mrope_model_for_layer_type(compass, "chunked", &sliding, message, sizeof(message)),
              MROPE_INVALID_ARGUMENT, "mrope_model_for_layer_type(chunked)",
              "its types: sliding_attention, full_attention");
  mrope_model_free(compass);
}

static void TestPositions(void) {
  mrope_model* model = LoadPreset("qwen2_vl");
  mrope_batch batch = ImageBatch();
  int64_t positions[3 * kTokens];
  int64_t delta = 0;
  mrope_positions_out out;
  memset(&out, 0, sizeof(out));
  out.struct_size = sizeof(out);
  out.position_type = MROPE_POSITIONS_INT64;
  out.position_ids = positions;
  out.position_ids_capacity = 3 * kTokens;
  out.mrope_position_deltas = &delta;
  out.mrope_position_deltas_capacity = 1;
  CheckStatus(mrope_compute_positions(model, &batch, &out, message, sizeof(message)), MROPE_OK,
              "mrope_compute_positions", NULL);
  Check(memcmp(positions, kExpected, sizeof(positions)) == 0, "int64 positions differ");
  Check(delta == -2, "delta %lld", (long long)delta);

  int32_t positions32[3 * kTokens];
  int32_t delta32 = 0;
  out.position_type = MROPE_POSITIONS_INT32;
  out.position_ids = positions32;
  out.mrope_position_deltas = &delta32;
  CheckStatus(mrope_compute_positions(model, &batch, &out, message, sizeof(message)), MROPE_OK,
              "mrope_compute_positions(int32)", NULL);
  for (int i = 0; i < 3 * kTokens; ++i) {
    Check(positions32[i] == ((const int64_t*)kExpected)[i], "int32 position %d", i);
  }
  Check(delta32 == -2, "int32 delta %d", delta32);

  out.position_ids_capacity = 3 * kTokens - 1;
  CheckStatus(mrope_compute_positions(model, &batch, &out, message, sizeof(message)),
              MROPE_INVALID_ARGUMENT, "mrope_compute_positions(small capacity)",
              "out->position_ids_capacity is 32, the batch needs 33");
  out.position_ids_capacity = 3 * kTokens;
  out.position_type = 7;
  CheckStatus(mrope_compute_positions(model, &batch, &out, message, sizeof(message)),
              MROPE_INVALID_ARGUMENT, "mrope_compute_positions(type 7)", "out->position_type is 7");
  out.position_type = MROPE_POSITIONS_INT32;

  /* Bad prompts: mrope's own messages. */
  batch.num_images = 0;
  CheckStatus(mrope_compute_positions(model, &batch, &out, message, sizeof(message)),
              MROPE_INVALID_ARGUMENT, "mrope_compute_positions(no grid)", "image");
  batch.num_images = -1;
  CheckStatus(mrope_compute_positions(model, &batch, &out, message, sizeof(message)),
              MROPE_INVALID_ARGUMENT, "mrope_compute_positions(num_images -1)", "image_grid_thw");
  batch.num_images = 1000; /* more than the batch's 11 tokens: refused before reading */
  CheckStatus(mrope_compute_positions(model, &batch, &out, message, sizeof(message)),
              MROPE_INVALID_ARGUMENT, "mrope_compute_positions(num_images 1000)", "expected 0..11");
  batch.num_images = 1;
  batch.seq_len = -3;
  CheckStatus(mrope_compute_positions(model, &batch, &out, message, sizeof(message)),
              MROPE_INVALID_ARGUMENT, "mrope_compute_positions(seq_len -3)", "seq_len -3");
  batch.seq_len = kTokens;

  /* struct_size: too small; larger with unknown non-zero fields; larger with zeros. */
  batch.struct_size = 8;
  CheckStatus(mrope_compute_positions(model, &batch, &out, message, sizeof(message)),
              MROPE_INVALID_ARGUMENT, "mrope_compute_positions(struct_size 8)",
              "batch->struct_size is 8");
  struct {
    mrope_batch batch;
    int64_t newer_field;
  } newer;
  memset(&newer, 0, sizeof(newer));
  newer.batch = ImageBatch();
  newer.batch.struct_size = sizeof(newer);
  CheckStatus(mrope_compute_positions(model, &newer.batch, &out, message, sizeof(message)),
              MROPE_OK, "mrope_compute_positions(newer struct, zero tail)", NULL);
  newer.newer_field = 1;
  CheckStatus(mrope_compute_positions(model, &newer.batch, &out, message, sizeof(message)),
              MROPE_UNIMPLEMENTED, "mrope_compute_positions(newer struct, tail set)",
              "does not know");
  CheckStatus(mrope_compute_positions(NULL, &batch, &out, message, sizeof(message)),
              MROPE_INVALID_ARGUMENT, "mrope_compute_positions(NULL model)", "model is NULL");
  mrope_model_free(model);
}

/* NeoX rotation of one fp32 head by the ABI's cos/sin (no FMA: -ffp-contract=off). */
static void RotateHead(float* x, const float* cos, const float* sin) {
  for (int j = 0; j < kPairs; ++j) {
    const float a = x[j], b = x[j + kPairs];
    x[j] = a * cos[j] - b * sin[j];
    x[j + kPairs] = b * cos[j] + a * sin[j];
  }
}

static float Pseudorandom(uint32_t* seed) {
  *seed = *seed * 1664525u + 1013904223u;
  return (float)(*seed >> 8) / (float)(1 << 23) - 1.0f;
}

/* The inverse rotation (the backward): by -angle. */
static void InverseRotateHead(float* x, const float* cos, const float* sin) {
  for (int j = 0; j < kPairs; ++j) {
    const float a = x[j], b = x[j + kPairs];
    x[j] = a * cos[j] + b * sin[j];
    x[j + kPairs] = b * cos[j] - a * sin[j];
  }
}

typedef struct {
  float qkv[kTokens][kQHeads + 2 * kKHeads][kHeadDim]; /* a fused qkv buffer */
} Qkv;

static void FillPseudorandom(Qkv* qkv, uint32_t seed) {
  for (float* x = &qkv->qkv[0][0][0]; x < &qkv->qkv[0][0][0] + sizeof(*qkv) / 4; ++x) {
    *x = Pseudorandom(&seed);
  }
}

/* kExpected as planar int64 host positions. */
static mrope_positions_view PromptPositions(void) {
  mrope_positions_view view;
  memset(&view, 0, sizeof(view));
  view.data = kExpected;
  view.is_int64 = 1;
  view.num_tokens = kTokens;
  view.axis_stride = kTokens;
  return view;
}

static mrope_heads_view View(void* base, int first_head, int num_heads) {
  mrope_heads_view view;
  memset(&view, 0, sizeof(view));
  view.data = (float*)base + first_head * kHeadDim;
  view.dtype = MROPE_FLOAT32;
  view.num_tokens = kTokens;
  view.num_heads = num_heads;
  view.head_dim = kHeadDim;
  view.token_stride = (kQHeads + 2 * kKHeads) * kHeadDim;
  view.head_stride = kHeadDim;
  return view;
}

static mrope_rotary* CreateRotary(const mrope_model* model) {
  mrope_rotary* rotary = NULL;
  CheckStatus(
      mrope_rotary_create(model, kTokens, MROPE_SINCOS_DOUBLE, &rotary, message, sizeof(message)),
      MROPE_OK, "mrope_rotary_create", NULL);
  return rotary;
}

/* cos/sin of the prompt's positions (kExpected). */
static void PromptCosSin(const mrope_rotary* rotary, float cos_values[kTokens][kPairs],
                         float sin_values[kTokens][kPairs]) {
  const mrope_positions_view positions = PromptPositions();
  CheckStatus(mrope_rotary_cos_sin(rotary, &positions, &cos_values[0][0], &sin_values[0][0],
                                   kTokens * kPairs, message, sizeof(message)),
              MROPE_OK, "mrope_rotary_cos_sin", NULL);
}

/* The kernel on a device qkv buffer (q: heads 0-1, k: head 2) at device positions kExpected. */
static mrope_kernel_args KernelArgs(Qkv* qkv, const int64_t* positions, int* error_flag) {
  mrope_kernel_args args;
  memset(&args, 0, sizeof(args));
  args.struct_size = sizeof(args);
  args.q = View(qkv, 0, kQHeads);
  args.k = View(qkv, kQHeads, kKHeads);
  args.positions = PromptPositions();
  args.positions.data = positions;
  args.error_flag = error_flag;
  return args;
}

/* The fused kernel without norm or cache: q in place, k written back in place. */
static mrope_fused_args FusedInPlace(Qkv* qkv, const int64_t* positions, int* error_flag) {
  mrope_fused_args fused;
  memset(&fused, 0, sizeof(fused));
  fused.struct_size = sizeof(fused);
  fused.q = View(qkv, 0, kQHeads);
  fused.k = View(qkv, kQHeads, kKHeads);
  fused.v = View(qkv, kQHeads + kKHeads, kKHeads);
  fused.k_out = fused.k;
  fused.positions = PromptPositions();
  fused.positions.data = positions;
  fused.error_flag = error_flag;
  return fused;
}

static void TestKernels(void) {
  mrope_model* model = LoadPreset("qwen2_vl");
  mrope_rotary* rotary = CreateRotary(model);
  mrope_rotary* refused = (mrope_rotary*)1;
  CheckStatus(mrope_rotary_create(model, kTokens, 5, &refused, message, sizeof(message)),
              MROPE_INVALID_ARGUMENT, "mrope_rotary_create(math 5)", "sincos_math is 5");
  Check(refused == NULL, "a failed create leaves *rotary NULL");
  mrope_rotary_info info;
  memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  CheckStatus(mrope_rotary_get_info(rotary, &info, message, sizeof(message)), MROPE_OK,
              "mrope_rotary_get_info", NULL);
  Check(info.head_dim == kHeadDim && info.rotary_dim == kHeadDim && info.num_pairs == kPairs &&
            info.layout == 0 && info.attention_scaling == 1.0f,
        "rotary info %d %d %d %d %g", info.head_dim, info.rotary_dim, info.num_pairs, info.layout,
        info.attention_scaling);
  Check(info.num_axes == 3 && info.split_halves == 0, "rotary info axes %d split %d",
        info.num_axes, info.split_halves);
  {
    /* HunYuan-VL's XD-RoPE: four rows of positions, a pair's halves on their own axes; a
     * first-version struct (without those fields) is still filled. */
    mrope_model* hunyuan = LoadPreset("hunyuan_vl");
    mrope_rotary* xd = CreateRotary(hunyuan);
    mrope_rotary_info xd_info;
    memset(&xd_info, 0, sizeof(xd_info));
    xd_info.struct_size = sizeof(xd_info);
    CheckStatus(mrope_rotary_get_info(xd, &xd_info, message, sizeof(message)), MROPE_OK,
                "mrope_rotary_get_info(hunyuan_vl)", NULL);
    Check(xd_info.num_axes == 4 && xd_info.split_halves == 1, "hunyuan_vl axes %d split %d",
          xd_info.num_axes, xd_info.split_halves);
    memset(&xd_info, 0, sizeof(xd_info));
    xd_info.struct_size = offsetof(mrope_rotary_info, num_axes);
    CheckStatus(mrope_rotary_get_info(xd, &xd_info, message, sizeof(message)), MROPE_OK,
                "mrope_rotary_get_info(first version)", NULL);
    Check(xd_info.head_dim == 128 && xd_info.num_axes == 0, "first version: head_dim %d axes %d",
          xd_info.head_dim, xd_info.num_axes);
    mrope_rotary_free(xd);
    mrope_model_free(hunyuan);
  }

  /* cos/sin of the prompt's positions. */
  static float cos_values[kTokens][kPairs], sin_values[kTokens][kPairs];
  PromptCosSin(rotary, cos_values, sin_values);
  Check(cos_values[0][0] == 1.0f && sin_values[0][0] == 0.0f, "position 0: cos %g sin %g",
        cos_values[0][0], sin_values[0][0]);
  /* Token 5 (image row 0, column 1): pair 0 (t) at 4, pair 63 (w) at 5. */
  Check(sin_values[5][0] == (float)sin(4.0) && sin_values[5][63] != sin_values[4][63],
        "axis map of token 5");
  const mrope_positions_view host_positions = PromptPositions();
  CheckStatus(mrope_rotary_cos_sin(rotary, &host_positions, &cos_values[0][0], &sin_values[0][0],
                                   10, message, sizeof(message)),
              MROPE_INVALID_ARGUMENT, "mrope_rotary_cos_sin(capacity 10)", "cos_capacity");

  /* The kernel on q and k views of a fused qkv buffer, against the ABI's cos/sin. */
  static Qkv host, expected, result;
  FillPseudorandom(&host, 7);
  expected = host;
  for (int t = 0; t < kTokens; ++t) {
    for (int h = 0; h < kQHeads + kKHeads; ++h)
      RotateHead(expected.qkv[t][h], cos_values[t], sin_values[t]);
  }
  Qkv* qkv = DeviceCopy(&host, sizeof(host));
  int64_t* positions = DeviceCopy(kExpected, sizeof(kExpected));
  int zero = 0;
  int* error_flag = DeviceCopy(&zero, sizeof(zero));
  mrope_kernel_args args = KernelArgs(qkv, positions, error_flag);
  CheckStatus(mrope_launch_kernel(rotary, &args, NULL, message, sizeof(message)), MROPE_OK,
              "mrope_launch_kernel", NULL);
  Synchronize();
  HostCopy(&result, qkv, sizeof(result));
  Check(memcmp(&result, &expected, sizeof(result)) == 0, "kernel result differs");
  int flag = -1;
  HostCopy(&flag, error_flag, sizeof(flag));
  Check(flag == 0, "error flag %d", flag);

  /* The fused kernel without norm or cache: q in place, k written back in place. */
  Qkv* fused_qkv = DeviceCopy(&host, sizeof(host));
  mrope_fused_args fused = FusedInPlace(fused_qkv, positions, error_flag);
  CheckStatus(mrope_launch_fused_kernel(rotary, &fused, NULL, message, sizeof(message)), MROPE_OK,
              "mrope_launch_fused_kernel", NULL);
  Synchronize();
  HostCopy(&result, fused_qkv, sizeof(result));
  Check(memcmp(&result, &expected, sizeof(result)) == 0, "fused kernel result differs");

  /* Host-side validation: messages name the field. */
  mrope_kernel_args bad = args;
  bad.q.dtype = 9;
  CheckStatus(mrope_launch_kernel(rotary, &bad, NULL, message, sizeof(message)),
              MROPE_INVALID_ARGUMENT, "mrope_launch_kernel(dtype 9)", "args->q.dtype is 9");
  bad = args;
  bad.error_flag = NULL;
  CheckStatus(mrope_launch_kernel(rotary, &bad, NULL, message, sizeof(message)),
              MROPE_INVALID_ARGUMENT, "mrope_launch_kernel(no error flag)", "error_flag");
  bad = args;
  bad.k.head_dim = 64;
  CheckStatus(mrope_launch_kernel(rotary, &bad, NULL, message, sizeof(message)),
              MROPE_INVALID_ARGUMENT, "mrope_launch_kernel(head_dim 64)", "head_dim");
  CheckStatus(mrope_launch_kernel(NULL, &args, NULL, message, sizeof(message)),
              MROPE_INVALID_ARGUMENT, "mrope_launch_kernel(NULL rotary)", "rotary is NULL");
  mrope_fused_args bad_fused = fused;
  bad_fused.q_norm.form = 4;
  CheckStatus(mrope_launch_fused_kernel(rotary, &bad_fused, NULL, message, sizeof(message)),
              MROPE_INVALID_ARGUMENT, "mrope_launch_fused_kernel(norm form 4)",
              "args->q_norm.form is 4");

  /* Device-side error: a position outside a 4-row table skips the token and sets the flag. */
  static float table[4][kPairs];
  float* device_table = DeviceCopy(table, sizeof(table));
  Qkv* untouched = DeviceCopy(&host, sizeof(host));
  args.q = View(untouched, 0, kQHeads);
  args.k = View(untouched, kQHeads, kKHeads);
  args.table.cos = device_table;
  args.table.sin = device_table;
  args.table.max_position = 4;
  args.table.row_stride = kPairs;
  CheckStatus(mrope_launch_kernel(rotary, &args, NULL, message, sizeof(message)), MROPE_OK,
              "mrope_launch_kernel(table)", NULL);
  Synchronize();
  HostCopy(&flag, error_flag, sizeof(flag));
  Check(flag == MROPE_ERROR_POSITION_OUT_OF_RANGE, "error flag %d after a bad position", flag);
  HostCopy(&result, untouched, sizeof(result));
  Check(memcmp(result.qkv[kTokens - 1], host.qkv[kTokens - 1], sizeof(host.qkv[0])) == 0,
        "a token at position 8 was written");

  DeviceFree(untouched);
  DeviceFree(device_table);
  DeviceFree(fused_qkv);
  DeviceFree(error_flag);
  DeviceFree(positions);
  DeviceFree(qkv);
  mrope_rotary_free(rotary);
  mrope_rotary_free(NULL);

  mrope_model* positions_only = NULL;
  static const char kNoRope[] = "positions { family: QWEN2_VL }";
  CheckStatus(mrope_model_from_config_text("m.textproto", kNoRope, strlen(kNoRope), &positions_only,
                                           message, sizeof(message)),
              MROPE_OK, "mrope_model_from_config_text(textproto)", NULL);
  CheckStatus(mrope_rotary_create(positions_only, kTokens, 0, &rotary, message, sizeof(message)),
              MROPE_FAILED_PRECONDITION, "mrope_rotary_create(no rope)", "no rotary");
  mrope_model_free(positions_only);
  mrope_model_free(model);
}

/* Launches the kernel on a device copy of `in` (q: heads 0-1, k: head 2) with `direction`
 * and struct_size `size`; returns its status and the result in `out`. */
static int LaunchOnCopy(const mrope_rotary* rotary, const Qkv* in, int32_t direction,
                        uint32_t size, Qkv* out) {
  Qkv* qkv = DeviceCopy(in, sizeof(*in));
  int64_t* positions = DeviceCopy(kExpected, sizeof(kExpected));
  int zero = 0;
  int* error_flag = DeviceCopy(&zero, sizeof(zero));
  mrope_kernel_args args = KernelArgs(qkv, positions, error_flag);
  args.struct_size = size;
  args.direction = direction;
  const int status = mrope_launch_kernel(rotary, &args, NULL, message, sizeof(message));
  Synchronize();
  HostCopy(out, qkv, sizeof(*out));
  int flag = -1;
  HostCopy(&flag, error_flag, sizeof(flag));
  Check(flag == 0, "error flag %d", flag);
  DeviceFree(error_flag);
  DeviceFree(positions);
  DeviceFree(qkv);
  return status;
}

/* The backward (direction MROPE_INVERSE): equal to the inverse rotation by the ABI's cos/sin,
 * undoes the forward within rounding; an older struct_size means forward. */
static void TestBackward(void) {
  mrope_model* model = LoadPreset("qwen2_vl");
  mrope_rotary* rotary = CreateRotary(model);
  static float cos_values[kTokens][kPairs], sin_values[kTokens][kPairs];
  PromptCosSin(rotary, cos_values, sin_values);
  static Qkv gradient, expected, result, round_trip;
  FillPseudorandom(&gradient, 11);
  expected = gradient;
  for (int t = 0; t < kTokens; ++t) {
    for (int h = 0; h < kQHeads + kKHeads; ++h)
      InverseRotateHead(expected.qkv[t][h], cos_values[t], sin_values[t]);
  }
  CheckStatus(LaunchOnCopy(rotary, &gradient, MROPE_INVERSE, sizeof(mrope_kernel_args), &result),
              MROPE_OK, "mrope_launch_kernel(inverse)", NULL);
  Check(memcmp(&result, &expected, sizeof(result)) == 0, "inverse kernel result differs");

  /* backward(forward(x)) == x within rounding (|x| <= 1: a few fp32 ulps of 1). */
  static Qkv forward;
  CheckStatus(LaunchOnCopy(rotary, &gradient, MROPE_FORWARD, sizeof(mrope_kernel_args), &forward),
              MROPE_OK, "mrope_launch_kernel(forward)", NULL);
  CheckStatus(LaunchOnCopy(rotary, &forward, MROPE_INVERSE, sizeof(mrope_kernel_args), &round_trip),
              MROPE_OK, "mrope_launch_kernel(inverse of forward)", NULL);
  float worst = 0.0f;
  for (int t = 0; t < kTokens; ++t) {
    for (int h = 0; h < kQHeads + kKHeads; ++h) {
      for (int d = 0; d < kHeadDim; ++d) {
        const float error = fabsf(round_trip.qkv[t][h][d] - gradient.qkv[t][h][d]);
        if (error > worst) worst = error;
      }
    }
  }
  Check(worst <= 1e-6f, "backward(forward(x)) is off by %g", worst);
  Check(memcmp(&forward, &gradient, sizeof(forward)) != 0, "the forward rotated nothing");

  /* A caller of the first version (struct_size before `direction`) gets the forward, whatever
   * lies past its struct. */
  CheckStatus(LaunchOnCopy(rotary, &gradient, MROPE_INVERSE,
                           (uint32_t)offsetof(mrope_kernel_args, direction), &result),
              MROPE_OK, "mrope_launch_kernel(first-version struct_size)", NULL);
  Check(memcmp(&result, &forward, sizeof(result)) == 0, "a first-version struct did not rotate "
                                                        "forward");

  /* Bad directions are refused, naming the field. */
  CheckStatus(LaunchOnCopy(rotary, &gradient, 2, sizeof(mrope_kernel_args), &result),
              MROPE_INVALID_ARGUMENT, "mrope_launch_kernel(direction 2)", "args->direction is 2");
  Check(memcmp(&result, &gradient, sizeof(result)) == 0, "a refused launch wrote q or k");

  /* The fused kernel's inverse (no norm): the same inverse; with a norm it is refused. */
  Qkv* fused_qkv = DeviceCopy(&gradient, sizeof(gradient));
  int64_t* positions = DeviceCopy(kExpected, sizeof(kExpected));
  int zero = 0;
  int* error_flag = DeviceCopy(&zero, sizeof(zero));
  mrope_fused_args fused = FusedInPlace(fused_qkv, positions, error_flag);
  fused.direction = MROPE_INVERSE;
  CheckStatus(mrope_launch_fused_kernel(rotary, &fused, NULL, message, sizeof(message)), MROPE_OK,
              "mrope_launch_fused_kernel(inverse)", NULL);
  Synchronize();
  HostCopy(&result, fused_qkv, sizeof(result));
  Check(memcmp(&result, &expected, sizeof(result)) == 0, "inverse fused kernel result differs");
  mrope_fused_args bad = fused;
  bad.direction = -1;
  CheckStatus(mrope_launch_fused_kernel(rotary, &bad, NULL, message, sizeof(message)),
              MROPE_INVALID_ARGUMENT, "mrope_launch_fused_kernel(direction -1)",
              "args->direction is -1");
  static const float kWeight[kHeadDim] = {1.0f};
  float* weight = DeviceCopy(kWeight, sizeof(kWeight));
  bad = fused;
  bad.q_norm.form = MROPE_QK_NORM_WEIGHT;
  bad.q_norm.weight_dtype = MROPE_FLOAT32;
  bad.q_norm.weight = weight;
  bad.q_norm.eps = 1e-6f;
  CheckStatus(mrope_launch_fused_kernel(rotary, &bad, NULL, message, sizeof(message)),
              MROPE_INVALID_ARGUMENT, "mrope_launch_fused_kernel(inverse with a norm)",
              "direction=kInverse with a norm");

  DeviceFree(weight);
  DeviceFree(error_flag);
  DeviceFree(positions);
  DeviceFree(fused_qkv);
  mrope_rotary_free(rotary);
  mrope_model_free(model);
}

typedef struct {
  const char* name;
  void (*run)(void);
  int failures;
} Case;

/* cos/sin [8][kPairs] of the model at positions whose three axes differ (so the sections
 * matter); 0 on failure. */
enum { kOverrideTokens = 8 };
static int CosSinOf(const mrope_model* model, float* cos, float* sin) {
  int64_t positions[3 * kOverrideTokens];
  for (int i = 0; i < 3 * kOverrideTokens; ++i) positions[i] = (i % kOverrideTokens) * (1 + i / 8);
  mrope_positions_view view = {positions, 1, 0, kOverrideTokens, kOverrideTokens};
  mrope_rotary* rotary = NULL;
  int ok = mrope_rotary_create(model, 1024, MROPE_SINCOS_DOUBLE, &rotary, message,
                               sizeof(message)) == MROPE_OK &&
           mrope_rotary_cos_sin(rotary, &view, cos, sin, kOverrideTokens * kPairs, message,
                                sizeof(message)) == MROPE_OK;
  mrope_rotary_free(rotary);
  return ok;
}

/* An override takes effect (rope_theta: the cos/sin of a config.json saying the same) or is
 * refused naming the key. */
static void TestOverrides(void) {
  static const char kTheta1e4[] =
      "{\"model_type\": \"qwen2_5_vl\", \"image_token_id\": 151655, \"video_token_id\": 151656,"
      " \"vision_start_token_id\": 151652, \"vision_end_token_id\": 151653,"
      " \"vision_config\": {\"tokens_per_second\": 2}, \"rope_theta\": 10000, \"head_dim\": 128,"
      " \"rope_scaling\": {\"type\": \"mrope\", \"mrope_section\": [16, 24, 24]}}";
  mrope_model* overridden = NULL;
  mrope_model* config = NULL;
  mrope_model* preset = NULL;
  CheckStatus(mrope_model_with_overrides("qwen2_5_vl", "{\"rope_theta\": 10000}", &overridden,
                                         message, sizeof(message)),
              MROPE_OK, "mrope_model_with_overrides(rope_theta)", NULL);
  CheckStatus(mrope_model_from_config_text("config.json", kTheta1e4, strlen(kTheta1e4), &config,
                                           message, sizeof(message)),
              MROPE_OK, "mrope_model_from_config_text(rope_theta 1e4)", NULL);
  CheckStatus(mrope_model_load("qwen2_5_vl", &preset, message, sizeof(message)), MROPE_OK,
              "mrope_model_load(qwen2_5_vl)", NULL);
  static float cos[3][kOverrideTokens * kPairs], sin[3][kOverrideTokens * kPairs];
  const mrope_model* models[3] = {overridden, config, preset};
  for (int m = 0; m < 3; ++m) {
    Check(models[m] != NULL && CosSinOf(models[m], cos[m], sin[m]), "cos/sin of model %d: %s", m,
          message);
  }
  const size_t bytes = sizeof(cos[0]);
  Check(memcmp(cos[0], cos[1], bytes) == 0 && memcmp(sin[0], sin[1], bytes) == 0,
        "rope_theta override: cos/sin differ from the config.json's");
  Check(memcmp(cos[0], cos[2], bytes) != 0, "rope_theta override: cos/sin of the preset");
  mrope_model_free(overridden);
  mrope_model_free(config);
  mrope_model_free(preset);

  static const struct {
    const char* overrides;
    const char* message_part;
  } kRefused[] = {
      {"{\"bogus_key\": 1}", "unknown key 'bogus_key' for preset qwen2_5_vl; its keys are"},
      {"{\"bogus_key\": 1}", "tokens_per_second"},
      {"[1,2]", "expected a JSON object"},
      {"{\"rope_theta\": -1}", "rope_theta must be a finite number > 1"},
      {"{\"rope_theta\": \"big\"}", "rope_theta"},
      {"{\"rope_theta\": null}", "rope_theta: expected a value, got null"},
      {"{\"mrope_section\": [16, 24, 25]}", "sums to 65"},
      {"{\"spatial_merge_size\": \"x\"}", "spatial_merge_size"},
      {"{\"max_position_embeddings\": 128000}",
       "max_position_embeddings: has no effect on qwen2_5_vl"},
  };
  for (size_t i = 0; i < sizeof(kRefused) / sizeof(kRefused[0]); ++i) {
    mrope_model* model = (mrope_model*)1;
    CheckStatus(mrope_model_with_overrides("qwen2_5_vl", kRefused[i].overrides, &model, message,
                                           sizeof(message)),
                MROPE_INVALID_ARGUMENT, kRefused[i].overrides, kRefused[i].message_part);
    Check(model == NULL, "a refused override leaves *model NULL");
  }
}

/* HunYuan-VL: four planes (mrope_model_info.num_axes), blocks from mm_token_type_ids. */
static void TestFourAxes(void) {
  mrope_model* model = LoadPreset("hunyuan_vl");
  mrope_model_info info;
  memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  CheckStatus(mrope_model_get_info(model, &info, message, sizeof(message)), MROPE_OK,
              "mrope_model_get_info(hunyuan_vl)", NULL);
  Check(info.num_axes == 4, "num_axes %d", info.num_axes);
  Check(info.qk_norm == MROPE_QK_NORM_WEIGHT_AFTER_ROTARY, "qk_norm %d", info.qk_norm);
  /* text, <image_start>, begin, a 2x2 grid (2 rows of 1 column + separator), end, <image_end> */
  static const int64_t kIds[10] = {7,      120118, 120120, 120120, 120120,
                                   120120, 120120, 120120, 120119, 8};
  static const int64_t kTypes[10] = {0, 0, 1, 1, 1, 1, 1, 1, 0, 0};
  static const int64_t kGrid[3] = {1, 4, 2};
  static const int64_t kWant[4][10] = {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9},
                                       {0, 1, 2, 0, 1, 0, 1, 7, 8, 9},
                                       {0, 1, 2, 0, 0, 1, 1, 7, 8, 9},
                                       {0, 1, 2, 0, 0, 0, 0, 7, 8, 9}};
  mrope_batch batch;
  memset(&batch, 0, sizeof(batch));
  batch.struct_size = sizeof(batch);
  batch.batch_size = 1;
  batch.seq_len = 10;
  batch.input_ids = kIds;
  batch.image_grid_thw = kGrid;
  batch.num_images = 1;
  int64_t positions[4 * 10];
  int64_t delta = -1;
  mrope_positions_out out;
  memset(&out, 0, sizeof(out));
  out.struct_size = sizeof(out);
  out.position_type = MROPE_POSITIONS_INT64;
  out.position_ids = positions;
  out.position_ids_capacity = 4 * 10;
  out.mrope_position_deltas = &delta;
  out.mrope_position_deltas_capacity = 1;
  /* A first-version batch (no mm_token_type_ids field) has no types: refused by name. */
  batch.struct_size = (uint32_t)offsetof(mrope_batch, mm_token_type_ids);
  batch.mm_token_type_ids = kTypes;
  CheckStatus(mrope_compute_positions(model, &batch, &out, message, sizeof(message)),
              MROPE_INVALID_ARGUMENT, "mrope_compute_positions(v1 batch)",
              "mm_token_type_ids is required");
  batch.struct_size = sizeof(batch);
  CheckStatus(mrope_compute_positions(model, &batch, &out, message, sizeof(message)), MROPE_OK,
              "mrope_compute_positions(hunyuan_vl)", NULL);
  Check(memcmp(positions, kWant, sizeof(positions)) == 0, "four-axis positions differ");
  Check(delta == 0, "delta %lld", (long long)delta);
  out.position_ids_capacity = 3 * 10;
  CheckStatus(mrope_compute_positions(model, &batch, &out, message, sizeof(message)),
              MROPE_INVALID_ARGUMENT, "mrope_compute_positions(three planes of room)",
              "the batch needs 40");
  mrope_model_free(model);
}

int main(int argc, char** argv) {
  on_device = argc > 1 && strcmp(argv[1], "--device") == 0;
  Case cases[] = {{"Library", TestLibrary, 0},
                  {"Models", TestModels, 0},
                  {"Overrides", TestOverrides, 0},
                  {"Positions", TestPositions, 0},
                  {"FourAxes", TestFourAxes, 0},
                  {"Kernels", TestKernels, 0},
                  {"Backward", TestBackward, 0}};
  const int num_cases = (int)(sizeof(cases) / sizeof(cases[0]));
  int failed = 0;
  for (int i = 0; i < num_cases; ++i) {
    failures_in_case = 0;
    cases[i].run();
    cases[i].failures = failures_in_case;
    printf("%s %s\n", failures_in_case ? "FAILED" : "ok    ", cases[i].name);
    failed += failures_in_case != 0;
  }
  const char* xml_path = getenv("XML_OUTPUT_FILE");
  FILE* xml = xml_path != NULL ? fopen(xml_path, "w") : NULL;
  if (xml != NULL) {
    fprintf(xml,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
            "<testsuite name=\"mrope_c_test\" tests=\"%d\" failures=\"%d\">\n",
            num_cases, failed);
    for (int i = 0; i < num_cases; ++i) {
      fprintf(xml, "<testcase name=\"%s\" classname=\"mrope_c_test\">%s</testcase>\n",
              cases[i].name, cases[i].failures ? "<failure message=\"see log\"/>" : "");
    }
    fprintf(xml, "</testsuite>\n</testsuites>\n");
    fclose(xml);
  }
  printf("%d of %d cases failed\n", failed, num_cases);
  return failed != 0;
}
