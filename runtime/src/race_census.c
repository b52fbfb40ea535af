/* The census of the race detector's memory (verbosity=1, at exit; docs/design/races.md §17):
 * the shadow (mapped, backed), the overflow blocks and their lanes, the locations' S_x (coded
 * with offsets, thin, dense), the shared bases, the threads' clocks, and malloc's totals (the
 * coded S_x and the bases are malloc's). It only reads: the records under their list's lock
 * (location.c rsan_loc_for_each_made), the threads under theirs. */
#include <malloc.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "rsan_race.h"

typedef struct race_census {
  uint64_t coded, thin, coded_bytes, thin_bytes, dense, dense_bytes, sparse, sparse_bytes;
  uint64_t threads, thread_bytes;
  uint64_t entries, nonzero, fit8, sparse8, sparse4; /* offsets: entries, nonzero; S_x by kind */
} race_census;

/* what v holds besides its rsan_vc (a coded block's bytes as
 * malloc gave them; a dense array's cap entries), *thin set for a thin coded clock */
uint64_t rsan_vc_bytes(const rsan_vc *v, int *thin) {
  *thin = 0;
  if (v->cap != RSAN_VC_CODED) return (uint64_t)v->cap * sizeof(uint64_t);
  const rsan_vcoded *c = (const rsan_vcoded *)(const void *)v->e;
  *thin = c->thin ? 1 : c->sp ? 2 : 0;
  return malloc_usable_size((void *)c);
}
/* a coded clock with offsets: its entries, those that differ from its base, its largest offset */
void rsan_vc_coded_stats(const rsan_vc *v, uint32_t *n, uint32_t *nonzero, uint32_t *maxoff) {
  const rsan_vcoded *c = (const rsan_vcoded *)(const void *)v->e;
  *n = v->n;
  *nonzero = *maxoff = 0;
  if (c->thin || c->sp) return;
  for (uint32_t u = 0; u < v->n; u++) {
    *nonzero += c->off[u] != 0;
    if (c->off[u] > *maxoff) *maxoff = c->off[u];
  }
}
static void count_loc(rsan_loc *l, void *arg) {
  race_census *c = arg;
  if (l->cls == RSAN_LOC_COMPACT || l->retired) return; /* a compact record has S_x = ⊥ */
  if (!l->S.e) return;
  int thin;
  uint64_t b = rsan_vc_bytes(&l->S, &thin);
  if (l->S.cap != RSAN_VC_CODED) c->dense++, c->dense_bytes += b;
  else if (thin == 1) c->thin++, c->thin_bytes += b;
  else if (thin == 2) c->sparse++, c->sparse_bytes += b;
  else {
    c->coded++, c->coded_bytes += b;
    uint32_t n, nz, mx;
    rsan_vc_coded_stats(&l->S, &n, &nz, &mx);
    c->entries += n, c->nonzero += nz, c->fit8 += mx < 256;
    c->sparse8 += nz * 8 <= n, c->sparse4 += nz * 4 <= n;
  }
}

static void count_thread(rsan_thread *t, void *arg) {
  race_census *c = arg;
  int thin;
  c->threads++;
  c->thread_bytes += rsan_vc_bytes(&t->C, &thin) + rsan_vc_bytes(&t->R, &thin) + rsan_vc_bytes(&t->A, &thin);
}

/* the backed bytes of [p, p + n) (page-aligned p) */
static uint64_t resident(const void *p, size_t n) {
  static unsigned char vec[4096];
  uint64_t r = 0;
  for (size_t off = 0; off < n; off += sizeof vec * 4096) {
    size_t len = n - off < sizeof vec * 4096 ? n - off : sizeof vec * 4096;
    if (mincore((char *)p + off, len, vec) != 0) return 0;
    for (size_t k = 0; k < (len + 4095) / 4096; k++) r += (uint64_t)(vec[k] & 1) * 4096;
  }
  return r;
}
static uint64_t resident_of(const void *p, size_t n) {
  uintptr_t lo = (uintptr_t)p & ~(uintptr_t)4095;
  return resident((const void *)lo, n + ((uintptr_t)p - lo));
}

/* malloc's heap sampled at every thread join (verbosity >= 1; a join is rare): the sample with
 * the largest heap (bytes in use + free in its arenas), the free bytes then, and the peak RSS
 * so far then (the census at exit sees the heap after main's last accesses freed what they
 * dropped; this shows what the free blocks were while the program ran) */
static struct {
  rsan_spin lock;
  uint64_t heap, free, maxrss_kb, n;
} sample;
void rsan_race_census_sample(void) {
  if (rsan_flag.verbosity < 1) return;
  struct mallinfo2 mi = mallinfo2();
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  rsan_spin_lock(&sample.lock);
  sample.n++;
  if (mi.uordblks + mi.fordblks > sample.heap) {
    sample.heap = mi.uordblks + mi.fordblks;
    sample.free = mi.fordblks;
    sample.maxrss_kb = (uint64_t)ru.ru_maxrss;
  }
  rsan_spin_unlock(&sample.lock);
}

