// robust: yes
// race: yes
// reason: the fast path reads the instance pointer with a relaxed load: a thread that finds it non-null reads the object's plain fields without synchronising with the constructor's writes (a data race); the pointer is the only atomic apart from the mutex and a stale null only takes the mutex, so the atomics stay SC
// Double-checked locking whose fast path is a relaxed load: the object's fields race with its construction.
#include <atomic>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

struct Config {
  int level;
  long seed;
  Config() : level(3), seed(42) {}
};

template <typename T> class Lazy {
  std::atomic<T *> ptr_{nullptr};
  std::mutex m_;

public:
  T &get() {
    T *p = ptr_.load(std::memory_order_relaxed);
    if (!p) {
      std::lock_guard<std::mutex> g(m_);
      p = ptr_.load(std::memory_order_relaxed);
      if (!p) {
        p = new T();
        ptr_.store(p, std::memory_order_release);
      }
    }
    return *p;
  }
};

static Lazy<Config> cfg;
static std::atomic<long> total{0};

int main() {
  std::vector<std::thread> ts;
  for (int i = 0; i < 4; i++)
    ts.emplace_back([] { total.fetch_add(cfg.get().level + cfg.get().seed, std::memory_order_relaxed); });
  for (auto &t : ts) t.join();
  std::printf("%ld\n", total.load());
  return 0;
}
