// robust: yes
// race: yes
// reason: fetch_sub(relaxed) and no acquire fence: the thread that deletes has no happens-before from the other's write to the object (a data race: free vs write); the counter alone is one location (robust)
// C++: reference counting with relaxed decrements: the delete races with another thread's use.
#include <atomic>
#include <cstdio>
#include <thread>

struct Obj {
  std::atomic<int> refs{2};
  int data[4] = {0, 0, 0, 0};
};

static void release(Obj *o) {
  if (o->refs.fetch_sub(1, std::memory_order_relaxed) == 1)
    delete o;
}

int main() {
  Obj *o = new Obj;
  std::thread t1([o] {
    o->data[0] = 1;
    release(o);
  });
  std::thread t2([o] {
    o->data[1] = 2;
    release(o);
  });
  t1.join();
  t2.join();
  std::puts("ok");
  return 0;
}
