#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
uint32_t rmw_umin(uint32_t *, uint32_t); uint32_t rmw_uinc_wrap(uint32_t *, uint32_t);
uint16_t rmw_udec_wrap(uint16_t *, uint16_t); uint64_t rmw_usub_cond(uint64_t *, uint64_t);
uint8_t rmw_usub_sat(uint8_t *, uint8_t); float rmw_fmax(float *, float);
double rmw_fmin(double *, double); float rmw_fmaximum(float *, float);
double rmw_fminimum(double *, double); void *rmw_xchg_ptr(void **, void *);
uint8_t load_unordered(uint8_t *); void store_flag(bool *, bool); bool load_flag(bool *) __asm__("load$flag");
void *cas_ptr(void **, void *, void *); uint8_t cas_i8(uint8_t *, uint8_t, uint8_t);
int main(void) {
  uint32_t u = 7; uint16_t h = 0; uint64_t q = 5; uint8_t b = 3; float f = 1.5f; double d = -2.0;
  bool flag = false; int cell[2]; void *vp = &cell[0];
  for (int i = 0; i < 3; i++) {
    printf("umin %u ", rmw_umin(&u, 5 - i)); printf("uinc %u ", rmw_uinc_wrap(&u, 6));
    printf("udec %u ", rmw_udec_wrap(&h, 4)); printf("usubc %llu ", (unsigned long long)rmw_usub_cond(&q, 2));
    printf("usubs %u ", rmw_usub_sat(&b, 2)); printf("fmax %.2f ", rmw_fmax(&f, 1.0f + i));
    printf("fmin %.2f ", rmw_fmin(&d, -1.0 - i)); printf("fmaximum %.2f ", rmw_fmaximum(&f, 2.5f));
    printf("fminimum %.2f ", rmw_fminimum(&d, -2.5));
    printf("xchg %d ", (int)((int *)rmw_xchg_ptr(&vp, &cell[i % 2]) - cell));
    printf("ld %u ", load_unordered(&b)); store_flag(&flag, i % 2 == 0); printf("flag %d ", load_flag(&flag));
    printf("casp %d ", (int)((int *)cas_ptr(&vp, &cell[0], &cell[1]) - cell));
    printf("cas8 %u\n", cas_i8(&b, 1, 9));
  }
  printf("final %u %u %llu %u %.2f %.2f %d\n", u, h, (unsigned long long)q, b, f, d, flag);
  return 0;
}
