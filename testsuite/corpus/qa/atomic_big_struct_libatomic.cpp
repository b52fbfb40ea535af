// robust: yes
// race: no
// options: -latomic
// reason: std::atomic of a 24-byte struct is not lock-free: libatomic implements its load and store with a lock (one per address); the writer publishes a new triple with a release store, the reader takes it with an acquire load, and the plain log entry written before the store is read after the load that sees the triple; one atomic location, and the plain data is ordered by the release/acquire pair
// std::atomic<Triple> (24 bytes, through libatomic) publishing a plain log entry: one writer, one reader.
#include <atomic>
#include <cstdio>
#include <string>
#include <thread>

struct Triple {
  long a, b, c;
};
static std::atomic<Triple> cur{Triple{0, 0, 0}};
static char log_entry[32];

int main() {
  std::thread w([] {
    std::snprintf(log_entry, sizeof log_entry, "set 1 2 3");
    cur.store(Triple{1, 2, 3}, std::memory_order_release);
  });
  std::thread r([] {
    Triple t;
    do {
      t = cur.load(std::memory_order_acquire);
    } while (t.a == 0);
    std::string copy(log_entry);
    std::printf("%ld %s\n", t.a + t.b + t.c, copy.c_str());
  });
  w.join();
  r.join();
  return 0;
}
