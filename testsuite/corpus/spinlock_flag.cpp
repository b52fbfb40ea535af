// robust: yes
// race: no
// reason: an atomic_flag test_and_set(acquire) / clear(release) spinlock protects the plain counter; lock-protected critical sections are totally ordered
// C++: std::atomic_flag spinlock around a plain shared counter, threads as lambdas.
#include <atomic>
#include <cstdio>
#include <thread>

static std::atomic_flag lock = ATOMIC_FLAG_INIT;
static long shared_counter;

static void work() {
  for (int i = 0; i < 3; i++) {
    while (lock.test_and_set(std::memory_order_acquire)) {
    }
    shared_counter++;
    lock.clear(std::memory_order_release);
  }
}

int main() {
  std::thread a(work), b([] { work(); });
  a.join();
  b.join();
  std::printf("%ld\n", shared_counter);
  return 0;
}
