// robust: no
// race: no
// options: -std=c++20
// reason: the program alone is robust (one atomic location, always SC), but libstdc++ 12 implements wait/notify with a waiter count: notify_one reads it with a seq_cst load after give's fetch_add, and a returning wait decrements it with a release fetch_sub before take reads sem again; the two form store buffering (fetch_add sem; load waiters || fetch_sub waiters; load sem) with one side not seq_cst, which RC20 allows: take's relaxed load may read a value of sem older than SC allows (harmless here: a stale 0 waits again, a stale 1 makes the CAS fail)
// A binary semaphore from std::atomic<int>::wait/notify_one guarding a plain list, three threads.
#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

static std::atomic<int> sem{1};
static int items[64];
static int n;

static void take() {
  for (;;) {
    int c = sem.load(std::memory_order_relaxed); // pyrsan: violation
    if (c == 0) {
      sem.wait(0, std::memory_order_relaxed);
      continue;
    }
    if (sem.compare_exchange_weak(c, c - 1, std::memory_order_acquire, std::memory_order_relaxed)) return;
  }
}

static void give() {
  sem.fetch_add(1, std::memory_order_release);
  sem.notify_one();
}

static void work(int id) {
  for (int i = 0; i < 4; i++) {
    take();
    items[n++] = id;
    give();
  }
}

int main() {
  std::vector<std::thread> ts;
  for (int i = 0; i < 3; i++) ts.emplace_back(work, i);
  for (auto &t : ts) t.join();
  std::printf("%d\n", n);
}
