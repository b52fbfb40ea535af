// robust: yes
// race: no
// reason: a bit-field and an atomic member are distinct memory locations (C11 3.14), and bit-fields separated by a zero-width bit-field are too; each is written by one thread only
// Bit-fields beside atomics: one thread writes a bit-field, another writes the atomic neighbour and a bit-field after a :0 separator.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

struct mixed {
  atomic_char flag;
  unsigned char lo : 4;
  unsigned char : 0;
  unsigned char hi : 4;
  _Atomic short counter;
};
static struct mixed m;

static void *t1(void *arg) {
  (void)arg;
  for (int i = 0; i < 3; i++)
    m.lo = (unsigned char)(m.lo + 1);
  atomic_fetch_add_explicit(&m.counter, 1, memory_order_relaxed);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  for (int i = 0; i < 3; i++) {
    atomic_store_explicit(&m.flag, (char)i, memory_order_relaxed);
    m.hi = (unsigned char)(m.hi + 2);
  }
  atomic_fetch_add_explicit(&m.counter, 1, memory_order_relaxed);
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, t1, NULL);
  pthread_create(&b, NULL, t2, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("%d %d %d\n", m.lo, m.hi, (int)m.counter);
  return 0;
}
