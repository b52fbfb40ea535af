// robust: yes
// race: no
// reason: each thread fills its own _Thread_local buffer (no sharing), then one thread publishes the address of its thread-local buffer with a release store and waits until the reader acknowledges with release (it reads the ack with acquire) before exiting, so the buffer is alive and its writes are hb-before the reader's reads (acquire); the other thread's TLS is never shared
// Thread-local buffers, one of which is lent to another thread through an atomic pointer and an acknowledgement.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static _Thread_local int buf[16];
static _Thread_local int calls;
static _Atomic(int *) lent;
static atomic_int ack;

static void fill(int base) {
  calls++;
  for (int i = 0; i < 16; i++) buf[i] = base + i;
}

static void *lender(void *arg) {
  (void)arg;
  fill(100);
  atomic_store_explicit(&lent, buf, memory_order_release);
  while (!atomic_load_explicit(&ack, memory_order_acquire)) {
  }
  return (void *)(long)calls;
}

static void *borrower(void *arg) {
  (void)arg;
  fill(0);
  int *p;
  while ((p = atomic_load_explicit(&lent, memory_order_acquire)) == NULL) {
  }
  long sum = 0;
  for (int i = 0; i < 16; i++) sum += p[i] + buf[i];
  atomic_store_explicit(&ack, 1, memory_order_release);
  return (void *)sum;
}

int main(void) {
  pthread_t a, b;
  void *ra, *rb;
  pthread_create(&a, NULL, lender, NULL);
  pthread_create(&b, NULL, borrower, NULL);
  pthread_join(a, &ra);
  pthread_join(b, &rb);
  printf("%ld %ld %d\n", (long)ra, (long)rb, calls);
  return 0;
}
