// robust: no
// race: no
// functions: thread1 thread2
// reason: store buffering with release stores and acquire loads: both loads may read 0 (fr;po;fr;po cycle), RC20 allows it, SC does not
// C++ store buffering: std::atomic<int> with explicit orders, std::thread running free functions.
// Checked with the defaults of `pyrsan run` (no runs field).
#include <atomic>
#include <cstdio>
#include <thread>

std::atomic<int> x{0}, y{0};
int r1, r2;

void thread1() {
  x.store(1, std::memory_order_release);
  r1 = y.load(std::memory_order_acquire); // pyrsan: violation
}

void thread2() {
  y.store(1, std::memory_order_release);
  r2 = x.load(std::memory_order_acquire); // pyrsan: violation
}

int main() {
  std::thread a(thread1);
  std::thread b(thread2);
  a.join();
  b.join();
  std::printf("r1=%d r2=%d\n", r1, r2);
  return 0;
}
