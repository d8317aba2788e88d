/* The stand-ins' element types (fake-libcublasLt.c, fake-libcudnn.c): an
   element of f32, f16 or bf16 read as a float and a float stored as one,
   rounded to nearest even, as the libraries document for their narrow
   types. Each stand-in passes its own library's codes for them. */
#include <stdint.h>
#include <string.h>

/* Element i of m, of f32 (f16 and bf16 false), f16 or bf16. */
static inline float fake_load(const void *m, int f16, int bf16, uint64_t i) {
  if (f16)
    return (float)((const _Float16 *)m)[i];
  if (bf16) {
    uint32_t bits = (uint32_t)((const uint16_t *)m)[i] << 16;
    float v;
    memcpy(&v, &bits, 4);
    return v;
  }
  return ((const float *)m)[i];
}

/* Stores v as element i of m, rounded to nearest even. */
static inline void fake_store(void *m, int f16, int bf16, uint64_t i, float v) {
  if (f16) {
    ((_Float16 *)m)[i] = (_Float16)v;
  } else if (bf16) {
    uint32_t bits;
    memcpy(&bits, &v, 4);
    bits += 0x7fff + ((bits >> 16) & 1);
    ((uint16_t *)m)[i] = (uint16_t)(bits >> 16);
  } else {
    ((float *)m)[i] = v;
  }
}

/* The bytes of one element. */
static inline int fake_element_bytes(int f16, int bf16) { return f16 || bf16 ? 2 : 4; }
