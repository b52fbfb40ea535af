// robust: yes
// race: yes
// reason: a parallel histogram over 65536 relaxed atomic bins (fetch_add: RMWs on each bin are totally ordered, nothing else reads them until after the joins: robust), but the per-thread "max bin" is merged into a plain global without synchronisation by both workers: a data race on max_bin
// Histogram of 65,536 atomic bins (a big global array: reports name it by offset), two workers, a racy plain maximum.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define BINS 65536
static atomic_uint bins[BINS];
static unsigned max_bin;

static void *work(void *arg) {
  unsigned seed = (unsigned)(long)arg, local_max = 0;
  for (int i = 0; i < 200; i++) {
    seed = seed * 1103515245u + 12345u;
    unsigned b = (seed >> 8) % BINS;
    atomic_fetch_add_explicit(&bins[b], 1, memory_order_relaxed);
    if (b > local_max) local_max = b;
  }
  if (local_max > max_bin) max_bin = local_max;
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, work, (void *)1L);
  pthread_create(&b, NULL, work, (void *)2L);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  unsigned long total = 0;
  for (int i = 0; i < BINS; i++) total += atomic_load_explicit(&bins[i], memory_order_relaxed);
  printf("%lu %u\n", total, max_bin);
  return total == 400 ? 0 : 1;
}
