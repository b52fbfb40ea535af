// robust: no
// race: no
// reason: SB where one thread uses seq_cst and the other relaxed accesses: the relaxed thread has no SC fence between its store and load, so its load may miss the seq_cst store
// C++: store buffering, one thread seq_cst (default order), the other relaxed.
#include <atomic>
#include <cstdio>
#include <thread>

static std::atomic<int> x{0}, y{0};

int main() {
  int r0 = -1, r1 = -1;
  std::thread a([&] {
    x = 1; // pyrsan: stale
    r0 = y; // pyrsan: violation
  });
  std::thread b([&] {
    y.store(1, std::memory_order_relaxed); // pyrsan: stale
    r1 = x.load(std::memory_order_relaxed); // pyrsan: violation
  });
  a.join();
  b.join();
  std::printf("%d %d\n", r0, r1);
  return 0;
}
