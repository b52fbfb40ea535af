// robust: yes
// race: no
// reason: ticket lock template: tickets come from a relaxed fetch_add (RMWs read the latest value), the owner waits with an acquire load until now_serving equals its ticket, and unlock publishes the next ticket with a release store; a stale now_serving only spins; the plain histogram updated in the critical sections is ordered by the release/acquire hand-off
// Ticket spinlock as a C++ template over the counter type, guarding a plain histogram array, four threads (built at -O2 by the tests too).
#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

template <typename C> class TicketLock {
  std::atomic<C> next_{0}, serving_{0};

public:
  void lock() {
    C me = next_.fetch_add(1, std::memory_order_relaxed);
    while (serving_.load(std::memory_order_acquire) != me) {
    }
  }
  void unlock() { serving_.store(serving_.load(std::memory_order_relaxed) + 1, std::memory_order_release); }
};

static TicketLock<unsigned short> lk;
static int hist[8];

int main() {
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; t++)
    ts.emplace_back([t] {
      for (int i = 0; i < 2; i++) {
        lk.lock();
        hist[(t + i) % 8]++;
        lk.unlock();
      }
    });
  for (auto &t : ts) t.join();
  int s = 0;
  for (int v : hist) s += v;
  std::printf("%d\n", s);
  return s == 8 ? 0 : 1;
}
