// robust: yes
// race: no
// reason: a 16-byte std::atomic<Pair> (count, version) updated by compare_exchange_weak retry loops in two threads (libatomic calls or cmpxchg16b, modelled as seq_cst RMWs by the runtime's lock-based fallback), read with load() after join: all its accesses are seq_cst on one location
// C++ 16-byte std::atomic of a struct, CAS-incremented by two threads (linked with -latomic).
// options: -latomic
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <thread>

struct Pair {
  std::int64_t count;
  std::uint64_t version;
};

static std::atomic<Pair> pair{Pair{0, 0}};

static void bump(int times) {
  for (int i = 0; i < times; i++) {
    Pair old = pair.load();
    Pair next;
    do {
      next = Pair{old.count + 1, old.version + 1};
    } while (!pair.compare_exchange_weak(old, next));
  }
}

int main() {
  std::thread a(bump, 3), b(bump, 3);
  a.join();
  b.join();
  Pair p = pair.load();
  std::printf("%lld %llu\n", (long long)p.count, (unsigned long long)p.version);
  return 0;
}
