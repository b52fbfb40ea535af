/* The census of the location records (verbosity=1, at exit; docs/design/clocks.md §15, §19,
 * §21): how many records each size class holds live, which of their lines are empty, the bytes
 * of what they point to (grown windows, evicted-fact tables, history rings, S_x), and the bytes
 * of records made against those live. It walks every record made (location.c
 * rsan_loc_for_each_made) and only reads them. */
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rsan_internal.h"

typedef struct census {
  uint64_t live[RSAN_LOC_NCLS], bytes, made;
  uint64_t w_bot, unwritten, no_ev, grown, ev_narrow;
  uint64_t fcaps[6]; /* fcap 4 .. 128 */
  uint64_t sat[4];   /* bytes: grown windows, evicted-fact tables, history rings, S_x */
  /* the location clocks Msc, Wsc, W by kind (⊥, inline, shared, an array of their own), the
   * arrays' malloc bytes, and the snapshots they refer to (each counted once, by a mark in its
   * refs line's padding: distinct snapshots and their malloc bytes) */
  uint64_t ck[3][4], arr_bytes, snaps, snap_bytes;
  uint64_t stale, stale_snaps, stale_bytes; /* Msc while msc_wsc (Wsc stands for it): held only there */
} census;

static uint8_t census_gen; /* the mark of this census (snapshots marked by an older one count again) */
/* p's malloc bytes when this census has not counted it yet (then marked), else 0 */
static uint64_t snap_new(rsan_snap *p) {
  if ((uint8_t)p->refs_line[sizeof(char *)] == census_gen) return 0;
  p->refs_line[sizeof(char *)] = (char)census_gen; /* (padding no one else reads: clock.c snap_alloc) */
  char *raw;
  memcpy(&raw, p->refs_line, sizeof raw);
  return malloc_usable_size(raw);
}
static void count_snap(census *c, rsan_snap *p) {
  uint64_t b = snap_new(p);
  c->snaps += b != 0;
  c->snap_bytes += b;
}
static void count_clock(census *c, int which, const rsan_clk *k) {
  if (rsan_clk_shared(k)) {
    c->ck[which][2]++;
    count_snap(c, k->u.s.snap);
  } else if (k->cap > RSAN_CLK_INLINE) {
    c->ck[which][3]++;
    c->arr_bytes += malloc_usable_size(k->u.x.ext);
  } else {
    c->ck[which][k->ver ? 1 : 0]++;
  }
}

static void count(rsan_loc *l, void *arg) {
  census *c = arg;
  size_t size = rsan_loc_size(l->cls);
  c->made += size;
  if (l->cls == RSAN_LOC_COMPACT) { /* W = Wsc = ⊥, never written, no table, window inline */
    if (l->retired != RSAN_LOC_LIVE_COMPACT) return;
    c->live[l->cls]++;
    c->bytes += size;
    c->w_bot++;
    c->unwritten++;
    c->no_ev++;
    rsan_loc_compact *k = (rsan_loc_compact *)l;
    c->ck[0][k->msc_kind == RSAN_MSC_SNAP ? 2 : k->msc_kind == RSAN_MSC_INLINE]++;
    if (k->msc_kind == RSAN_MSC_SNAP) count_snap(c, k->msc_snap);
    c->ck[1][0]++, c->ck[2][0]++;
    return;
  }
  if (l->retired) return;
  c->live[l->cls]++;
  c->bytes += size;
  c->w_bot += !rsan_loc_w(l)->ver;
  c->unwritten += !rsan_loc_w(l)->ver && !rsan_loc_wsc(l)->ver && !l->hist;
  c->no_ev += !l->ev;
  c->grown += l->fcap > RSAN_FACTS;
  if (l->fcap > RSAN_FACTS) c->sat[0] += (uint64_t)l->fcap * sizeof(rsan_fact);
  c->fcaps[__builtin_ctz(l->fcap) - 2]++;
  c->sat[1] += rsan_loc_ev_bytes(l);
  c->ev_narrow += l->ev && rsan_loc_evnarrow(l);
  c->sat[2] += (uint64_t)rsan_hist_len(l) * sizeof(rsan_hist);
  if (l->S.cap != RSAN_VC_CODED) c->sat[3] += (uint64_t)l->S.cap * sizeof(uint64_t);
  if (l->msc_wsc) c->stale++; /* its snapshot counted after every other holder (stale_msc) */
  else count_clock(c, 0, &l->Msc);
  count_clock(c, 1, rsan_loc_wsc(l));
  count_clock(c, 2, rsan_loc_w(l));
}

