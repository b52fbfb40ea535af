// std::atomic and std::thread: the totals are deterministic, the interleaving is not.
#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

std::atomic<long> counter{0};
std::atomic<unsigned> cas_total{0};
std::atomic<int *> slot{nullptr};
std::atomic<bool> ready{false};
int cells[4];

static void worker(int id, int n) {
  for (int i = 0; i < n; i++) {
    counter.fetch_add(1, std::memory_order_relaxed);                // n RMWs
    unsigned seen = cas_total.load(std::memory_order_acquire);      // n loads (+ retries)
    while (!cas_total.compare_exchange_weak(seen, seen + 2, std::memory_order_acq_rel,
                                            std::memory_order_acquire)) {
    }
  }
  slot.store(&cells[id], std::memory_order_release);
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

int main() {
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; t++) threads.emplace_back(worker, t, 1000);
  for (auto &t : threads) t.join();
  ready.store(true);
  int *p = slot.exchange(nullptr);
  std::printf("counter=%ld cas_total=%u slot_set=%d ready=%d\n", counter.load(), cas_total.load(),
              p != nullptr, (int)ready.load(std::memory_order_relaxed));
  return 0;
}
