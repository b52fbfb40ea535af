// robust: yes
// race: no
// reason: hazard pointers with the store-load fences: the reader publishes its hazard (relaxed), fences seq_cst and re-reads head (acquire); the reclaimer swaps head (acq_rel), fences seq_cst and reads the hazard (acquire): by the fences one of them sees the other (no store buffering), so a node is deleted only when no reader can still use it; the reader clears its hazard with a release store and publishes the next hazard with a release store too, so whichever later hazard value the reclaimer's acquire read takes, the reader's use of the old node happens before the delete (C++20 release sequences: a relaxed store would not carry the earlier release)
// Hazard-pointer protected config object (C++, heap nodes deleted by the writer), one reader, one writer; every hazard store is a release.
#include <atomic>
#include <cstdio>
#include <thread>

struct Node {
  int a, b;
};
static std::atomic<Node *> head;
static std::atomic<Node *> hazard;
static long seen;

static void reader() {
  for (int i = 0; i < 3; i++) {
    Node *p;
    do {
      p = head.load(std::memory_order_relaxed);
      hazard.store(p, std::memory_order_release);
      std::atomic_thread_fence(std::memory_order_seq_cst);
    } while (head.load(std::memory_order_acquire) != p);
    seen += p->a + p->b;
    hazard.store(nullptr, std::memory_order_release);
  }
}

static void writer() {
  for (int i = 1; i <= 2; i++) {
    Node *n = new Node{i, -i};
    Node *old = head.exchange(n, std::memory_order_acq_rel);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    while (hazard.load(std::memory_order_acquire) == old) {
    }
    delete old;
  }
}

int main() {
  head.store(new Node{0, 0}, std::memory_order_relaxed);
  std::thread r(reader), w(writer);
  r.join();
  w.join();
  delete head.load(std::memory_order_relaxed);
  std::printf("%ld\n", seen);
  return 0;
}
