// robust: yes
// race: no
// reason: double-checked initialisation with fences: relaxed load + acquire fence on the fast path, release fence + relaxed store under the mutex; a fast-path reader that sees the pointer synchronises with the initialiser through the fence pair
// C++: double-checked initialisation through atomic_thread_fence(acquire / release) and relaxed pointer accesses.
#include <atomic>
#include <cstdio>
#include <mutex>
#include <thread>

struct Table {
  int v[3] = {1, 2, 3};
};
static std::atomic<Table *> table{nullptr};
static std::mutex m;

static Table *get() {
  Table *t = table.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (!t) {
    std::lock_guard<std::mutex> g(m);
    t = table.load(std::memory_order_relaxed);
    if (!t) {
      t = new Table;
      std::atomic_thread_fence(std::memory_order_release);
      table.store(t, std::memory_order_relaxed);
    }
  }
  return t;
}

int main() {
  int s[2] = {0, 0};
  std::thread a([&] { s[0] = get()->v[0] + get()->v[2]; });
  std::thread b([&] { s[1] = get()->v[1]; });
  a.join();
  b.join();
  std::printf("%d %d\n", s[0], s[1]);
  delete table.load();
  return 0;
}
