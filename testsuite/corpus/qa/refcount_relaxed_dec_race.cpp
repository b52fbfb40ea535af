// robust: yes
// race: yes
// reason: the reference count is dropped with relaxed fetch_sub and the last owner has an acquire fence but nothing released: the other owner's plain write of its result slot is not hb-before the last owner's read and destruction (a fence acquire needs a release on the other side); the count is the only atomic location, so robust
// Intrusive reference counting with a relaxed decrement (the release half missing): two owners write their slots, the last one sums and deletes.
#include <atomic>
#include <cstdio>
#include <thread>

struct Obj {
  std::atomic<int> refs{2};
  int slot[2] = {0, 0};
};

static int result;

static void drop(Obj *o, int id) {
  o->slot[id] = id + 10;
  if (o->refs.fetch_sub(1, std::memory_order_relaxed) == 1) {
    std::atomic_thread_fence(std::memory_order_acquire);
    result = o->slot[0] + o->slot[1];
    delete o;
  }
}

int main() {
  Obj *o = new Obj;
  std::thread a(drop, o, 0), b(drop, o, 1);
  a.join();
  b.join();
  std::printf("%d\n", result);
}
