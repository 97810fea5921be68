/* mrope's C ABI from a CMake project: the M-RoPE positions of a Qwen2.5-VL prompt with one
 * image, and the cos/sin of its first image token. On a GPU, mrope_launch_kernel rotates q and
 * k in place with the same rotary (capi/include/mrope/mrope_c.h). */
#include <stdio.h>
#include <string.h>

#include "mrope/mrope_c.h"

enum { kTokens = 11 };

static int Fail(const char* call, int status, const char* message) {
  fprintf(stderr, "%s failed (%d): %s\n", call, status, message);
  return 1;
}

int main(void) {
  char message[256];
  mrope_model* model = NULL;
  int status = mrope_model_load("qwen2_5_vl", &model, message, sizeof(message));
  if (status != MROPE_OK) return Fail("mrope_model_load", status, message);

  /* 3 text tokens, <vision_start>, 4 image tokens (grid 1 x 4 x 4 patches), <vision_end>, 2. */
  const int64_t ids[kTokens] = {11, 12, 13, 151652, 151655, 151655, 151655, 151655, 151653, 14, 15};
  const int64_t grid[3] = {1, 4, 4};
  mrope_batch batch = {sizeof(batch)};
  batch.batch_size = 1;
  batch.seq_len = kTokens;
  batch.input_ids = ids;
  batch.image_grid_thw = grid;
  batch.num_images = 1;

  int64_t positions[3][kTokens];
  int64_t delta = 0;
  mrope_positions_out out = {sizeof(out)};
  out.position_type = MROPE_POSITIONS_INT64;
  out.position_ids = positions;
  out.position_ids_capacity = 3 * kTokens;
  out.mrope_position_deltas = &delta;
  out.mrope_position_deltas_capacity = 1;
  status = mrope_compute_positions(model, &batch, &out, message, sizeof(message));
  if (status != MROPE_OK) return Fail("mrope_compute_positions", status, message);
  const char* axes[3] = {"t", "h", "w"};
  for (int axis = 0; axis < 3; ++axis) {
    printf("%s:", axes[axis]);
    for (int i = 0; i < kTokens; ++i) printf(" %lld", (long long)positions[axis][i]);
    printf("\n");
  }
  printf("delta: %lld\n", (long long)delta);

  mrope_rotary* rotary = NULL;
  status =
      mrope_rotary_create(model, kTokens, MROPE_SINCOS_DOUBLE, &rotary, message, sizeof(message));
  if (status != MROPE_OK) return Fail("mrope_rotary_create", status, message);
  /* Token 5, the image's second patch: t = 4, h = 4, w = 5. */
  const int64_t token5[3] = {positions[0][5], positions[1][5], positions[2][5]};
  mrope_positions_view view = {token5, 1, 0, 1, 1};
  float cos[64], sin[64];
  status = mrope_rotary_cos_sin(rotary, &view, cos, sin, 64, message, sizeof(message));
  if (status != MROPE_OK) return Fail("mrope_rotary_cos_sin", status, message);
  printf("token 5 pair 0 (t) cos %.6f, pair 63 (w) cos %.6f\n", cos[0], cos[63]);

  mrope_rotary_free(rotary);
  mrope_model_free(model);
  return 0;
}
