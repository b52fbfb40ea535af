// robust: yes
// race: no
// reason: one thread sets a bit OTHER of a status word (relaxed fetch_or), then a flag go (relaxed), writes the plain payload and sets the bit READY (release fetch_or); the other waits for go, then waits (acquire) until READY is set: a masked wait `while (!(load(&status) & READY))`. After reading go it may still read the initial 0 of status, older than the OTHER write it knows of: a stale read, but one without READY, a failed attempt of the wait; the only write with READY is the release RMW, which no read can see before it is the newest; the read that sees it orders the payload. Both then take a CK-style packed ticket lock (high half: next ticket, low half: now serving) whose waiter compares the low half with its ticket
// Masked waits: a bit of a status word, and the low half of a packed ticket word.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define READY 0x1u
#define OTHER 0x100u
static atomic_uint status;
static atomic_int go;
static atomic_uint ticket;   /* next ticket << 16 | now serving */
static int payload, seen;
static long counter;

static void ticket_lock(void) {
  unsigned me = atomic_fetch_add_explicit(&ticket, 0x10000u, memory_order_relaxed) >> 16;
  while ((atomic_load_explicit(&ticket, memory_order_acquire) & 0xffffu) != me) {
  }
}

static void ticket_unlock(void) {
  atomic_fetch_add_explicit(&ticket, 1u, memory_order_release);
}

static void *producer(void *arg) {
  (void)arg;
  atomic_fetch_or_explicit(&status, OTHER, memory_order_relaxed);
  atomic_store_explicit(&go, 1, memory_order_relaxed);
  payload = 42;
  atomic_fetch_or_explicit(&status, READY, memory_order_release);
  ticket_lock();
  counter++;
  ticket_unlock();
  return NULL;
}

static void *consumer(void *arg) {
  (void)arg;
  while (!atomic_load_explicit(&go, memory_order_relaxed)) {
  }
  while (!(atomic_load_explicit(&status, memory_order_acquire) & READY)) {
  }
  seen = payload;
  ticket_lock();
  counter++;
  ticket_unlock();
  return NULL;
}

int main(void) {
  pthread_t a, c;
  pthread_create(&a, NULL, producer, NULL);
  pthread_create(&c, NULL, consumer, NULL);
  pthread_join(a, NULL);
  pthread_join(c, NULL);
  printf("%d %ld\n", seen, counter);
  return 0;
}