/* the snapshots that only stale Msc clocks hold (every other holder's marked already) */
static void stale_msc(rsan_loc *l, void *arg) {
  census *c = arg;
  if (l->cls == RSAN_LOC_COMPACT || l->retired || !l->msc_wsc || !rsan_clk_shared(&l->Msc)) return;
  uint64_t b = snap_new(l->Msc.u.s.snap);
  c->stale_snaps += b != 0;
  c->stale_bytes += b;
}

void rsan_loc_print_census(void) {
  census c = {0};
  if (!++census_gen) census_gen = 1;
  rsan_loc_for_each_made(count, &c);
  rsan_loc_for_each_made(stale_msc, &c);
  char buf[480];
  int n = snprintf(
      buf, sizeof buf,
      "pyrsan: location records: %llu live (%llu bytes): %llu full (%u bytes each), %llu without W "
      "(%u), %llu without W and Wsc (%u), %llu compact (%u); W = bottom in %llu, never written in "
      "%llu, no evicted-fact table in %llu, grown window in %llu\n",
      (unsigned long long)(c.live[0] + c.live[1] + c.live[2] + c.live[3]), (unsigned long long)c.bytes,
      (unsigned long long)c.live[RSAN_LOC_FULL], (unsigned)rsan_loc_size(RSAN_LOC_FULL),
      (unsigned long long)c.live[RSAN_LOC_NOW], (unsigned)rsan_loc_size(RSAN_LOC_NOW),
      (unsigned long long)c.live[RSAN_LOC_COLD], (unsigned)rsan_loc_size(RSAN_LOC_COLD),
      (unsigned long long)c.live[RSAN_LOC_COMPACT], (unsigned)rsan_loc_size(RSAN_LOC_COMPACT),
      (unsigned long long)c.w_bot, (unsigned long long)c.unwritten, (unsigned long long)c.no_ev,
      (unsigned long long)c.grown);
  if (n > 0) (void)!write(2, buf, (size_t)n);
  n = snprintf(
      buf, sizeof buf,
      "pyrsan: location satellites: grown windows %llu bytes (fcap 4..128: %llu %llu %llu %llu %llu "
      "%llu), evicted-fact tables %llu (%llu narrow), history rings %llu (keys %llu), S_x arrays %llu "
      "(not coded)\n",
      (unsigned long long)c.sat[0], (unsigned long long)c.fcaps[0], (unsigned long long)c.fcaps[1],
      (unsigned long long)c.fcaps[2], (unsigned long long)c.fcaps[3], (unsigned long long)c.fcaps[4],
      (unsigned long long)c.fcaps[5], (unsigned long long)c.sat[1], (unsigned long long)c.ev_narrow,
      (unsigned long long)c.sat[2], (unsigned long long)rsan_hist_key_bytes(), (unsigned long long)c.sat[3]);
  if (n > 0) (void)!write(2, buf, (size_t)n);
  n = snprintf(buf, sizeof buf,
               "pyrsan: location records: %llu promotions, %llu made compact; %llu bytes of records made, "
               "%llu of them free\n",
               (unsigned long long)rsan_loc_promotions(), (unsigned long long)rsan_loc_shrinks(),
               (unsigned long long)c.made, (unsigned long long)(c.made - c.bytes));
  if (n > 0) (void)!write(2, buf, (size_t)n);
  n = snprintf(buf, sizeof buf,
               "pyrsan: location clocks (bottom / inline / shared / array): Msc %llu / %llu / %llu / %llu, "
               "Wsc %llu / %llu / %llu / %llu, W %llu / %llu / %llu / %llu; arrays %llu bytes, snapshots "
               "referred to %llu (%llu bytes); stale Msc (Msc = Wsc) %llu, holding %llu snapshots no other "
               "holds (%llu bytes)\n",
               (unsigned long long)c.ck[0][0], (unsigned long long)c.ck[0][1], (unsigned long long)c.ck[0][2],
               (unsigned long long)c.ck[0][3], (unsigned long long)c.ck[1][0], (unsigned long long)c.ck[1][1],
               (unsigned long long)c.ck[1][2], (unsigned long long)c.ck[1][3], (unsigned long long)c.ck[2][0],
               (unsigned long long)c.ck[2][1], (unsigned long long)c.ck[2][2], (unsigned long long)c.ck[2][3],
               (unsigned long long)c.arr_bytes, (unsigned long long)c.snaps, (unsigned long long)c.snap_bytes,
               (unsigned long long)c.stale, (unsigned long long)c.stale_snaps,
               (unsigned long long)c.stale_bytes);
  if (n > 0) (void)!write(2, buf, (size_t)n);
  rsan_slab_print_census();
}
