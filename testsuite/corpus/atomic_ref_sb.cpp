// options: -std=c++20
// robust: no
// race: no
// reason: SB through std::atomic_ref on two plain ints, release stores and acquire loads
// C++20: store buffering via std::atomic_ref.
#include <atomic>
#include <cstdio>
#include <thread>

alignas(4) static int x, y;

int main() {
  int r0 = -1, r1 = -1;
  std::thread a([&] {
    std::atomic_ref<int>(x).store(1, std::memory_order_release); // pyrsan: stale
    r0 = std::atomic_ref<int>(y).load(std::memory_order_acquire); // pyrsan: violation
  });
  std::thread b([&] {
    std::atomic_ref<int>(y).store(1, std::memory_order_release); // pyrsan: stale
    r1 = std::atomic_ref<int>(x).load(std::memory_order_acquire); // pyrsan: violation
  });
  a.join();
  b.join();
  std::printf("%d %d\n", r0, r1);
  return 0;
}
