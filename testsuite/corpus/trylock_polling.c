// robust: yes
// race: no
// reason: main polls each lock with its try-variant while the worker holds it (after the go flag); every access to data is under the mutex, and the join orders the rest
// Polling loops on pthread_mutex_trylock, pthread_spin_trylock and pthread_rwlock_trywrlock while another thread holds the lock.
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_spinlock_t sl;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static atomic_int go;
static int data;

static void *holder(void *p) {
  pthread_mutex_lock(&m);
  pthread_spin_lock(&sl);
  pthread_rwlock_rdlock(&rw);
  atomic_store(&go, 1);
  data = 1;
  pthread_rwlock_unlock(&rw);
  pthread_spin_unlock(&sl);
  pthread_mutex_unlock(&m);
  return p;
}

int main(void) {
  pthread_spin_init(&sl, 0);
  pthread_t x;
  pthread_create(&x, 0, holder, 0);
  while (!atomic_load(&go))
    ;
  while (pthread_mutex_trylock(&m) == EBUSY)
    ;
  while (pthread_spin_trylock(&sl) == EBUSY)
    ;
  while (pthread_rwlock_trywrlock(&rw) != 0)
    ;
  int d = data;
  pthread_rwlock_unlock(&rw);
  pthread_spin_unlock(&sl);
  pthread_mutex_unlock(&m);
  pthread_join(x, 0);
  printf("%d\n", d);
  return d == 1 ? 0 : 1;
}
