// options: -std=c++20
// robust: yes
// race: no
// reason: C++20 atomic wait/notify: the consumer waits until the flag changes from 0, the release store / acquire load pair orders the payload
// C++20: std::atomic<int>::wait / notify_one handoff of a plain payload.
#include <atomic>
#include <cstdio>
#include <thread>

static int payload;
static std::atomic<int> flag{0};

int main() {
  std::thread prod([] {
    payload = 99;
    flag.store(1, std::memory_order_release);
    flag.notify_one();
  });
  std::thread cons([] {
    flag.wait(0, std::memory_order_acquire);
    std::printf("%d\n", payload);
  });
  prod.join();
  cons.join();
  return 0;
}
