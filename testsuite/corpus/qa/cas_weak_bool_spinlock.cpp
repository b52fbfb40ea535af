// robust: yes
// race: no
// reason: a test-and-set lock through std::atomic<bool>::compare_exchange_weak (acquire, the expected value reset to false by reference after each failure) and a release store; the critical sections' plain counter is ordered by the lock; a failed CAS only retries
// Two threads, two acquisitions each, a C++ spin lock as a user writes it.
#include <atomic>
#include <cstdio>
#include <thread>

static std::atomic<bool> locked{false};
static long counter;

static void lock() {
  bool expected = false;
  while (!locked.compare_exchange_weak(expected, true, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
    expected = false;
  }
}

static void unlock() { locked.store(false, std::memory_order_release); }

static void work() {
  for (int i = 0; i < 2; i++) {
    lock();
    counter++;
    unlock();
  }
}

int main() {
  std::thread a(work), b(work);
  a.join();
  b.join();
  std::printf("%ld\n", counter);
  return counter == 4 ? 0 : 1;
}
