// robust: no
// race: yes
// reason: MP with relaxed flag: no happens-before, the plain payload read races with its write, and the relaxed flag/data pair is not robust
// C++: message passing with relaxed atomics guarding a plain long payload.
#include <atomic>
#include <cstdio>

#include <thread>

static long payload;
static std::atomic<bool> ready{false};
static std::atomic<int> seq{0};

int main() {
  std::thread w([] {
    payload = 5;
    seq.store(1, std::memory_order_relaxed); // pyrsan: stale
    ready.store(true, std::memory_order_relaxed);
  });
  std::thread r([] {
    if (ready.load(std::memory_order_relaxed)) {
      int s = seq.load(std::memory_order_relaxed); // pyrsan: violation
      std::printf("%d %ld\n", s, payload);
    }
  });
  w.join();
  r.join();
  return 0;
}
