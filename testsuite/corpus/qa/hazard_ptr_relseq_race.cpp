// robust: yes
// race: yes
// reason: the reader clears its hazard with a release store but publishes the next one with a relaxed store: when the reclaimer's acquire read of the hazard takes that relaxed store (a new node, so it deletes the old one), it synchronises with nothing (C++20: a later relaxed store of the same thread no longer continues the release sequence), and the reader's reads of the old node race with the delete. ThreadSanitizer (C++11 release sequences) misses it; the fences still make the protect/retire handshake itself correct
// Hazard pointers whose protecting store is relaxed: the use of a node races with its delete under C++20 release sequences.
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
      hazard.store(p, std::memory_order_relaxed);
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
