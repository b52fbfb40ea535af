// robust: yes
// race: no
// reason: the object is initialised before a release store of its pointer; the reader's acquire load (consume) that sees it sees the fields
// C++: publishing a heap object through std::atomic<Node*> with release / consume.
#include <atomic>
#include <cstdio>
#include <thread>

struct Node {
  int a, b;
  double c;
};

static std::atomic<Node *> head{nullptr};

int main() {
  std::thread w([] {
    Node *n = new Node;
    n->a = 1;
    n->b = 2;
    n->c = 3.0;
    head.store(n, std::memory_order_release);
  });
  int s = 0;
  std::thread r([&s] {
    Node *n;
    while (!(n = head.load(std::memory_order_consume))) {
    }
    s = n->a + n->b + (int)n->c;
  });
  w.join();
  r.join();
  delete head.load();
  std::printf("%d\n", s);
  return s == 6 ? 0 : 1;
}
