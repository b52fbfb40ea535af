// options: -std=c++20
// robust: no
// race: no
// reason: each thread sets its own std::atomic_flag (release test_and_set) and then tests the other's (acquire test): store buffering, both tests may return false; the later wait/notify hand-off (wait(false) returns after reading true) is robust
// C++20: atomic_flag test_and_set / test in a store-buffering shape, then a wait/notify hand-off.
#include <atomic>
#include <cstdio>
#include <thread>

static std::atomic_flag fa, fb, go;
static bool saw_a, saw_b;
static int payload;

int main() {
  std::thread t1([] {
    fa.test_and_set(std::memory_order_release);
    saw_b = fb.test(std::memory_order_acquire); // pyrsan: violation
    payload = 42;
    go.test_and_set(std::memory_order_release);
    go.notify_one();
  });
  std::thread t2([] {
    fb.test_and_set(std::memory_order_release);
    saw_a = fa.test(std::memory_order_acquire); // pyrsan: violation
    go.wait(false, std::memory_order_acquire);
    std::printf("%d\n", payload);
  });
  t1.join();
  t2.join();
  std::printf("%d %d\n", saw_a, saw_b);
  return 0;
}
