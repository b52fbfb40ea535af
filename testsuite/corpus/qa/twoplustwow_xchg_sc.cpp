// robust: yes
// race: no
// reason: 2+2W where every write is a seq_cst exchange: the SC order of the four RMWs rules out both final values being the first writes; reference model (2p2w_xchg_sc): robust
// C++ 2+2W with seq_cst exchange on std::atomic<int> members of a struct, threads started from a template function.
#include <atomic>
#include <cstdio>
#include <thread>

struct Pair {
  std::atomic<int> x{0};
  std::atomic<int> y{0};
};

template <int First, int Second>
void writer(std::atomic<int> &a, std::atomic<int> &b) {
  a.exchange(First);
  b.exchange(Second);
}

int main() {
  Pair p;
  std::thread t0(writer<1, 2>, std::ref(p.x), std::ref(p.y));
  std::thread t1(writer<1, 2>, std::ref(p.y), std::ref(p.x));
  t0.join();
  t1.join();
  std::printf("x=%d y=%d\n", p.x.load(), p.y.load());
  return 0;
}
