// robust: yes
// race: yes
// reason: a seqlock whose data is plain: the reader's plain reads of the two fields run concurrently with the writer's plain writes (the sequence check only discards torn values afterwards), a data race under C11 in the interleavings where the reader reads while the writer writes; the sequence counter is the only atomic location (seq_cst), so robust
// Seqlock with plain data fields (the textbook version that is racy in C11).
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_uint seq;
static int d1, d2;
static int sum;

static void *writer(void *arg) {
  (void)arg;
  for (int i = 1; i <= 3; i++) {
    atomic_fetch_add(&seq, 1);
    d1 = i;
    d2 = -i;
    atomic_fetch_add(&seq, 1);
  }
  return NULL;
}

static void *reader(void *arg) {
  (void)arg;
  for (int i = 0; i < 3; i++) {
    unsigned s0, s1;
    int a, b;
    do {
      s0 = atomic_load(&seq);
      a = d1;
      b = d2;
      s1 = atomic_load(&seq);
    } while ((s0 & 1) || s0 != s1);
    sum += a + b;
  }
  return NULL;
}

int main(void) {
  pthread_t w, r;
  pthread_create(&w, NULL, writer, NULL);
  pthread_create(&r, NULL, reader, NULL);
  pthread_join(w, NULL);
  pthread_join(r, NULL);
  printf("%d\n", sum);
  return 0;
}
