// race: no
// robust: yes
// opt: -O0 -O1
// runs: 3
// reason: __cxa_guard_release is a release on the guard that the inlined acquire load of the guard (or __cxa_guard_acquire) of every later caller reads, so the constructor's writes happen before every use (C++11 [stmt.dcl]/4); an aborted initialisation (the constructor threw) is released the same way before the next attempt
// Function-local statics first used by four threads at once, one of whose constructors throws on its first attempt.
#include <pthread.h>
#include <cstdio>
#include <stdexcept>

struct Table {
  long cells[16];
  Table() {
    for (long i = 0; i < 16; i++) cells[i] = i * i;
  }
};

static Table &table() {
  static Table t;
  return t;
}

/* Only one thread runs a constructor at a time (the guard), so the plain counter is not
 * raced on. The first attempt throws and its thread gives up, so another thread initialises
 * after the abort and writes what the aborted attempt wrote. */
static int attempts;
struct Flaky {
  long value[4];
  Flaky() {
    for (long &v : value) v = attempts;
    if (attempts++ == 0) throw std::runtime_error("first attempt");
  }
};

static Flaky &flaky() {
  static Flaky f;
  return f;
}

static void *work(void *arg) {
  long sum = 0;
  for (int k = 0; k < 100; k++) sum += table().cells[k % 16];
  try {
    sum += flaky().value[3];
  } catch (const std::runtime_error &) {
  }
  *(long *)arg = sum;
  return nullptr;
}

int main() {
  pthread_t t[4];
  long sums[4];
  for (int i = 0; i < 4; i++) pthread_create(&t[i], nullptr, work, &sums[i]);
  for (int i = 0; i < 4; i++) pthread_join(t[i], nullptr);
  std::printf("%ld\n", sums[0] + sums[1] + sums[2] + sums[3]);
  return 0;
}
