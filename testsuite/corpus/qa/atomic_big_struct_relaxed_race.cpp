// robust: yes
// race: yes
// options: -latomic
// reason: the triple is stored with relaxed order: the reader's acquire load that sees it does not synchronise with it (C11; libatomic's lock is an implementation detail), so the plain log entry written before the store races with the reader's read of it
// std::atomic<Triple> (libatomic) stored relaxed: the plain log entry published with it races.
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
    cur.store(Triple{1, 2, 3}, std::memory_order_relaxed);
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
