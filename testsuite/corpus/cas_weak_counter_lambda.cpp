// robust: yes
// race: no
// reason: every access to the counter is an RMW or a CAS on one location (coherence), the result read after join
// C++: std::thread lambdas increment one counter with a compare_exchange_weak loop (relaxed failure).
#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

int main() {
  std::atomic<unsigned> counter{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 3; t++)
    ts.emplace_back([&counter] {
      for (int i = 0; i < 3; i++) {
        unsigned old = counter.load(std::memory_order_relaxed);
        while (!counter.compare_exchange_weak(old, old + 1, std::memory_order_acq_rel,
                                              std::memory_order_relaxed)) {
        }
      }
    });
  for (auto &t : ts)
    t.join();
  std::printf("%u\n", counter.load());
  return counter.load() == 9 ? 0 : 1;
}
