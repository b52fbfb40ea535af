// robust: yes
// race: no
// reason: 40 threads increment one counter with seq_cst fetch_add and write their own array slot; main reads after join
// Many threads (40), one RMW counter, per-thread plain slots.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define N 40
static atomic_int counter;
static int own[N];

static void *work(void *arg) {
  long i = (long)arg;
  own[i] = atomic_fetch_add(&counter, 1);
  return NULL;
}

int main(void) {
  pthread_t th[N];
  for (long i = 0; i < N; i++)
    pthread_create(&th[i], NULL, work, (void *)i);
  for (int i = 0; i < N; i++)
    pthread_join(th[i], NULL);
  long s = 0;
  for (int i = 0; i < N; i++)
    s += own[i];
  printf("%ld\n", s);
  return s == N * (N - 1) / 2 ? 0 : 1;
}
