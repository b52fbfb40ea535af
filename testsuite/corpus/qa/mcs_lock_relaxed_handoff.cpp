// robust: yes
// race: yes
// reason: the MCS hand-off stores locked=false with relaxed order: the successor's acquire spin reads it but does not synchronise with it, so the predecessor's increment of the plain counter and the successor's are unordered (a data race); the atomics alone have no non-SC outcome (a stale locked only spins, a stale next only leads to the failing CAS on tail)
// MCS lock template whose hand-off is a relaxed store: the protected plain counter races.
#include <atomic>
#include <cstdio>
#include <thread>

struct QNode {
  std::atomic<QNode *> next{nullptr};
  std::atomic<bool> locked{false};
};

template <typename Node> class McsLock {
  std::atomic<Node *> tail_{nullptr};
  static thread_local Node me_;

public:
  void lock() {
    Node *me = &me_;
    me->next.store(nullptr, std::memory_order_relaxed);
    me->locked.store(true, std::memory_order_relaxed);
    Node *prev = tail_.exchange(me, std::memory_order_acq_rel);
    if (prev) {
      prev->next.store(me, std::memory_order_release);
      while (me->locked.load(std::memory_order_acquire)) {
      }
    }
  }
  void unlock() {
    Node *me = &me_;
    Node *succ = me->next.load(std::memory_order_acquire);
    if (!succ) {
      Node *expected = me;
      if (tail_.compare_exchange_strong(expected, nullptr, std::memory_order_release, std::memory_order_relaxed))
        return;
      while (!(succ = me->next.load(std::memory_order_acquire))) {
      }
    }
    succ->locked.store(false, std::memory_order_relaxed);
  }
};
template <typename Node> thread_local Node McsLock<Node>::me_;

static McsLock<QNode> mtx;
static long counter;

int main() {
  std::thread ts[3];
  for (auto &t : ts)
    t = std::thread([] {
      for (int i = 0; i < 3; i++) {
        mtx.lock();
        counter++;
        mtx.unlock();
      }
    });
  for (auto &t : ts) t.join();
  std::printf("%ld\n", counter);
  return counter == 9 ? 0 : 1;
}
