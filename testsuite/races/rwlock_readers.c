// race: no
// robust: yes
// reason: readers read under the read lock and the writer writes under the write lock: every read-unlock releases into the lock (joined, not overwritten), so the writer's lock acquires all readers' reads
// Three readers and a writer on a pthread rwlock.
#include <pthread.h>
#include <stdio.h>

static int table[8];
static long sums[3];
static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;

static void *reader(void *arg) {
  long id = (long)arg, s = 0;
  for (int round = 0; round < 50; round++) {
    pthread_rwlock_rdlock(&lock);
    for (int i = 0; i < 8; i++) s += table[i];
    pthread_rwlock_unlock(&lock);
  }
  sums[id] = s;
  return NULL;
}

static void *writer(void *arg) {
  for (int round = 0; round < 50; round++) {
    pthread_rwlock_wrlock(&lock);
    for (int i = 0; i < 8; i++) table[i] += round;
    pthread_rwlock_unlock(&lock);
  }
  return arg;
}

int main(void) {
  pthread_t r[3], w;
  for (long i = 0; i < 3; i++) pthread_create(&r[i], NULL, reader, (void *)i);
  pthread_create(&w, NULL, writer, NULL);
  for (int i = 0; i < 3; i++) pthread_join(r[i], NULL);
  pthread_join(w, NULL);
  printf("%ld\n", sums[0] + sums[1] + sums[2]);
  return 0;
}