void rsan_race_print_census(void) {
  race_census c = {0};
  rsan_loc_for_each_made(count_loc, &c);
  rsan_thread_for_each(count_thread, &c);
  uint64_t smap, sres, bases, bbytes, chunks = 0, unfit, rebase, over, over_nz, sparse;
  rsan_vc_census_made(&unfit, &rebase, &over, &over_nz, &sparse);
  rsan_shadow_census(&smap, &sres);
  rsan_vc_census(&bases, &bbytes);
  uint32_t taken = __atomic_load_n(&rsan_race_ovf_taken, __ATOMIC_RELAXED);
  for (uint32_t i = 0; i < taken; i++)
    for (int j = 1; j < RSAN_LANE_CHUNKS; j++) chunks += rsan_ovf_blocks[i].lanes[j] != NULL;
  char buf[560];
  int n = snprintf(buf, sizeof buf,
                   "pyrsan: race shadow: %llu bytes mapped, %llu backed; overflow blocks %u taken (%llu "
                   "bytes backed), lanes %llu bytes backed, lane chunks %llu (%llu bytes)\n",
                   (unsigned long long)smap, (unsigned long long)sres, taken,
                   (unsigned long long)resident_of(rsan_ovf_blocks, sizeof rsan_ovf_blocks),
                   (unsigned long long)resident_of(rsan_race_lanes, sizeof rsan_race_lanes),
                   (unsigned long long)chunks, (unsigned long long)(chunks * sizeof(rsan_lane_chunk)));
  if (n > 0) (void)!write(2, buf, (size_t)n);
  n = snprintf(buf, sizeof buf,
               "pyrsan: race clocks: S_x coded with offsets %llu (%llu bytes), thin %llu (%llu bytes), "
               "sparse %llu (%llu bytes; %llu made), dense %llu (%llu bytes); bases %llu live (%llu bytes); "
               "threads %llu (%llu bytes of clocks)\n",
               (unsigned long long)c.coded, (unsigned long long)c.coded_bytes, (unsigned long long)c.thin,
               (unsigned long long)c.thin_bytes, (unsigned long long)c.sparse,
               (unsigned long long)c.sparse_bytes, (unsigned long long)sparse, (unsigned long long)c.dense,
               (unsigned long long)c.dense_bytes, (unsigned long long)bases, (unsigned long long)bbytes,
               (unsigned long long)c.threads, (unsigned long long)c.thread_bytes);
  if (n > 0) (void)!write(2, buf, (size_t)n);
  n = snprintf(
      buf, sizeof buf,
      "pyrsan: race offsets: %llu entries, %llu of them not 0; S_x whose offsets fit 8 bits %llu, "
      "with at most n/8 not 0 %llu, n/4 %llu; bases made %llu (offsets did not fit) + %llu (rebased; "
      "%llu of them over a full base, with %llu offsets not 0 in all)\n",
      (unsigned long long)c.entries, (unsigned long long)c.nonzero, (unsigned long long)c.fit8,
      (unsigned long long)c.sparse8, (unsigned long long)c.sparse4, (unsigned long long)unfit,
      (unsigned long long)rebase, (unsigned long long)over, (unsigned long long)over_nz);
  if (n > 0) (void)!write(2, buf, (size_t)n);
  struct mallinfo2 mi = mallinfo2();
  uint64_t now, peak, peak_bases;
  rsan_vc_census_peak(&now, &peak, &peak_bases);
  n = snprintf(
      buf, sizeof buf,
      "pyrsan: race malloc: %llu bytes in use, %llu free in its arenas, %llu mmapped; coded S_x and bases "
      "%llu bytes now, %llu at most (%llu of them bases)\n",
      (unsigned long long)mi.uordblks, (unsigned long long)mi.fordblks, (unsigned long long)mi.hblkhd,
      (unsigned long long)now, (unsigned long long)peak, (unsigned long long)peak_bases);
  if (n > 0) (void)!write(2, buf, (size_t)n);
  rsan_spin_lock(&sample.lock);
  n = snprintf(buf, sizeof buf,
               "pyrsan: race malloc at the joins: %llu samples; the largest heap %llu bytes, %llu of them "
               "free then (peak RSS so far %llu KB)\n",
               (unsigned long long)sample.n, (unsigned long long)sample.heap, (unsigned long long)sample.free,
               (unsigned long long)sample.maxrss_kb);
  rsan_spin_unlock(&sample.lock);
  if (n > 0) (void)!write(2, buf, (size_t)n);
}

/* tests (testsuite/runtime/test_race_sx_floor.py): malloc's bytes of the coded S_x and bases live */
RSAN_EXPORT uint64_t __rsan_test_coded_bytes(void) {
  uint64_t now, peak, peak_bases;
  rsan_vc_census_peak(&now, &peak, &peak_bases);
  return now;
}
/* tests (testsuite/runtime/test_race_base_over.py): the bases made over a full base so far */
RSAN_EXPORT uint64_t __rsan_test_bases_over(void) {
  uint64_t unfit, rebase, over, over_nz, sparse;
  rsan_vc_census_made(&unfit, &rebase, &over, &over_nz, &sparse);
  return over;
}
/* tests (testsuite/runtime/test_race_sparse.py): the sparse S_x made so far */
RSAN_EXPORT uint64_t __rsan_test_sparse_made(void) {
  uint64_t unfit, rebase, over, over_nz, sparse;
  rsan_vc_census_made(&unfit, &rebase, &over, &over_nz, &sparse);
  return sparse;
}
