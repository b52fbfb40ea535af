// options: -std=c++20
// robust: yes
// race: no
// reason: C++20 atomic_flag::test_and_set(release) / wait(false, acquire): the waiter returns after reading the set flag, which synchronises with the setter, so the plain payload is ordered
// C++20: std::atomic_flag wait / notify_all handoff.
#include <atomic>
#include <cstdio>
#include <thread>

static std::atomic_flag flag;
static int payload;

int main() {
  std::thread waiter([] {
    flag.wait(false, std::memory_order_acquire);
    std::printf("%d\n", payload);
  });
  std::thread setter([] {
    payload = 11;
    flag.test_and_set(std::memory_order_release);
    flag.notify_all();
  });
  waiter.join();
  setter.join();
  return 0;
}
