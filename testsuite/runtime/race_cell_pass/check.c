/* The pass over a granule's 4 main cells as lane masks (rsan_race.h rsan_race_cell_masks,
 * rsan_race_cells_decide; docs/design/races.md §14) against the scalar pass it replaced,
 * transcribed below: every outcome (done, the scan, a mark, take, the cell to store into) and
 * the cell it names must be the scalar pass's, on random granules of cells drawn to collide
 * (this thread's and another's, atomic and plain, marks, freed cells, empty ones, a few
 * epochs and byte masks). Built by test_race_cell_pass.py for AVX2 and for the baseline.
 * Prints the number of mismatches, then how often each outcome was seen. */
#include "rsan_race.h"

#include <stdio.h>

/* The scalar pass (sessions 7-13), its returns as rsan_race_cells_decide's. */
static int scalar_pass(const rsan_vc *C, const uint64_t *seen, uint64_t cur, uint32_t mask, int wr, int *kp,
                       uint64_t *markp) {
  const uint64_t slot_bits = (uint64_t)TID_MASK << W_TID_SHIFT, low = (1ull << W_CLOCK_SHIFT) - 1;
  int k = -1, same = 0;
  uint64_t mark = 0;
  for (int i = 0; i < RSAN_SHADOW_CELLS; i++) {
    uint64_t w = seen[i];
    if (!w) break;
    if (w == cur) return 1;
    uint64_t x = w ^ cur;
    if (x & slot_bits) {
      if (!(w & W_ATOMIC)) {
        if ((w_mask(w) & mask) && ((w & W_WRITE) || wr) && w_clock(w) > rsan_vc_get(C, w_tid(w))) return 0;
        continue;
      }
      if (w_tid(w) == MARK_TID) mark = w;
      continue;
    }
    if (!(w & W_ATOMIC)) continue;
    if (!(x & low)) {
      k = i, same = 1;
      continue;
    }
    uint32_t cm = w_mask(w);
    int cw = (w & W_WRITE) != 0;
    if (!(x >> W_CLOCK_SHIFT) && !(mask & ~cm) && cw >= wr) return 1;
    if (!same && !(cm & ~mask) && (wr || !cw)) k = i;
  }
  *kp = k;
  if (mark) {
    *markp = mark;
    return 2;
  }
  return k < 0 ? 3 : 4;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}
static const uint32_t masks[] = {0x01, 0x03, 0x0f, 0xf0, 0xff, 0x0c, 0x3c};

static uint64_t cell(uint32_t me, uint64_t epoch) {
  switch (rnd() % 12) {
  case 0: return 0;
  case 1: return W_FREED;
  case 2: return w_pack(rnd() % 3, MARK_TID, 0, 0, 1) | (rnd() & 3ull) << 62; /* a mark, its flags */
  default: {
    uint32_t tid = rnd() % 3 ? me : 1 + rnd() % 3;
    uint64_t e = epoch - 1 + rnd() % 3;
    return w_pack(e, tid, masks[rnd() % 7], rnd() & 1, rnd() % 4 != 0);
  }
  }
}

int main(void) {
  uint64_t Ce[8] = {0};
  rsan_vc C = {8, 8, Ce};
  long bad = 0, seen_ret[5] = {0}, seen_k[4] = {0}, plain_checked = 0;
  for (long n = 0; n < 3000000; n++) {
    uint32_t me = 2, mask = masks[rnd() % 7];
    int wr = rnd() & 1;
    uint64_t epoch = 5, cur = w_pack(epoch, me, mask, wr, 1);
    for (int u = 0; u < 8; u++) Ce[u] = 3 + rnd() % 4; /* another thread's cell at 4..6: ordered or not */
    uint64_t s[4];
    for (int i = 0; i < 4; i++) s[i] = rnd() % 4 == 0 ? cur : cell(me, epoch);
    if (rnd() % 3 == 0) s[rnd() % 4] = 0; /* an empty cell before used ones */
    int k1 = -7, k2 = -7;
    uint64_t m1 = 7, m2 = 7;
    int r1 = scalar_pass(&C, s, cur, mask, wr, &k1, &m1);
    rsan_v4u v;
    __builtin_memcpy(&v, s, sizeof v);
    rsan_cell_masks m = rsan_race_cell_masks(v, cur);
    int r2 = rsan_race_cells_decide(&C, v, cur, m, &k2, &m2);
    if (m.plain) plain_checked++;
    int same = r1 == r2 && (r1 < 2 || k1 == k2) && (r1 != 2 || m1 == m2);
    if (!same && bad++ < 5)
      printf("cells %llx %llx %llx %llx cur %llx: scalar %d k %d, lanes %d k %d\n", (unsigned long long)s[0],
             (unsigned long long)s[1], (unsigned long long)s[2], (unsigned long long)s[3],
             (unsigned long long)cur, r1, k1, r2, k2);
    seen_ret[r1]++;
    if (r1 >= 2 && k1 >= 0) seen_k[k1]++;
  }
  printf("%ld\n", bad);
  printf("%ld %ld %ld %ld %ld %ld %ld %ld %ld %ld\n", seen_ret[0], seen_ret[1], seen_ret[2], seen_ret[3],
         seen_ret[4], seen_k[0], seen_k[1], seen_k[2], seen_k[3], plain_checked);
  return 0;
}
