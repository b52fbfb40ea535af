// robust: yes
// race: no
// reason: readers read under a read lock, the writer writes under the write lock; a pthread barrier orders phase 1 writes before phase 2 reads; a pthread spinlock protects the sum
// pthread_rwlock, pthread_spinlock and pthread_barrier together.
#include <pthread.h>
#include <stdio.h>

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t sl;
static pthread_barrier_t bar;
static int table[4];
static int phase1[3];
static long sum;

static void *work(void *arg) {
  long i = (long)arg;
  phase1[i] = (int)i + 1;
  pthread_barrier_wait(&bar);
  int s = phase1[(i + 1) % 3];
  if (i == 0) {
    pthread_rwlock_wrlock(&rw);
    table[1] = 5;
    pthread_rwlock_unlock(&rw);
  } else {
    pthread_rwlock_rdlock(&rw);
    s += table[1];
    pthread_rwlock_unlock(&rw);
  }
  pthread_spin_lock(&sl);
  sum += s;
  pthread_spin_unlock(&sl);
  return NULL;
}

int main(void) {
  pthread_spin_init(&sl, 0);
  pthread_barrier_init(&bar, NULL, 3);
  pthread_t th[3];
  for (long i = 0; i < 3; i++)
    pthread_create(&th[i], NULL, work, (void *)i);
  for (int i = 0; i < 3; i++)
    pthread_join(th[i], NULL);
  printf("%ld\n", sum);
  return 0;
}
